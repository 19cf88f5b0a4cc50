//! Growing the filesystem at a mount point and the partition under it (`expand_root`,
//! `wisp grow MOUNTPOINT`), and the table of a disk image (`wisp grow --image`). Decides
//! which device (`device::find`), the order of the steps (the table, then the kernel's
//! idea of the partition, then the filesystem, to the size the kernel then gives the
//! device), which filesystem resize is asked for, and what each step says.

use super::device::{self, FindError, Found};
use super::grow::{self, KernelTold};
use super::filesystem;
use crate::cli::GrowTarget;
use crate::host::devices::Devices;
use crate::host::explain::{words, Worded};
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::host::HostError;
use crate::text::{Decimal, Plain, Shown};

/// `wisp grow`: a mount point's filesystem and partition (`mount`), or a partition in an
/// image file's table (`image`).
pub fn command<H: Files + Devices + Room>(host: &mut H, target: GrowTarget<'_>) -> Result<H::Text, H::Text> {
    match target {
        GrowTarget::Mount(mountpoint) => mount(host, mountpoint),
        GrowTarget::Image { file, partition } => image(host, file, partition),
    }
}

/// Grows the filesystem mounted at `path` (as the host sees it, under its root) and the
/// partition it is on: the note of what changed, or why nothing could.
pub fn mount<H: Files + Devices + Room>(host: &mut H, path: &[u8]) -> Result<H::Text, H::Text> {
    let mut mountinfo = host.room(device::MOUNTINFO_LIMIT, device::MOUNTINFO)?;
    let mut texts = device::Texts::new(&mut mountinfo);
    let (filesystem, name, partition) = match device::find(host, path, &mut texts) {
        Ok(Found::Device { filesystem, name, partition }) => (filesystem, name, partition),
        Ok(Found::NotGrowable { fs_type, reason }) => {
            return Ok(host.text(format_args!("skipped: {} is on {} ({})", Shown(path), Shown(fs_type), Plain(reason))))
        }
        Ok(Found::Stacked { name, reason }) => return Ok(host.text(format_args!("skipped: {} is {}", Shown(name), Plain(reason)))),
        Err(e) => return Err(find_error(host, path, &texts, e)),
    };
    // The device's name and what its table and the kernel were told: `vda1: partition 1
    // grown from 1 MiB to 14 MiB`.
    let note = match partition {
        Some((number, disk_name)) => {
            let mut disk = open_device(host, disk_name)?;
            let sector_size = host.sector_size(&mut disk).map_err(|e| failed(host, disk_name, "sector size: ", e))?;
            let disk_bytes = host.size_bytes(&mut disk).map_err(|e| failed(host, disk_name, "size: ", e))?;
            let grown = grow_table(host, &mut disk, sector_size, disk_bytes, number)?;
            let mut told = KernelTold::Nothing;
            if let Some((_, length)) = grown.extent_bytes() {
                let kernel_bytes = device_bytes(host, name)?;
                told = grow::tell_kernel(&mut disk, &grown, kernel_bytes).map_err(|e| {
                    let (mib, name, reason) = (Decimal(length >> 20), Shown(name), H::reason(e));
                    host.text(format_args!("the table says {mib} MiB, but the kernel refused that size for {name} (BLKPG): {reason}"))
                })?;
            }
            host.text(format_args!("{}: {grown}{}", Shown(name), Plain(told.note())))
        }
        None => host.text(format_args!("{}", Shown(name))),
    };
    // The filesystem grows to what the kernel now says the device holds (for a
    // filesystem on a whole disk, the disk).
    let bytes = device_bytes(host, name)?;
    let mut mount = host.open_mount(path).map_err(|e| failed(host, path, "", e))?;
    match filesystem::grow(&mut mount, filesystem, bytes) {
        Ok(growth) => Ok(host.text(format_args!("{note}; {growth}"))),
        Err(e) => Err(host.text(format_args!("{note}; {}", Worded(&e, words::<H::Text>)))),
    }
}

