//! core's `BlockDevice` and `MountedFilesystem`: a disk or image file open for writing,
//! and a mounted filesystem through its mount point's directory, for `grow`.

use wisp_core::host::HostError;

use super::host_error;

/// A test hook: stop (as a crash would) right after this many table writes.
pub const CRASH_AFTER_WRITES: &str = "WISP_TEST_CRASH_AFTER_WRITES";

/// An open disk or image file. `crash_after` is a test hook: stop the process (as a crash
/// would) right after that many writes.
pub struct Disk<'fd> {
    pub fd: wisp_os_linux::BorrowedFd<'fd>,
    pub writes: u32,
    pub crash_after: Option<u32>,
}

impl wisp_core::host::block::BlockDevice for Disk<'_> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        wisp_os_linux::block::read_at(self.fd, offset, buf).map_err(host_error)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::block::write_at(self.fd, offset, bytes).map_err(host_error)?;
        self.writes += 1;
        if self.crash_after == Some(self.writes) {
            let _ = wisp_os_linux::block::sync(self.fd);
            crate::output::error(format_args!("{}: stopping after write {}", wisp_core::text::Plain(CRASH_AFTER_WRITES), wisp_core::text::Decimal(self.writes.into())));
            wisp_os_linux::process::exit(99);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), HostError> {
        wisp_os_linux::block::sync(self.fd).map_err(host_error)
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        wisp_os_linux::block::resize_partition(self.fd, number, start, length).map_err(host_error)
    }
}

/// A mounted filesystem, through its mount point's directory.
pub struct Mount<'fd>(pub wisp_os_linux::BorrowedFd<'fd>);

impl wisp_core::host::block::MountedFilesystem for Mount<'_> {
    fn block_size(&mut self) -> Result<u64, HostError> {
        wisp_os_linux::block::filesystem_block_size(self.0).map_err(host_error)
    }

    fn ext4_resize(&mut self, blocks: u64) -> Result<(), HostError> {
        wisp_os_linux::block::ext4_resize(self.0, blocks).map_err(host_error)
    }

    fn xfs_geometry(&mut self) -> Result<(u32, u64, u32), HostError> {
        wisp_os_linux::block::xfs_geometry(self.0).map_err(host_error)
    }

    fn xfs_grow(&mut self, blocks: u64, imaxpct: u32) -> Result<(), HostError> {
        wisp_os_linux::block::xfs_grow(self.0, blocks, imaxpct).map_err(host_error)
    }

    fn btrfs_resize_max(&mut self) -> Result<(), HostError> {
        wisp_os_linux::block::btrfs_resize_max(self.0).map_err(host_error)
    }
}
