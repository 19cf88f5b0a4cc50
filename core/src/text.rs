//! Small readings of text that several parsers share, and bytes from outside shown
//! safely in messages.

use core::fmt;

/// A decimal number of at most `max_digits` digits (and no sign, space or other byte).
pub fn decimal(digits: &[u8], max_digits: usize) -> Option<u64> {
    let valid = !digits.is_empty() && digits.len() <= max_digits.min(19) && digits.iter().all(u8::is_ascii_digit);
    valid.then(|| digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// Bytes as text to match against the words wisp knows, as in
/// `match word(name) { "CLOUD" => ... }`: matching a `&[u8]` against byte-string
/// patterns compiles to a compare and a branch per byte of every pattern (ten bytes of
/// code per character), matching a `&str` against string patterns to one comparison per
/// arm. Bytes that are not UTF-8 are no word wisp knows: "", which no arm names.
pub fn word(bytes: &[u8]) -> &str {
    core::str::from_utf8(bytes).unwrap_or("")
}

/// The `index`th word (from 0) of `names`, one space between words; "" past the end.
/// An enum's names as one list read by its discriminant: a `match` of one arm per name
/// compiles to a compare and a branch per arm (about 16 bytes of code each).
pub fn nth_word(names: &'static str, index: usize) -> &'static str {
    nth_part(names, ' ', index)
}

/// The `index`th part (from 0) of `parts`, `separator` between parts; "" past the end.
pub fn nth_part(parts: &'static str, separator: char, index: usize) -> &'static str {
    parts.split(separator).nth(index).unwrap_or("")
}

/// Where `word` is in `names` (from 0; one space between words), if it is one of them:
/// the words an enum's `nth_word` names read back to its discriminant, and one search of
/// a list where a `match` of string patterns compiles to a comparison per arm (26 bytes
/// of code each).
pub fn word_index(names: &str, word: &[u8]) -> Option<usize> {
    part_index(names, ' ', word)
}

/// Where `part` is in `parts` (from 0), `separator` between parts, if it is one of them.
pub fn part_index(parts: &str, separator: char, part: &[u8]) -> Option<usize> {
    parts.split(separator).position(|name| name.as_bytes() == part)
}

/// `word_index` with ASCII case ignored, as MIME's type and encoding names are compared.
pub fn word_index_ignoring_case(names: &str, word: &[u8]) -> Option<usize> {
    names.split(' ').position(|name| eq_ignoring_case(name.as_bytes(), word))
}

/// Whether `a` and `b` are the same bytes but for ASCII case: `<[u8]>::eq_ignore_ascii_case`
/// a byte at a time. The standard library's compares 16-byte chunks first (313 bytes of
/// code); wisp compares names and header fields of a few bytes.
pub fn eq_ignoring_case(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.eq_ignore_ascii_case(b))
}

/// Shows bytes from outside (paths, names, arguments) with anything but printable ASCII
/// escaped as `\xHH`, so a message can never carry a terminal escape or a line break.
#[derive(Clone, Copy)]
pub struct Shown<'a>(pub &'a [u8]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            // One write a byte, itself or its escape.
            let escaped;
            let text = match byte {
                0x20..0x7f => core::slice::from_ref(byte),
                _ => {
                    escaped = [b'\\', b'x', HEX_DIGITS[usize::from(byte >> 4)], HEX_DIGITS[usize::from(byte & 15)]];
                    &escaped[..]
                }
            };
            f.write_str(byte_as_str(text))?;
        }
        Ok(())
    }
}

/// An image path as a host reaches it, under its root (`--root`), shown as `Shown` shows
/// bytes: the root, then the path.
#[derive(Clone, Copy)]
pub struct ShownUnder<'a> {
    pub root: &'a [u8],
    pub path: &'a [u8],
}

impl fmt::Display for ShownUnder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Shown(self.root).fmt(f)?;
        Shown(self.path).fmt(f)
    }
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// A byte as two lowercase hex digits, as `{:02x}` would write it without core's padding
/// machinery.
#[derive(Clone, Copy)]
pub struct Hex(pub u8);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(byte_as_str(&[HEX_DIGITS[usize::from(self.0 >> 4)], HEX_DIGITS[usize::from(self.0 & 15)]]))
    }
}

/// A number in decimal, as `{}` of an integer would write it, without core's padding
/// machinery that `{}` of any integer type brings into the binary (`pad_integral` and one
/// formatter per type: about 1.2 KB). Messages write numbers through it.
#[derive(Clone, Copy)]
pub struct Decimal(pub u64);

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(byte_as_str(decimal_digits(self.0, &mut [0; 20])))
    }
}

/// `n`'s decimal digits, written at the end of `buf` (a u64 has at most 20).
pub fn decimal_digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[start..]
}