/// Grows partition `partition` in the table of the disk image at `file`.
pub fn image<H: Devices + Room>(host: &mut H, file: &[u8], partition: u32) -> Result<H::Text, H::Text> {
    let (mut image, size) = host.open_image(file).map_err(|e| failed(host, file, "", e))?;
    let sector_size = grow::image_sector_size(&mut image);
    let grown = grow_table(host, &mut image, sector_size, size, partition)?;
    Ok(host.text(format_args!("{}: {grown}", Shown(file))))
}

/// `grow::grow_table` on a disk of `disk_bytes`, a GPT in the host's room, its error
/// explained.
fn grow_table<H: Devices + Room>(host: &mut H, disk: &mut H::Disk, sector_size: u32, disk_bytes: u64, partition: u32) -> Result<grow::Grown, H::Text> {
    let disk_sectors = disk_bytes / u64::from(sector_size);
    let mut first = [0u8; grow::SECTOR_LIMIT];
    let (first, is_gpt) = grow::first_sector(disk, sector_size, &mut first).map_err(|e| explained(host, &e))?;
    // An MBR is one sector: only a GPT's entry arrays need the room.
    let mut room = match is_gpt {
        true => Some(host.room(grow::TABLES_ROOM, "GPT")?),
        false => None,
    };
    grow::grow_table(disk, first, room.as_deref_mut(), disk_sectors, partition).map_err(|e| explained(host, &e))
}

fn explained<H: Messages>(host: &H, e: &grow::TableError) -> H::Text {
    host.text(format_args!("{}", Worded(e, words::<H::Text>)))
}

fn find_error<H: Messages>(host: &H, path: &[u8], texts: &device::Texts<'_>, e: FindError) -> H::Text {
    let (file, what) = match e {
        FindError::Read(file, error) => return host.path_error(texts.path(file), error),
        FindError::Mountinfo(e) => return host.text(format_args!("{}: {e}", Plain(device::MOUNTINFO))),
        FindError::NoMount => return host.text(format_args!("no mount holds {}", Shown(path))),
        FindError::Missing(file) => (file, " is missing"),
        FindError::NamesNoDevice(file) => (file, " names no device"),
        FindError::BadPartition => (device::File::Device, ": bad PARTN"),
    };
    host.text(format_args!("{}{}", Shown(texts.path(file)), Plain(what)))
}

/// `/dev/NAME` under the root, open.
fn open_device<H: Devices + Messages>(host: &mut H, name: &[u8]) -> Result<H::Disk, H::Text> {
    host.open_device(name).map_err(|e| host.text(format_args!("{}{}: {}", host.under_root(b"/dev/"), Shown(name), H::reason(e))))
}

/// What the kernel says /dev/NAME holds, in bytes.
fn device_bytes<H: Devices + Messages>(host: &mut H, name: &[u8]) -> Result<u64, H::Text> {
    let mut device = open_device(host, name)?;
    host.size_bytes(&mut device).map_err(|e| failed(host, name, "size: ", e))
}

/// `NAME: what: reason` for a failed query of a device (`what` ends in ": "), or
/// `PATH: reason` for a mount point or image that could not be opened (`what` empty):
/// one line for both, not a `format_args!` at each.
fn failed<H: Messages>(host: &H, name: &[u8], what: &str, e: HostError) -> H::Text {
    host.text(format_args!("{}: {}{}", Shown(name), Plain(what), H::reason(e)))
}

#[cfg(test)]
mod tests {
    use std::string::String;

    use super::*;
    use crate::host::memory::{MemoryDevices, MemoryHost, MemoryMount, MemorySystem};
    use crate::partition::gpt::tests::image;

    const MIB: u64 = 1 << 20;

    /// `/` on ext4 on vda1, the first partition (1 MiB at 1 MiB) of a 16 MiB disk whose
    /// table a 4 MiB image left; the kernel gives vda1 `partition_bytes`.
    fn root_on_vda1(fs: &str, partition_bytes: u64) -> MemoryDevices {
        let mountinfo = std::format!("22 1 252:1 / / rw,relatime shared:1 - {fs} /dev/vda1 rw\n");
        let host = MemoryHost::new()
            .with_file(device::MOUNTINFO, mountinfo.as_bytes())
            .with_file("/sys/dev/block/252:1/uevent", b"MAJOR=252\nMINOR=1\nDEVNAME=vda1\nDEVTYPE=partition\nPARTN=1\n")
            .with_file("/sys/dev/block/252:1/../uevent", b"MAJOR=252\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n");
        MemoryDevices::new(MemorySystem::new(host))
            .with_disk("vda", image(512, 32768, 8192, &[(2048, 4095)]))
            .with_device("vda1", partition_bytes)
            .with_mount("/", MemoryMount { block_size: 4096, xfs: (4096, 256, 25), ..MemoryMount::default() })
    }

