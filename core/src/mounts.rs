//! cloud-config's `mounts`: which entries go into /etc/fstab (replacing the lines an
//! earlier run wrote, `fstab::merge`), which of them are mounted now, and what a mount
//! that fails means (`nofail`). The system calls are the host's `Mounts`.

use crate::cloud_config::{self, CloudConfig};
use crate::fstab;
use crate::host::files::Files;
use crate::host::links::Links;
use crate::host::messages::Messages;
use crate::host::mounts::{Mounts, Source};
use crate::host::room::Room;
use crate::mount_options;
use crate::system_files;
use crate::text::Decimal;
use crate::yaml::NodeRef;

/// wisp's `mount_default_fields`: cloud-init's for systems without systemd, less
/// `nobootwait`, which busybox mount hands to the kernel and most filesystems refuse.
pub const MOUNT_DEFAULTS: fstab::Fields<'static> = [None, None, Some(b"auto"), Some(b"defaults,nofail"), Some(b"0"), Some(b"2")];
/// Most entries in `mounts`.
pub const MOUNTS_LIMIT: usize = 32;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(MOUNTS_LIMIT == 32);
/// Largest mount(2) data made of an entry's options.
const DATA_LIMIT: usize = 256;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(DATA_LIMIT == 256);
/// Largest /etc/fstab, old and new.
pub const FSTAB_LIMIT: usize = 16 * 1024;
/// Longest mount source, with its `/dev/` prefix (a longer one is cut, and not found).
const SOURCE_LIMIT: usize = 1024;
/// What `auto` tries, in order, as mount(8) would after asking blkid: one word each.
const AUTO_TYPES: &[u8] = b"ext4 xfs btrfs vfat iso9660";

/// `mounts`: cloud-config's lines in /etc/fstab (replacing the ones it wrote before),
/// then each mounted where nothing is mounted yet, as `mount -a` would. A device that
/// does not exist is left out, as cloud-init leaves it out.
#[inline(never)]
pub fn apply<H: Files + Links + Mounts + Room>(host: &mut H, config: &CloudConfig<'_>) -> Result<H::Text, H::Text> {
    let Some(list) = config.value("mounts") else { return Ok(crate::system_files::no_key(host, "mounts")) };
    let mut defaults = MOUNT_DEFAULTS;
    if let Some(fields) = config.value("mount_default_fields") {
        defaults = [None; 6];
        mount_fields(host, fields, &mut defaults)?;
    }
    let mut entries: heapless::Vec<fstab::Entry<'_>, MOUNTS_LIMIT> = heapless::Vec::new();
    for item in cloud_config::items("mounts", list)? {
        let mut entry = fstab::Entry { fields: [None; 6] };
        mount_fields(host, item, &mut entry.fields)?;
        if let Some(device) = entry.fields[0].filter(|d| d.starts_with(b"/dev/")) {
            if host.followed(device).is_none() {
                host.warn(format_args!("cloud-config line {}: mounts: {}: no such device: left out", Decimal(item.line().into()), H::shown(device)));
                continue;
            }
        }
        entries.push(entry).map_err(|_| host.text(format_args!("mounts: more than 32 entries")))?;
    }
    let mut room = host.room(2 * FSTAB_LIMIT, "/etc/fstab")?;
    let (existing, new) = room.split_at_mut(FSTAB_LIMIT);
    let existing = match host.read(b"/etc/fstab", existing) {
        Ok(len) => &existing[..len.unwrap_or(0)],
        Err(e) => return Err(host.path_error(b"/etc/fstab", e)),
    };
    let mut skipped = [false; MOUNTS_LIMIT];
    let merged = fstab::merge(existing, &entries, &defaults, new, |index, why| {
        // `get_mut`: the index is an entry's, always in range, and no panic path is compiled.
        if let Some(skipped) = skipped.get_mut(index) {
            *skipped = true;
        }
        host.error(format_args!("mounts: entry {} left out: {why}", Decimal((index + 1) as u64)));
    })
    .map_err(|e| host.text(format_args!("/etc/fstab: {e}")))?;
    if let Some(len) = merged {
        system_files::make_dir(host, b"/etc")?;
        host.write(b"/etc/fstab", &new[..len], 0o644, None).map_err(|e| system_files::call_failed(host, b"/etc/fstab", e))?;
    }
    let mut mounted = 0;
    for (entry, _) in entries.iter().zip(skipped).filter(|(_, skipped)| !skipped) {
        let fields = fstab::fill(entry, &defaults);
        let (Some(device), Some(point), Some(fs_type), options) = (fields[0], fields[1], fields[2], fields[3].unwrap_or(b"")) else { continue };
        if fs_type == b"swap" {
            continue;
        }
        let mut data = [0u8; DATA_LIMIT];
        let (parsed, data_len) = mount_options::parse(options, &mut data)
            .map_err(|_| host.text(format_args!("mounts {}: options longer than 256 bytes", H::shown(point))))?;
        if parsed.noauto {
            continue;
        }
        match mount_one(host, device, point, fs_type, parsed.flags, &data[..data_len]) {
            Ok(true) => mounted += 1,
            Ok(false) => {}
            Err(e) if parsed.nofail => host.error(format_args!("mounts {} (nofail): {e}", H::shown(point))),
            Err(e) => return Err(host.text(format_args!("mounts {}: {e}", H::shown(point)))),
        }
    }
    Ok(host.text(format_args!("{} entries in /etc/fstab, {mounted} mounted", Decimal(entries.len() as u64), mounted = Decimal(mounted as u64))))
}

