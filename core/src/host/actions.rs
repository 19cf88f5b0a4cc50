//! The actions of a phase, as the host carries them out: what `phase_run` drives.

use core::fmt;

use crate::instance::Progress;
use crate::phase::Action;

pub trait Actions {
    /// A line of the host's (a note, or the reason an action failed).
    type Text: fmt::Display;

    /// Carries out one action: a note for the log, or why it failed.
    fn run(&mut self, action: Action) -> Result<Self::Text, Self::Text>;

    /// What failed so far this boot, and so which actions may run.
    fn progress(&mut self) -> &mut Progress;

    /// A line of the action log.
    fn log(&mut self, args: fmt::Arguments<'_>);

    /// A monotonic clock, in milliseconds.
    fn now_ms(&mut self) -> u64;

    /// How many metadata requests the run has made so far, for the log.
    fn requests(&self) -> u32;

    /// A test hook: the host may stop here, as a crash would.
    fn crash_point(&mut self);
}