    #[test]
    fn the_table_then_the_kernel_then_the_filesystem_to_the_kernel_s_new_size() {
        let mut host = root_on_vda1("ext4", MIB);
        let note = mount(&mut host, b"/").unwrap();
        assert_eq!(note, "vda1: partition 1 grown from 1 MiB to 14 MiB; ext4 resized to 3584 blocks of 4096 bytes");
        assert_eq!(
            host.calls,
            ["open vda", "sector size vda", "size vda", "open vda1", "size vda1", "open vda1", "size vda1", "mount /"]
        );
        assert_eq!(host.kernel.borrow().told, ["vda: resize 1 1048576+14680064"]);
        assert_eq!(host.disk("vda").changes().last(), Some(&"sync"));
    }

    #[test]
    fn the_command_grows_a_mount_point_as_mount_does() {
        let mut host = root_on_vda1("ext4", MIB);
        let note = command(&mut host, GrowTarget::Mount(b"/"));
        assert_eq!(note, Ok(String::from("vda1: partition 1 grown from 1 MiB to 14 MiB; ext4 resized to 3584 blocks of 4096 bytes")));
        assert_eq!(host.calls.last().map(String::as_str), Some("mount /"));
    }

    #[test]
    fn a_rerun_after_a_crash_before_blkpg_tells_the_kernel_and_grows_the_filesystem() {
        let mut grown = root_on_vda1("xfs", MIB);
        mount(&mut grown, b"/").unwrap();
        let bytes = grown.disk("vda").bytes.clone();
        let mut host = root_on_vda1("xfs", MIB).with_disk("vda", bytes);
        let note = mount(&mut host, b"/").unwrap();
        assert_eq!(
            note,
            "vda1: partition 1: no change (less than 1 MiB to gain) (the kernel is now told the table's size); \
             xfs grown from 256 to 3584 blocks of 4096 bytes"
        );
        assert!(host.disk("vda").changes().is_empty());
        // The kernel already knows: it is not told again.
        let mut again = root_on_vda1("xfs", 14 * MIB).with_disk("vda", grown.disk("vda").bytes.clone());
        mount(&mut again, b"/").unwrap();
        assert!(again.kernel.borrow().told.is_empty());
    }

    #[test]
    fn a_filesystem_on_a_whole_disk_grows_without_a_table() {
        let host = MemoryHost::new()
            .with_file(device::MOUNTINFO, b"22 1 252:16 / /srv rw - xfs /dev/vdb rw\n")
            .with_file("/sys/dev/block/252:16/uevent", b"MAJOR=252\nMINOR=16\nDEVNAME=vdb\nDEVTYPE=disk\n");
        let mut host = MemoryDevices::new(MemorySystem::new(host))
            .with_device("vdb", 200 * MIB)
            // The filesystem is reached through the path asked about, any directory on it.
            .with_mount("/srv/data", MemoryMount { xfs: (4096, 25600, 25), ..MemoryMount::default() });
        assert_eq!(mount(&mut host, b"/srv/data").unwrap(), "vdb; xfs grown from 25600 to 51200 blocks of 4096 bytes");
        assert_eq!(host.calls, ["open vdb", "size vdb", "mount /srv/data"]);
    }

    #[test]
    fn what_is_not_grown_is_skipped_with_its_reason() {
        let host = MemoryHost::new().with_file(device::MOUNTINFO, b"22 1 0:40 / / rw - tmpfs tmpfs rw\n");
        let mut host = MemoryDevices::new(MemorySystem::new(host));
        assert_eq!(mount(&mut host, b"/").unwrap(), "skipped: / is on tmpfs (a memory filesystem has no partition to grow)");
        let host = MemoryHost::new()
            .with_file(device::MOUNTINFO, b"22 1 253:0 / / rw - ext4 /dev/mapper/vg-root rw\n")
            .with_file("/sys/dev/block/253:0/uevent", b"DEVNAME=dm-0\n");
        let mut host = MemoryDevices::new(MemorySystem::new(host));
        let note = mount(&mut host, b"/").unwrap();
        assert!(note.starts_with("skipped: dm-0 is "), "{note}");
        assert!(host.calls.is_empty());
    }

