//! What a run of phases asks of the host beside its actions: the metadata service and
//! what it answered, TINY_CLOUD_VAR, the records a phase leaves (cloud-init's status, the
//! cloud's own reports) and the kept metadata of the boot; what `phases` drives.

use core::fmt;

use super::actions::Actions;
use super::directory::Directory;
use super::messages::Line;
use super::HostError;
use crate::phase::{Phase, Plan};
use crate::phases_start::Starting;
use crate::provider::Item;

pub trait Phases: Actions<Text: fmt::Write + Line> {
    /// A fetch from the metadata service that failed.
    type FetchError: Copy + fmt::Display;
    /// TINY_CLOUD_VAR, open.
    type Var: Directory;
    /// The host of the run before its first phase, which records the phases too.
    type Start: Starting<Text = Self::Text>;

    fn var(&mut self) -> &mut Self::Var;

    /// A line of the host's, kept as long as the run.
    fn text(&self, args: fmt::Arguments<'_>) -> Self::Text {
        Self::Text::format(args)
    }

    /// `what: reason`, the system's words for `error`.
    fn os_error(&self, what: &str, error: HostError) -> Self::Text;

    /// The actions `phase` runs by the configuration and this build, or why it cannot.
    fn plan(&mut self, phase: Phase) -> Result<Plan, Self::Text>;

    /// Fetches the items not fetched yet, all at once.
    fn fetch(&mut self, items: &[Item]) -> Result<(), Self::FetchError>;

    /// The item whose fetch failed, when the failure was one item's.
    fn failed_item(error: &Self::FetchError) -> Option<Item>;

    /// What was fetched of `item` (`None`: not fetched, or the service has none).
    fn fetched(&self, item: Item) -> Option<&[u8]>;

    /// Whether the DMI names this instance as `saved_id` (`boot_cache::dmi_same_instance`).
    fn dmi_same_instance(&mut self, saved_id: &[u8]) -> Option<bool>;

    /// Fills the metadata with what an earlier phase of this boot kept (`boot_cache::load`);
    /// whether it did.
    fn load_kept(&mut self) -> bool;

    /// Keeps what was fetched for the later phases of this boot (`boot_cache::kept`).
    fn keep_for_later(&mut self);

    /// Only every-boot actions run from now: a later boot of a bootstrapped instance.
    fn later_boot(&mut self);

    /// Where each phase's start and end are recorded (cloud-init's status), as before the
    /// first phase.
    fn start(&mut self) -> &mut Self::Start;

    /// Tells Azure that a phase failed (`phases::run` asks only on Azure; a build without
    /// Azure has no one to tell).
    fn report_failure(&mut self, _reason: &Self::Text) {}

    /// Tells Azure the main phase of instance `instance_id` is done (`phases::run` asks
    /// only on Azure).
    fn report_ready(&mut self, _instance_id: &[u8]) {}

    /// Makes the work markers not yet durable so (`markers::Durability::settle`).
    fn settle_markers(&mut self) -> Result<(), Self::Text>;
}
