//! The places seeds are read from: the block devices the kernel lists, directories of
//! the image, one GET of a URL, and the state files kept from a seed. Each method is one
//! call; which devices are seeds, in what order, and how a seed's files are read is
//! `seed::sources`'s decision.

use core::fmt;

use super::messages::Line;
use super::HostError;
use crate::seed::Device;

pub trait SeedSources {
    /// A block device (or an image file), open for reading.
    type Device: Device + 'static;
    /// A directory of the image, open.
    type Directory;
    /// A line in the host's words.
    type Text: Line;

    /// The seed filesystem readers this build has, and whether it reads NoCloud's seeds
    /// (directories and URLs among them) and ConfigDrive's: what a build leaves out is
    /// never compiled in.
    const ISO9660: bool;
    const VFAT: bool;
    const UDF: bool;
    const NOCLOUD: bool;
    const CONFIGDRIVE: bool;

    fn text(&self, args: fmt::Arguments<'_>) -> Self::Text {
        Self::Text::format(args)
    }

    /// The system's words for `error` ("Permission denied").
    fn reason(error: HostError) -> impl fmt::Display {
        Self::Text::reason(error)
    }

    /// Each entry's name in /sys/class/block, in the order listed.
    fn block_devices(&mut self, visit: &mut dyn FnMut(&[u8]));

    /// /dev/`name` under the root, open for reading, and its size in bytes.
    fn open_block_device(&mut self, name: &[u8]) -> Result<(Self::Device, u64), HostError>;

    /// The directory at `path` (absolute in the image, resolved inside the root), or the
    /// host's message naming it.
    fn open_directory(&mut self, path: &[u8]) -> Result<Self::Directory, Self::Text>;

    /// The file at `relative` (`/a/b`) beneath `directory`, its symlinks resolved inside
    /// it, into `out`: its length, `None` when absent; EFBIG when larger than `out`.
    fn read_beneath(&mut self, directory: &Self::Directory, relative: &[u8], out: &mut [u8]) -> Result<Option<usize>, HostError>;

    /// `directory`'s path as the host reached it (under the root), for messages.
    fn directory_path<'a>(&'a self, directory: &'a Self::Directory) -> impl fmt::Display + 'a;

    /// One GET of `host` `path` at `address:port`: the body's length in `out`, `None` for
    /// a 404, the host's message naming the URL for any other failure.
    fn get(&mut self, address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8]) -> Result<Option<usize>, Self::Text>;

    /// Whether the state file `name` (in TINY_CLOUD_VAR) holds exactly `contents`.
    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool;

    /// Replaces the state file `name` atomically and durably, 0600.
    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), HostError>;
}