/// Text of wisp's own (a name, a word of a message) as `{}` of a `&str` would write it,
/// without core's padding machinery (`Formatter::pad`, 1 KB), which `{}` of any `str`
/// brings into the binary. Bytes from outside are `Shown`.
#[derive(Clone, Copy)]
pub struct Plain<'a>(pub &'a str);

impl fmt::Display for Plain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// ASCII bytes as text.
fn byte_as_str(ascii: &[u8]) -> &str {
    core::str::from_utf8(ascii).unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_under_a_root_is_shown_root_first_and_escaped() {
        assert_eq!(ShownUnder { root: b"/srv/img", path: b"/etc/wisp.conf" }.to_string(), "/srv/img/etc/wisp.conf");
        assert_eq!(ShownUnder { root: b"", path: b"/etc/x\n" }.to_string(), "/etc/x\\x0a");
        assert_eq!(ShownUnder { root: b"/r\x1b", path: b"/a" }.to_string(), "/r\\x1b/a");
    }

    #[test]
    fn decimals() {
        assert_eq!(decimal(b"0", 4), Some(0));
        assert_eq!(decimal(b"9999", 4), Some(9999));
        assert_eq!(decimal(b"10000", 4), None);
        assert_eq!(decimal(b"18446744073709551615", 30), None);
        assert_eq!(decimal(b"9999999999999999999", 30), Some(9_999_999_999_999_999_999));
        for bad in [&b""[..], b"-1", b"+1", b" 1", b"1 ", b"1e3", b"x"] {
            assert_eq!(decimal(bad, 10), None);
        }
    }

    #[test]
    fn shown_escapes_all_but_printable_ascii() {
        assert_eq!(Shown(b"a b~").to_string(), "a b~");
        assert_eq!(Shown(b"\x1b[0m\n\x7f\xff").to_string(), "\\x1b[0m\\x0a\\x7f\\xff");
        // The edges of what is shown as it is: space and tilde, not 0x1f, 0x7f or 0x80.
        assert_eq!(Shown(b"\x00\x1f \x7e\x7f\x80").to_string(), "\\x00\\x1f ~\\x7f\\x80");
        assert_eq!(Hex(0x0f).to_string(), "0f");
    }

    #[test]
    fn plain_writes_as_str_does() {
        assert_eq!(Plain("main/set_hostname").to_string(), "main/set_hostname");
        assert_eq!(std::format!("[{}]", Plain("")), "[]");
    }

    #[test]
    fn decimal_writes_as_integers_do() {
        for n in [0, 7, 10, 4096, 86_400, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(Decimal(n).to_string(), n.to_string());
        }
    }

    #[test]
    fn equal_ignoring_case_is_the_standard_library_s_answer() {
        let texts: [&[u8]; 12] = [
            b"", b"a", b"A", b"Content-Length", b"content-length", b"CONTENT-LENGTH", b"content-lengths", b"[", b"{",
            b"\xc3\x89t\xc3\xa9", b"\xc3\xa9T\xc3\xa9", b"ec2e1916-9099-7caf-fd21-012345abcdefEC2E1916-9099-7CAF",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(eq_ignoring_case(a, b), a.eq_ignore_ascii_case(b), "{a:?} {b:?}");
            }
        }
        assert!(eq_ignoring_case(b"EC2E1916-9099-7CAF-FD21-012345ABCDEF", b"ec2e1916-9099-7caf-fd21-012345abcdef"));
        assert!(!eq_ignoring_case(b"\xc3\x89", b"\xc3\xa9"));
    }

    #[test]
    fn words() {
        assert_eq!(word(b"CLOUD"), "CLOUD");
        assert_eq!(word(b""), "");
        assert_eq!(word(b"\xffCLOUD"), "");
        assert_eq!(word_index("aws gcp oci", b"aws"), Some(0));
        assert_eq!(word_index("aws gcp oci", b"oci"), Some(2));
        for unknown in [&b""[..], b"aw", b"aws ", b"gcp oci", b"\xff"] {
            assert_eq!(word_index("aws gcp oci", unknown), None, "{unknown:?}");
            assert_eq!(word_index_ignoring_case("aws gcp oci", unknown), None, "{unknown:?}");
        }
        assert_eq!(word_index_ignoring_case("text/plain 7bit", b"TEXT/Plain"), Some(0));
        assert_eq!(word_index_ignoring_case("text/plain 7bit", b"7BIT"), Some(1));
        assert_eq!(word_index("text/plain 7bit", b"7BIT"), None);
    }

    #[test]
    fn the_nth_word_of_a_list() {
        assert_eq!(nth_word("boot early main", 0), "boot");
        assert_eq!(nth_word("boot early main", 2), "main");
        assert_eq!(nth_word("boot early main", 3), "");
    }
}
