//! fstab options as mount(8) hands them to mount(2): those that are MS_* flags become
//! bits, those only userspace reads are dropped, and the rest go to the filesystem as its
//! own comma-separated data.

use crate::out::{Full, Out};
use crate::text::word_index;

/// What an options field asks of mount(2), and of whoever mounts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MountOptions {
    /// mount(2)'s MS_* bits.
    pub flags: u32,
    /// `noauto`: written to fstab, not mounted now.
    pub noauto: bool,
    /// `nofail`: a mount that fails is reported, not an error.
    pub nofail: bool,
}

/// The options that are MS_* flags, one word each: `ro` sets MS_RDONLY, `rw` clears it,
/// and so on. Words, not a table of slices: smaller.
const FLAG_NAMES: &str = "ro rw nosuid suid nodev dev noexec exec sync async mand nomand dirsync noatime atime \
                          nodiratime diratime relatime norelatime strictatime lazytime nolazytime";
/// Each of `FLAG_NAMES`' bit, and whether the word sets it.
const FLAG_BITS: [(u32, bool); 22] = [
    (1, true),
    (1, false),
    (2, true),
    (2, false),
    (4, true),
    (4, false),
    (8, true),
    (8, false),
    (16, true),
    (16, false),
    (64, true),
    (64, false),
    (128, true),
    (1024, true),
    (1024, false),
    (2048, true),
    (2048, false),
    (1 << 21, true),
    (1 << 21, false),
    (1 << 24, true),
    (1 << 25, true),
    (1 << 25, false),
];

/// Options for mount(8), fstab and init systems, never for the kernel.
const USERSPACE: &str = "defaults auto user nouser users owner group _netdev nobootwait";

/// Splits `options`; the filesystem's data goes to `data`, whose length it returns.
pub fn parse(options: &[u8], data: &mut [u8]) -> Result<(MountOptions, usize), Full> {
    let mut parsed = MountOptions::default();
    let mut out = Out::new(data);
    for option in options.split(|&b| b == b',').filter(|o| !o.is_empty()) {
        if let Some((bit, set)) = word_index(FLAG_NAMES, option).map(|index| FLAG_BITS[index]) {
            parsed.flags = if set { parsed.flags | bit } else { parsed.flags & !bit };
        } else if option == b"noauto" {
            parsed.noauto = true;
        } else if option == b"nofail" {
            parsed.nofail = true;
        } else if !(word_index(USERSPACE, option).is_some() || option.starts_with(b"comment=") || option.starts_with(b"x-") || option.starts_with(b"X-")) {
            if !out.is_empty() {
                out.put(b",")?;
            }
            out.put(option)?;
        }
    }
    Ok((parsed, out.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(options: &[u8]) -> (MountOptions, String) {
        crate::fuzz::seed_pair("fstab", options, b"/dev/vdb /mnt auto defaults 0 2\n");
        let mut data = [0u8; 64];
        let (options, len) = parse(options, &mut data).unwrap();
        (options, String::from_utf8(data[..len].to_vec()).unwrap())
    }

    #[test]
    fn flags_data_and_userspace_options() {
        let (options, data) = parsed(b"defaults,nofail,x-systemd.requires=cloud-init.service,_netdev,comment=cloudconfig");
        assert_eq!((options, data.as_str()), (MountOptions { flags: 0, noauto: false, nofail: true }, ""));
        let (options, data) = parsed(b"ro,noexec,size=1m,mode=0755,nosuid,noauto");
        assert_eq!(options, MountOptions { flags: 1 | 8 | 2, noauto: true, nofail: false });
        assert_eq!(data, "size=1m,mode=0755");
        // A later option undoes an earlier one, as mount(8) reads them.
        assert_eq!(parsed(b"ro,rw,relatime,norelatime").0.flags, 0);
        assert_eq!(parsed(b"").0, MountOptions::default());
    }

    #[test]
    fn every_flag_word_has_its_bit() {
        assert_eq!(FLAG_NAMES.split(' ').count(), FLAG_BITS.len());
        assert_eq!(parsed(b"nolazytime,strictatime,nodiratime,dirsync").0.flags, 2048 | 128 | 1 << 24);
        assert_eq!(parsed(b"nolazytime,lazytime").0.flags, 1 << 25);
    }

    #[test]
    fn data_limit() {
        let mut data = [0u8; 4];
        assert_eq!(parse(b"size=1m", &mut data), Err(Full { limit: 4 }));
    }
}
