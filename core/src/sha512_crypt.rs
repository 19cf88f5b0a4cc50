//! SHA-512 (FIPS 180-4) and the `$6$` password hash glibc's crypt(3) makes from it
//! (Ulrich Drepper's "Unix crypt using SHA-256 and SHA-512"), so a plain-text password
//! from cloud-config can go into /etc/shadow without chpasswd; and cloud-init's rule for
//! telling a hash from a plain-text password.

use core::fmt;

use crate::out::Out;
use crate::text::Decimal;

/// The longest salt the scheme uses; a longer one is cut, as glibc cuts it.
pub const SALT_LIMIT: usize = 16;
pub const DEFAULT_ROUNDS: u32 = 5000;
pub const MIN_ROUNDS: u32 = 1000;
pub const MAX_ROUNDS: u32 = 999_999_999;
/// `$6$rounds=999999999$`, 16 bytes of salt, `$` and 86 bytes of hash.
pub const HASH_LIMIT: usize = 123;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CryptError {
    /// The salt is empty or holds a byte outside `./0-9A-Za-z`.
    BadSalt,
    /// The caller's buffer, whose size is the limit, is too small for the hash.
    TooLarge { limit: usize },
}

impl fmt::Display for CryptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CryptError::BadSalt => f.write_str("the salt is empty or holds a byte outside ./0-9A-Za-z"),
            CryptError::TooLarge { limit } => write!(f, "the password hash would be larger than {limit} bytes", limit = Decimal(*limit as u64)),
        }
    }
}

/// `$6$[rounds=N$]salt$hash`. `Some(rounds)` is clamped to MIN_ROUNDS..=MAX_ROUNDS and
/// written out (even when it is the default), as glibc does; `None` means 5000, unwritten.
pub fn hash(password: &[u8], salt: &[u8], rounds: Option<u32>, out: &mut [u8]) -> Result<usize, CryptError> {
    let salt = &salt[..salt.len().min(SALT_LIMIT)];
    if salt.is_empty() || !salt.iter().all(|&b| b == b'.' || b == b'/' || b.is_ascii_alphanumeric()) {
        return Err(CryptError::BadSalt);
    }
    let digest = crypt_digest(password, salt, rounds.map_or(DEFAULT_ROUNDS, |n| n.clamp(MIN_ROUNDS, MAX_ROUNDS)));
    let mut encoded = [0u8; 86];
    for group in 0..21 {
        let (a, b, c) = (digest[group], digest[group + 21], digest[group + 42]);
        let (b2, b1, b0) = match group % 3 {
            0 => (a, b, c),
            1 => (b, c, a),
            _ => (c, a, b),
        };
        encode_24(b2, b1, b0, &mut encoded[group * 4..group * 4 + 4]);
    }
    encode_24(0, 0, digest[63], &mut encoded[84..]);

    let mut writer = Out::new(out);
    let too_large = |full: crate::out::Full| CryptError::TooLarge { limit: full.limit };
    writer.put(b"$6$").map_err(too_large)?;
    if let Some(rounds) = rounds {
        writer.put(b"rounds=").map_err(too_large)?;
        writer.put_decimal(rounds.clamp(MIN_ROUNDS, MAX_ROUNDS).into()).map_err(too_large)?;
        writer.put(b"$").map_err(too_large)?;
    }
    writer.put_all(&[salt, b"$", &encoded]).map_err(too_large)?;
    Ok(writer.len())
}

