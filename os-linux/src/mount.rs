//! Mounting filesystems, as cloud-config's `mounts` needs once /etc/fstab is written.

use core::ffi::CStr;

use rustix::io::Errno;
use rustix::mount::MountFlags;

/// mount(2): `source` (a device, or a name such as `tmpfs`) of filesystem `fs_type` on
/// the directory `target`. `flags` are mount(2)'s MS_* bits (MS_RDONLY 1, MS_NOSUID 2,
/// MS_NODEV 4, MS_NOEXEC 8, MS_NOATIME 1024, ...), passed as they are; `data` is the
/// filesystem's own comma-separated options, which mount(8) leaves after taking out the
/// ones that are flags.
pub fn mount(source: &CStr, target: &CStr, fs_type: &CStr, flags: u32, data: Option<&CStr>) -> Result<(), Errno> {
    rustix::mount::mount(source, target, fs_type, MountFlags::from_bits_retain(flags), data)
}
