//! Where a local cloud's seed is: a directory of the image, the filesystem of a block
//! device found by its label, or a URL. The host opens and reads them; which one a cloud
//! uses, and what is read from it, is `seed::local`'s decision.

use core::fmt;

use super::messages::Line;
use crate::http::Url;

pub trait SeedMedia {
    /// A seed, open.
    type Seed;
    /// A line in the host's words (its reasons for errnos, its way of showing bytes).
    type Text: Line;

    /// Whether this build reads NoCloud's seeds, and ConfigDrive's.
    const NOCLOUD: bool = true;
    const CONFIGDRIVE: bool = true;

    fn text(&self, args: fmt::Arguments<'_>) -> Self::Text {
        Self::Text::format(args)
    }

    /// Whether a directory is at `path` (absolute in the image).
    fn is_directory(&mut self, path: &[u8]) -> bool;

    /// The seed directory at `path` (absolute in the image), open.
    fn directory(&mut self, path: &[u8]) -> Result<Self::Seed, Self::Text>;

    /// The seed served at `url` (`seed` is the URL as written, for messages).
    fn url(&mut self, url: &Url<'_>, seed: &[u8]) -> Result<Self::Seed, Self::Text>;

    /// The first block device whose seed filesystem has `label` (without case).
    fn labelled(&mut self, label: &[u8]) -> Option<Self::Seed>;

    /// The first block device whose seed filesystem has a regular file named `name` at
    /// its top (Azure's provisioning CD has no set label).
    fn holding(&mut self, name: &[u8]) -> Option<Self::Seed>;

    /// The file at `path` (components inside the seed) into `out`, whose size is the
    /// limit: its length, `None` when absent.
    fn read(&mut self, seed: &mut Self::Seed, path: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, Self::Text>;

    /// Where the seed is, for messages (`/dev/sr0 (label cidata)`).
    fn describe(&self, seed: &Self::Seed) -> Self::Text;

    /// Whether the state file `name` (in TINY_CLOUD_VAR) holds exactly `contents`.
    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool;

    /// Replaces the state file `name` atomically and durably, 0600.
    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), Self::Text>;
}