/// The scheme's steps 1 to 21, named as the specification numbers them.
fn crypt_digest(password: &[u8], salt: &[u8], rounds: u32) -> [u8; 64] {
    // Fed through `update`, not `chain`: each `chain` moves the whole state (a copy).
    let mut alternate = Sha512::new();
    alternate.update(password);
    alternate.update(salt);
    alternate.update(password);
    let alternate = alternate.finish();

    let mut a = Sha512::new();
    a.update(password);
    a.update(salt);
    feed_repeated(&mut a, &alternate, password.len());
    let mut length = password.len();
    while length > 0 {
        a.update(if length & 1 == 1 { &alternate } else { password });
        length >>= 1;
    }
    let a = a.finish();

    let mut dp = Sha512::new();
    password.iter().for_each(|_| dp.update(password));
    let dp = dp.finish();

    let mut ds = Sha512::new();
    (0..16 + usize::from(a[0])).for_each(|_| ds.update(salt));
    let ds = ds.finish();
    let s = &ds[..salt.len()];

    let mut c = a;
    for round in 0..rounds {
        let mut ctx = Sha512::new();
        let odd = round & 1 == 1;
        if odd {
            feed_repeated(&mut ctx, &dp, password.len());
        } else {
            ctx.update(&c);
        }
        if round % 3 != 0 {
            ctx.update(s);
        }
        if round % 7 != 0 {
            feed_repeated(&mut ctx, &dp, password.len());
        }
        if odd {
            ctx.update(&c);
        } else {
            feed_repeated(&mut ctx, &dp, password.len());
        }
        c = ctx.finish();
    }
    c
}

/// `len` bytes of `block` repeated: the scheme's byte sequences P and B, never stored.
fn feed_repeated(ctx: &mut Sha512, block: &[u8; 64], mut len: usize) {
    while len > 0 {
        let n = len.min(64);
        ctx.update(&block[..n]);
        len -= n;
    }
}

/// Four characters of crypt's base64, least significant six bits first.
fn encode_24(b2: u8, b1: u8, b0: u8, out: &mut [u8]) {
    const ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut word = u32::from(b2) << 16 | u32::from(b1) << 8 | u32::from(b0);
    for slot in out {
        *slot = ALPHABET[(word & 0x3f) as usize];
        word >>= 6;
    }
}

/// cloud-init's test (cc_set_passwords) for a `chpasswd` entry that is already hashed:
/// the regular expression `\$(1|2a|2y|5|6)(\$.+){2}` matches at the start, and there is
/// no ':'. So `$id$` then two more `$`-led runs, each at least one byte other than a
/// newline (Python's `.`).
pub fn is_hashed(text: &[u8]) -> bool {
    let rest = [&b"$1"[..], b"$2a", b"$2y", b"$5", b"$6"].iter().find_map(|id| text.strip_prefix(*id));
    let Some(rest) = rest.and_then(|rest| rest.strip_prefix(b"$")) else { return false };
    let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    // A '$' after at least one byte, with at least one byte after it.
    let second_run = line.iter().enumerate().any(|(i, &b)| b == b'$' && i >= 1 && i + 1 < line.len());
    second_run && !text.contains(&b':')
}

/// SHA-512, fed in pieces.
pub struct Sha512 {
    state: [u64; 8],
    block: [u8; 128],
    filled: usize,
    total: u64,
}

impl Default for Sha512 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sha512 {
    // The crypt scheme starts six hashes: one call, not six copies of the state's stores.
    #[inline(never)]
    pub fn new() -> Self {
        Sha512 {
            state: [
                0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
                0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
            ],
            block: [0; 128],
            filled: 0,
            total: 0,
        }
    }

    pub fn chain(mut self, bytes: &[u8]) -> Self {
        self.update(bytes);
        self
    }

    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total = self.total.wrapping_add(bytes.len() as u64);
        while !bytes.is_empty() {
            let n = (128 - self.filled).min(bytes.len());
            self.block[self.filled..self.filled + n].copy_from_slice(&bytes[..n]);
            self.filled += n;
            bytes = &bytes[n..];
            if self.filled == 128 {
                compress(&mut self.state, &self.block);
                self.filled = 0;
            }
        }
    }

    /// The digest. The hasher is spent after it; taken by reference so that a caller's
    /// 208-byte state is not copied in.
    pub fn finish(&mut self) -> [u8; 64] {
        let bits = u128::from(self.total) * 8;
        self.update(&[0x80]);
        while self.filled != 112 {
            self.update(&[0]);
        }
        self.update(&bits.to_be_bytes());
        let mut digest = [0u8; 64];
        for (chunk, word) in digest.chunks_exact_mut(8).zip(self.state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        digest
    }
}