    #[test]
    fn each_failure_names_its_step_and_stops_there() {
        let mut host = MemoryDevices::new(MemorySystem::new(MemoryHost::new()));
        assert_eq!(mount(&mut host, b"/").unwrap_err(), "/proc/self/mountinfo is missing");
        let mut host = root_on_vda1("ext4", MIB);
        host.disks.clear();
        host.kernel.borrow_mut().sizes.remove("vda");
        assert_eq!(mount(&mut host, b"/").unwrap_err(), "/dev/vda: errno 2");
        // A table refused: neither the kernel nor the filesystem hears of it.
        let mut host = root_on_vda1("ext4", MIB);
        host.disks["vda"].borrow_mut().bytes[512 + 30] ^= 0xff;
        assert_eq!(mount(&mut host, b"/").unwrap_err(), "GPT header CRC mismatch");
        assert!(host.kernel.borrow().told.is_empty() && !host.calls.contains(&String::from("mount /")));
        // A mount point that cannot be opened is named with the system's reason.
        let mut host = root_on_vda1("ext4", MIB);
        host.mounts.clear();
        assert_eq!(mount(&mut host, b"/").unwrap_err(), "/: errno 2");
        // A filesystem that refuses keeps what the table did in its message.
        let mut host = root_on_vda1("ext4", MIB);
        host.mounts.get_mut("/").unwrap().refuse = Some(HostError::PERMISSION);
        assert_eq!(
            mount(&mut host, b"/").unwrap_err(),
            "vda1: partition 1 grown from 1 MiB to 14 MiB; the kernel refused to resize ext4 online: EXT4_IOC_RESIZE_FS needs CAP_SYS_RESOURCE"
        );
    }

    #[test]
    fn room_the_host_refuses_for_mountinfo_is_said_by_name_before_anything_is_read() {
        let mut host = root_on_vda1("ext4", MIB);
        host.system.no_room = true;
        assert_eq!(mount(&mut host, b"/").unwrap_err(), "cannot reserve 65536 bytes for /proc/self/mountinfo");
        assert!(host.calls.is_empty() && host.disk("vda").changes().is_empty());
    }

    #[test]
    fn an_image_file_has_only_its_table_grown() {
        let mut host = MemoryDevices::new(MemorySystem::new(MemoryHost::new())).with_disk("disk.img", image(512, 32768, 8192, &[(2048, 4095)]));
        assert_eq!(image_of(&mut host, b"disk.img"), Ok(String::from("disk.img: partition 1 grown from 1 MiB to 14 MiB")));
        assert!(host.kernel.borrow().told.is_empty());
        assert_eq!(image_of(&mut host, b"other.img"), Err(String::from("other.img: errno 2")));
    }

    #[test]
    fn only_a_gpt_asks_the_host_for_room() {
        let mut bytes = std::vec![0u8; 32768 * 512];
        crate::partition::mbr::tests::put(&mut bytes[..512], 1, 0x83, 2048, 2048);
        let mut host = MemoryDevices::new(MemorySystem::new(MemoryHost::new())).with_disk("mbr.img", bytes).with_disk("disk.img", image(512, 32768, 8192, &[(2048, 4095)]));
        host.system.no_room = true;
        assert_eq!(image_of(&mut host, b"mbr.img"), Ok(String::from("mbr.img: partition 1 grown from 1 MiB to 14 MiB")));
        assert_eq!(image_of(&mut host, b"disk.img"), Err(String::from("cannot reserve 135168 bytes for GPT")));
        assert!(host.disk("disk.img").changes().is_empty());
    }

    /// Through the command, as `wisp grow --image FILE --partition 1` goes.
    fn image_of(host: &mut MemoryDevices, file: &[u8]) -> Result<String, String> {
        command(host, GrowTarget::Image { file, partition: 1 })
    }
}