/// A list of up to six fields, as `mounts` entries and `mount_default_fields` are, into
/// `fields` (all `None`): the 96 bytes are not returned through memory.
fn mount_fields<'a, H: Messages>(host: &H, value: NodeRef<'a>, fields: &mut fstab::Fields<'a>) -> Result<(), H::Text> {
    for (index, item) in cloud_config::items("mounts", value)?.enumerate() {
        let slot = fields.get_mut(index).ok_or_else(|| system_files::at_line(host, value, "mounts: more than six fields"))?;
        *slot = if item.is_null() { None } else { Some(cloud_config::text("mounts", item)?.as_bytes()) };
    }
    Ok(())
}

/// Mounts one entry unless its mount point already is one; `Ok(false)` when it was.
#[inline(never)]
fn mount_one<H: Mounts>(host: &mut H, device: &[u8], point: &[u8], fs_type: &[u8], flags: u32, data: &[u8]) -> Result<bool, H::Text> {
    if device.starts_with(b"LABEL=") || device.starts_with(b"UUID=") || device.starts_with(b"PARTUUID=") {
        return Err(host.text(format_args!("{}: not mounted now (wisp has no blkid); the fstab line mounts it at the next boot", H::shown(device))));
    }
    // A place user-data chose: no symlink in it is followed.
    let (target, mounted) = host.open_mount_point(point)?;
    if point != b"/" && mounted {
        return Ok(false);
    }
    // A device path is a file inside the instance (`sdb` is `/dev/sdb`); other sources
    // (tmpfs, server:/path) are names.
    let mut joined = [0u8; SOURCE_LIMIT];
    let source = system_files::joined(&mut joined, &[fstab::device_prefix(device), device]);
    let source = if source.starts_with(b"/") { Source::Path(source) } else { Source::Name(source) };
    // One word: fstab::merge left out an entry whose type holds a blank.
    let types = if fs_type == b"auto" { AUTO_TYPES } else { fs_type };
    let mut last = crate::host::HostError { errno: 19 };
    for fs_type in types.split(|&b| b == b' ') {
        match host.mount(source, &target, fs_type, flags, data) {
            Ok(()) => return Ok(true),
            Err(e) => last = e,
        }
    }
    let reason = H::reason(last);
    Err(match source {
        Source::Path(path) => host.text(format_args!("mount {} on {}: {reason}", host.under_root(path), host.under_root(point))),
        Source::Name(name) => host.text(format_args!("mount {} on {}: {reason}", H::shown(name), host.under_root(point))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    fn image() -> MemorySystem {
        MemorySystem::new(MemoryHost::new()).with_dir("/etc", (0, 0)).with_file("/etc/fstab", "/dev/vda1 / ext4 defaults 0 1\n").with_file("/dev/vdb", "")
    }

    fn run(host: &mut MemorySystem, source: &str) -> Result<std::string::String, std::string::String> {
        with_config(source, |config| apply(host, config))
    }

    #[test]
    fn entries_go_into_fstab_and_are_mounted_once() {
        let mut host = image();
        let config = "mounts:\n  - [vdb, /data]\n  - [tmpfs, /scratch, tmpfs, \"size=1m,noexec\"]\n";
        assert_eq!(run(&mut host, config).unwrap(), "2 entries in /etc/fstab, 2 mounted");
        let fstab = host.contents("/etc/fstab").unwrap();
        assert!(fstab.starts_with("/dev/vda1 / ext4 defaults 0 1\n"), "{fstab}");
        assert!(fstab.contains("/dev/vdb\t/data\tauto\tdefaults,nofail,comment=cloudconfig\t0\t2\n"), "{fstab}");
        // `auto` is each type in turn until one mounts; the options' flags are bits.
        assert_eq!(host.runs, ["mount /dev/vdb /data ext4 0x0 ", "mount tmpfs /scratch tmpfs 0x8 size=1m"]);
        // A rerun: the same file, nothing mounted again.
        host.runs.clear();
        let before = host.contents("/etc/fstab").unwrap().to_owned();
        assert_eq!(run(&mut host, config).unwrap(), "2 entries in /etc/fstab, 0 mounted");
        assert_eq!(host.contents("/etc/fstab").unwrap(), before);
        assert!(host.runs.is_empty());
    }

    #[test]
    fn a_missing_device_is_left_out_and_a_failed_nofail_mount_is_said() {
        let mut host = image();
        host.host.fail.insert(b"/dev/vdb".to_vec(), crate::host::HostError { errno: 22 });
        let config = "mounts:\n  - [/dev/vdz, /gone]\n  - [/dev/vdb, /data, ext4]\n  - [LABEL=x, /later]\n";
        assert_eq!(run(&mut host, config).unwrap(), "2 entries in /etc/fstab, 0 mounted");
        let said = host.said.borrow().clone();
        assert_eq!(said[0], "warning: cloud-config line 2: mounts: /dev/vdz: no such device: left out");
        assert_eq!(said[1], "error: mounts /data (nofail): mount /dev/vdb on /data: errno 22");
        assert!(said[2].starts_with("error: mounts /later (nofail): LABEL=x: not mounted now (wisp has no blkid)"), "{said:?}");
        assert!(!host.contents("/etc/fstab").unwrap().contains("/gone"));
    }

    #[test]
    fn auto_tries_the_next_type_when_one_fails() {
        let mut host = image();
        // The memory host fails the device's first mount only.
        host.host.fail.insert(b"/dev/vdb".to_vec(), crate::host::HostError { errno: 19 });
        assert_eq!(run(&mut host, "mounts:\n  - [vdb, /data]\n").unwrap(), "1 entries in /etc/fstab, 1 mounted");
        assert_eq!(host.runs, ["mount /dev/vdb /data ext4 0x0 ", "mount /dev/vdb /data xfs 0x0 "]);
    }

    #[test]
    fn without_nofail_a_failed_mount_fails_the_key() {
        let mut host = image();
        host.host.fail.insert(b"/dev/vdb".to_vec(), crate::host::HostError { errno: 19 });
        let err = run(&mut host, "mount_default_fields: [null, null, ext4, defaults, '0', '2']\nmounts:\n  - [vdb, /data]\n").unwrap_err();
        assert_eq!(err, "mounts /data: mount /dev/vdb on /data: errno 19");
        let many = std::format!("mounts:\n{}", "  - [tmpfs, /t]\n".repeat(MOUNTS_LIMIT + 1));
        assert_eq!(run(&mut image(), &many).unwrap_err(), "mounts: more than 32 entries");
        let long = std::format!("mounts:\n  - [tmpfs, /t, tmpfs, \"size={}\"]\n", "1".repeat(DATA_LIMIT));
        assert_eq!(run(&mut image(), &long).unwrap_err(), "mounts /t: options longer than 256 bytes");
        let err = run(&mut image(), "mounts:\n  - [a, b, c, d, e, f, g]\n").unwrap_err();
        assert_eq!(err, "cloud-config line 2: mounts: more than six fields");
        assert_eq!(run(&mut image(), "hostname: x\n").unwrap(), "no mounts");
    }
}