const K: [u64; 80] = [
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc, 0x3956c25bf348b538,
    0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242, 0x12835b0145706fbe,
    0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2, 0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
    0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5, 0x983e5152ee66dfab,
    0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
    0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df, 0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
    0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8, 0x19a4c116b8d2d0c8, 0x1e376c085141ab53,
    0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b, 0xca273eceea26619c,
    0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba, 0x0a637dc5a2c898a6,
    0x113f9804bef90dae, 0x1b710b35131c471b, 0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
];

fn compress(state: &mut [u64; 8], block: &[u8; 128]) {
    let mut w = [0u64; 80];
    for (word, chunk) in w.iter_mut().zip(block.chunks_exact(8)) {
        *word = u64::from_be_bytes(chunk.try_into().unwrap_or([0; 8]));
    }
    for t in 16..80 {
        let s0 = w[t - 15].rotate_right(1) ^ w[t - 15].rotate_right(8) ^ (w[t - 15] >> 7);
        let s1 = w[t - 2].rotate_right(19) ^ w[t - 2].rotate_right(61) ^ (w[t - 2] >> 6);
        w[t] = w[t - 16].wrapping_add(s0).wrapping_add(w[t - 7]).wrapping_add(s1);
    }
    let mut v = *state;
    for (k, w) in K.iter().zip(w) {
        let [a, b, c, d, e, f, g, h] = v;
        let s1 = e.rotate_right(14) ^ e.rotate_right(18) ^ e.rotate_right(41);
        let choice = (e & f) ^ (!e & g);
        let t1 = h.wrapping_add(s1).wrapping_add(choice).wrapping_add(*k).wrapping_add(w);
        let s0 = a.rotate_right(28) ^ a.rotate_right(34) ^ a.rotate_right(39);
        let majority = (a & b) ^ (a & c) ^ (b & c);
        v = [t1.wrapping_add(s0).wrapping_add(majority), a, b, c, d.wrapping_add(t1), e, f, g];
    }
    for (word, new) in state.iter_mut().zip(v) {
        *word = word.wrapping_add(new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn crypt(password: &[u8], salt: &[u8], rounds: Option<u32>) -> String {
        let mut out = [0u8; HASH_LIMIT];
        let n = hash(password, salt, rounds, &mut out).unwrap();
        String::from_utf8(out[..n].to_vec()).unwrap()
    }

    #[test]
    fn sha512_vectors() {
        assert_eq!(
            hex(&Sha512::new().chain(b"abc").finish()),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
        assert_eq!(
            hex(&Sha512::new().finish()),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce\
             47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        );
        // Two blocks, and the same message fed byte by byte.
        let long = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
        let expected = "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018\
                        501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909";
        assert_eq!(hex(&Sha512::new().chain(long).finish()), expected);
        let mut pieces = Sha512::new();
        long.iter().for_each(|b| pieces.update(&[*b]));
        assert_eq!(hex(&pieces.finish()), expected);
    }

    #[test]
    fn drepper_vectors() {
        assert_eq!(
            crypt(b"Hello world!", b"saltstring", None),
            "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"
        );
        assert_eq!(
            crypt(b"Hello world!", b"saltstringsaltstring", Some(10000)),
            "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."
        );
        assert_eq!(
            crypt(b"This is just a test", b"toolongsaltstring", Some(5000)),
            "$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0"
        );
        assert_eq!(
            crypt(b"a very much longer text to encrypt.  This one even stretches over morethan one line.", b"anotherlongsaltstring", Some(1400)),
            "$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1"
        );
        assert_eq!(
            crypt(b"we have a short salt string but not a short password", b"short", Some(77777)),
            "$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0"
        );
        assert_eq!(
            crypt(b"a short string", b"asaltof16chars..", Some(123456)),
            "$6$rounds=123456$asaltof16chars..$BtCwjqMJGx5hrJhZywWvt0RLE8uZ4oPwcelCjmw2kSYu.Ec6ycULevoBK25fs2xXgMNrCzIMVcgEJAstJeonj1"
        );
        assert_eq!(
            crypt(b"the minimum number is still observed", b"roundstoolow", Some(10)),
            "$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX."
        );
    }

    #[test]
    fn same_as_glibc_and_openssl() {
        // From python3's crypt.crypt (glibc) and `openssl passwd -6 -salt X pw`.
        assert_eq!(
            crypt(b"correct horse", b"AbCd./09", Some(1234)),
            "$6$rounds=1234$AbCd./09$pGlujc.2iFZ/tgc7jVhSR63b.rwYKDZg7tgeeQV5f2fNzXORfZyO5nemrAZXgnRoTserQ6sMez7HoLRUoguRj1"
        );
        assert_eq!(
            crypt(b"", b"x", None),
            "$6$x$QSmr1Bx2g4O6BzKvdkgOcyU6H91X6I/XBv5pSalMhSPkwdH6Beo3F455xZJg0v//bxVK5F4OE5k1.0xuR26MK0"
        );
        assert_eq!(
            crypt(b"pw", b"X", None),
            "$6$X$HMG1dtKrAZ6ITsnFmXn./1Y.yWMa34AdDcy/2dPK55BOaCn/j.hRxelx.xhPxTRvznE28CPJF6b1IMiNQ/POV0"
        );
    }

    #[test]
    fn refusals_and_limits() {
        let mut out = [0u8; HASH_LIMIT];
        assert_eq!(hash(b"pw", b"", None, &mut out), Err(CryptError::BadSalt));
        assert_eq!(hash(b"pw", b"a$b", None, &mut out), Err(CryptError::BadSalt));
        assert_eq!(hash(b"pw", b"a:b", None, &mut out), Err(CryptError::BadSalt));
        // The longest hash (999999999 rounds: too slow to run here) fills HASH_LIMIT.
        assert_eq!(b"$6$rounds=999999999$".len() + SALT_LIMIT + 1 + 86, HASH_LIMIT);
        let n = hash(b"pw", b"0123456789abcdefXYZ", Some(0), &mut out).unwrap();
        assert!(out[..n].starts_with(b"$6$rounds=1000$0123456789abcdef$") && n == HASH_LIMIT - 5);
        let mut short = [0u8; 3 + 1 + 86 - 1];
        assert_eq!(hash(b"pw", b"s", None, &mut short), Err(CryptError::TooLarge { limit: 89 }));
    }

    #[test]
    fn hashed_or_plain() {
        for hashed in [
            &b"$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"[..],
            b"$6$rounds=4096$5DJ8a9WMTEzIo5J4$Yms6imfeBvf3Yfu84mQBerh18l7OR1Wm1BJXZqFSpJ6BVas0AYJqIjP7czkOaAZHZi1kxQ5Y1IhgWN8K9NgxR1",
            b"$1$a$b", b"$2a$10$xyz", b"$2y$x$y", b"$5$s$h", b"$6$$$x", b"$6$a$b\nc",
        ] {
            assert!(is_hashed(hashed), "{}", String::from_utf8_lossy(hashed));
        }
        for plain in [
            &b"password"[..], b"$6$onlysalt", b"$6$salt$", b"$6$$x", b"$7$a$b", b"$2b$a$b", b"$3$a$b", b"x$6$a$b",
            b"$6$a$b:c", b"$6$\n$x", b"$6$a$\nb", b"", b"$6",
        ] {
            assert!(!is_hashed(plain), "{}", String::from_utf8_lossy(plain));
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut garbage = crate::fuzz::Garbage::new(5);
        let mut out = [0u8; HASH_LIMIT];
        for _ in 0..300 {
            let text = garbage.text(&[b"$", b"6", b"a", b"\n", b":", b"2a", b"1"], 12);
            let _ = is_hashed(&text);
            if let Ok(len) = hash(&text, &text, Some(1000), &mut out[..garbage.below(HASH_LIMIT + 1)]) {
                assert!(out[..len].starts_with(b"$6$") && is_hashed(&out[..len]), "{:?}", &out[..len]);
            }
        }
    }
}
