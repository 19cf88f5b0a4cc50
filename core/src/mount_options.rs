//! fstab options as mount(8) hands them to mount(2): those that are MS_* flags become
//! bits, those only userspace reads are dropped, and the rest go to the filesystem as its
//! own comma-separated data.

use crate::out::{Full, Out};

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

/// (name, bit, set): `ro` sets MS_RDONLY, `rw` clears it, and so on.
const FLAGS: [(&[u8], u32, bool); 22] = [
    (b"ro", 1, true),
    (b"rw", 1, false),
    (b"nosuid", 2, true),
    (b"suid", 2, false),
    (b"nodev", 4, true),
    (b"dev", 4, false),
    (b"noexec", 8, true),
    (b"exec", 8, false),
    (b"sync", 16, true),
    (b"async", 16, false),
    (b"mand", 64, true),
    (b"nomand", 64, false),
    (b"dirsync", 128, true),
    (b"noatime", 1024, true),
    (b"atime", 1024, false),
    (b"nodiratime", 2048, true),
    (b"diratime", 2048, false),
    (b"relatime", 1 << 21, true),
    (b"norelatime", 1 << 21, false),
    (b"strictatime", 1 << 24, true),
    (b"lazytime", 1 << 25, true),
    (b"nolazytime", 1 << 25, false),
];

/// Options for mount(8), fstab and init systems, never for the kernel.
const USERSPACE: [&[u8]; 9] = [b"defaults", b"auto", b"user", b"nouser", b"users", b"owner", b"group", b"_netdev", b"nobootwait"];

/// Splits `options`; the filesystem's data goes to `data`, whose length it returns.
pub fn parse(options: &[u8], data: &mut [u8]) -> Result<(MountOptions, usize), Full> {
    let mut parsed = MountOptions::default();
    let mut out = Out::new(data);
    for option in options.split(|&b| b == b',').filter(|o| !o.is_empty()) {
        if let Some(&(_, bit, set)) = FLAGS.iter().find(|(name, _, _)| *name == option) {
            parsed.flags = if set { parsed.flags | bit } else { parsed.flags & !bit };
        } else if option == b"noauto" {
            parsed.noauto = true;
        } else if option == b"nofail" {
            parsed.nofail = true;
        } else if !(USERSPACE.contains(&option) || option.starts_with(b"comment=") || option.starts_with(b"x-") || option.starts_with(b"X-")) {
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
    fn data_limit() {
        let mut data = [0u8; 4];
        assert_eq!(parse(b"size=1m", &mut data), Err(Full { limit: 4 }));
    }
}
