//! The per-boot instance state machine: what a phase does this boot, from what
//! TINY_CLOUD_VAR says (the completion marker, the instance-id it belongs to) and what
//! the metadata service says the instance is; and, as the phase's actions run, which of
//! them may run after what failed.
//!
//! - first boot (no marker): every action of the phase; the instance-id is saved;
//! - a later boot of the same instance (marker, same id): only the every-boot actions;
//! - a new instance (marker, another id: an image captured without `wisp clean`): the
//!   marker is cleared, the id saved, every action runs, and the early phase runs the
//!   boot phase's actions first (the boot phase, before the network, could not know);
//! - a phase run alone goes on from the failures the earlier phases of this boot
//!   recorded (`Progress::after`);
//! - a crash anywhere leaves a state the next run reads as one of the above: the marker
//!   is set last and cleared first, so a cut-short bootstrap runs again whole.
//!
//! The state is read and written through `host::directory`; which actions a phase has is
//! `phase`'s, and running them is bin's.

use core::fmt;

use crate::host::directory::Directory;
use crate::host::HostError;
use crate::phase::{Action, Failed, HeldBack, Phase, Plan};
use crate::provider::Item;
use crate::state_files::{INSTANCE_ID, MARKER};

/// Longest instance-id kept.
pub const INSTANCE_ID_LIMIT: usize = 256;

/// What TINY_CLOUD_VAR says at the start of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved<'b> {
    /// The completion marker is there: a bootstrap finished, for `instance_id`.
    pub complete: bool,
    pub instance_id: Option<&'b [u8]>,
}

impl<'b> Saved<'b> {
    /// The marker and the saved instance-id; only the marker's absence must be sure (an
    /// id that cannot be read is none: the instance is then taken for a new one).
    pub fn read(var: &mut impl Directory, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Result<Saved<'b>, HostError> {
        let complete = var.exists(MARKER)?;
        Ok(Saved { complete, instance_id: saved_id(var, buf) })
    }

    /// Whether a bootstrap completed for another instance than `id`: an image captured
    /// without `wisp clean`, started as a new instance (`Course::NewInstance`).
    pub fn is_another_instance(&self, id: &[u8]) -> bool {
        self.complete && self.instance_id != Some(id)
    }

    /// The saved instance-id, when the DMI says it is this instance's (`dmi_says`, by
    /// `boot_cache::dmi_same_instance`): the service is then asked nothing.
    pub fn vouched_id(&self, dmi_says: Option<bool>) -> Option<&'b [u8]> {
        self.instance_id.filter(|_| self.complete && dmi_says == Some(true))
    }

    /// What to ask the service for beside the instance-id: on the first round of a run,
    /// everything the run reads (`run_items`), so a first boot costs one round. Later
    /// rounds ask for the id alone (an item the first round could not fetch is not
    /// waited for again), and so does a bootstrapped instance whose DMI cannot vouch
    /// for it: only a new instance needs the rest, which its actions fetch.
    pub fn asked_with_id<'i>(&self, first_round: bool, dmi_says: Option<bool>, run_items: &'i [Item]) -> &'i [Item] {
        match first_round && !(self.complete && dmi_says.is_none()) {
            true => run_items,
            false => &[],
        }
    }

    /// What the phase does, given what the metadata service says the instance is.
    pub fn course<'c>(&self, phase: Phase, current: Current<'c>) -> Course<'b> {
        match (self.complete, current) {
            // The boot phase runs before the network: a new instance is the early phase's
            // to find.
            (true, Current::NotAsked) => Course::EveryBootOnly,
            (true, Current::Unknown) => Course::AssumeSame,
            (true, Current::Id(id)) if self.instance_id == Some(id) => Course::EveryBootOnly,
            (true, Current::Id(_)) => Course::NewInstance { was: self.instance_id, boot_actions_first: phase == Phase::Early },
            (false, Current::NotAsked) => Course::Bootstrap { save_id: false },
            (false, Current::Unknown) => Course::Stop,
            (false, Current::Id(id)) => Course::Bootstrap { save_id: self.instance_id != Some(id) },
        }
    }
}

/// Whether a first-round failure to fetch `item` waits for the action that reads it
/// (which reports it, and the next boot retries it) rather than failing the phase: any
/// item but the instance-id, on the run's first round only.
pub fn failure_deferred(item: Option<Item>, first_round: bool) -> bool {
    first_round && item.is_some_and(|item| item != Item::InstanceId)
}

/// What the metadata service (or the DMI) says the instance is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Current<'a> {
    /// Not asked: the boot phase does not ask.
    NotAsked,
    /// Asked, and no answer came.
    Unknown,
    Id(&'a [u8]),
}

/// What a phase does this boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Course<'b> {
    /// A later boot of a bootstrapped instance: only the every-boot actions (`every_boot`).
    EveryBootOnly,
    /// Bootstrapped, but the instance-id could not be checked: taken for the same
    /// instance, and nothing runs (what runs every boot may need what was not fetched).
    AssumeSame,
    /// Not bootstrapped yet (a first boot, or one that did not finish): every action;
    /// `save_id` when the saved instance-id is not this one.
    Bootstrap { save_id: bool },
    /// Bootstrapped for another instance (`was`): the marker is cleared, then the id
    /// saved, then every action runs, the boot phase's first in the early phase.
    NewInstance { was: Option<&'b [u8]>, boot_actions_first: bool },
    /// Not bootstrapped, and the instance is unknown: the phase cannot start.
    Stop,
}

/// The actions of `plan` that run at every boot, in order.
pub fn every_boot(plan: &Plan) -> Plan {
    plan.iter().copied().filter(|action| action.every_boot()).collect()
}

/// The instance-id saved by an earlier run, less its newline.
pub fn saved_id<'b>(var: &mut impl Directory, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Option<&'b [u8]> {
    match var.read(INSTANCE_ID, buf) {
        Ok(Some(len)) => Some(buf[..len].strip_suffix(b"\n").unwrap_or(&buf[..len])),
        _ => None,
    }
}

/// The instance-id could not be saved: too long, or the directory refused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveError {
    TooLong,
    Host(HostError),
}

/// Saves `id` (with a newline) unless it is saved already; not durably: the sync before
/// the completion marker makes it so, and until then a lost or cut copy only means "a
/// new instance", as it is.
pub fn save_id(var: &mut impl Directory, id: &[u8]) -> Result<(), SaveError> {
    let mut line = heapless::Vec::<u8, { INSTANCE_ID_LIMIT + 1 }>::new();
    if line.extend_from_slice(id).is_err() || line.push(b'\n').is_err() {
        return Err(SaveError::TooLong);
    }
    let mut old = [0u8; INSTANCE_ID_LIMIT + 1];
    if matches!(var.read(INSTANCE_ID, &mut old), Ok(Some(len)) if old[..len] == line[..]) {
        return Ok(());
    }
    var.write_volatile(INSTANCE_ID, &line, 0o644).map_err(SaveError::Host)
}

/// Whether the metadata service's instance-id may be kept and used as a file name's part:
/// printable ASCII with no `/`, at most `INSTANCE_ID_LIMIT` bytes, not empty.
pub fn is_valid_id(id: &[u8]) -> bool {
    !id.is_empty() && id.len() <= INSTANCE_ID_LIMIT && id.iter().all(|b| b.is_ascii_graphic() && *b != b'/')
}

/// What the actions of a run may do, as their failures come in: an action runs unless
/// something it needs failed (`Action::needs`) or the user-data it applies was found
/// unusable by an earlier action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The actions that failed, or were held back, this boot.
    pub failed: Failed,
    userdata_unusable: bool,
    held_back: bool,
}

/// Why an action did not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotRun {
    HeldBack(HeldBack),
    /// An earlier action reported why the user-data cannot be applied.
    UserdataUnusable,
}

impl fmt::Display for NotRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotRun::HeldBack(reason) => reason.fmt(f),
            NotRun::UserdataUnusable => f.write_str("not run: the user-data's error is above"),
        }
    }
}

impl Progress {
    /// A run that goes on from what the earlier phases of this boot recorded (a phase run
    /// alone, as its own process).
    pub fn after(earlier: Failed) -> Progress {
        Progress { failed: earlier, ..Progress::default() }
    }

    /// Whether `action` may run now; one that may not is recorded as held back (not as a
    /// failure of its own: the failure is its cause's).
    pub fn may_run(&mut self, action: Action) -> Result<(), NotRun> {
        let reason = match action.held_back(self.failed) {
            Some(reason) => NotRun::HeldBack(reason),
            None if self.userdata_unusable && action.needs_saved_userdata() => NotRun::UserdataUnusable,
            None => return Ok(()),
        };
        self.failed.add(action);
        self.held_back = true;
        Err(reason)
    }

    pub fn failed(&mut self, action: Action) {
        self.failed.add(action);
    }

    /// An action found the user-data unusable, and said why: the later actions that apply
    /// it are held back.
    pub fn userdata_unusable(&mut self) {
        self.userdata_unusable = true;
    }

    /// Whether an action was held back this run: the run then fails too.
    pub fn held_back(&self) -> bool {
        self.held_back
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryHost;

    const VAR: &str = "/var/lib/cloud";

    fn saved(host: &mut MemoryHost) -> (bool, Option<std::vec::Vec<u8>>) {
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        let saved = Saved::read(&mut host.dir(VAR), &mut buf).unwrap();
        (saved.complete, saved.instance_id.map(<[u8]>::to_vec))
    }

    fn course(host: &mut MemoryHost, phase: Phase, current: Current<'_>) -> Course<'static> {
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        let saved = Saved::read(&mut host.dir(VAR), &mut buf).unwrap();
        // The course borrows the id read; the tests compare it as 'static.
        match saved.course(phase, current) {
            Course::NewInstance { was, boot_actions_first } => {
                Course::NewInstance { was: was.map(|id| &*std::vec::Vec::leak(id.to_vec())), boot_actions_first }
            }
            Course::EveryBootOnly => Course::EveryBootOnly,
            Course::AssumeSame => Course::AssumeSame,
            Course::Bootstrap { save_id } => Course::Bootstrap { save_id },
            Course::Stop => Course::Stop,
        }
    }

    /// The bootstrap's last action, as bin's `markers::set_complete` does it.
    fn mark_complete(host: &mut MemoryHost) {
        host.dir(VAR).write_volatile(MARKER, b"", 0o644).unwrap();
    }

    #[test]
    fn first_boot_bootstraps_and_saves_the_instance_id_once() {
        let mut host = MemoryHost::new();
        assert_eq!(saved(&mut host), (false, None));
        assert_eq!(course(&mut host, Phase::Boot, Current::NotAsked), Course::Bootstrap { save_id: false });
        assert_eq!(course(&mut host, Phase::Early, Current::Id(b"i-1")), Course::Bootstrap { save_id: true });
        save_id(&mut host.dir(VAR), b"i-1").unwrap();
        assert_eq!(host.contents("/var/lib/cloud/.instance-id"), Some(&b"i-1\n"[..]));
        // The next phase of the same boot finds it saved, and writes nothing.
        assert_eq!(course(&mut host, Phase::Main, Current::Id(b"i-1")), Course::Bootstrap { save_id: false });
        let writes = host.calls.iter().filter(|call| call.starts_with("write")).count();
        save_id(&mut host.dir(VAR), b"i-1").unwrap();
        assert_eq!(host.calls.iter().filter(|call| call.starts_with("write")).count(), writes);
        // Without an answer, a first boot cannot go on.
        assert_eq!(course(&mut host, Phase::Main, Current::Unknown), Course::Stop);
    }

    #[test]
    fn another_instance_is_what_the_course_takes_for_a_new_one() {
        let bootstrapped = Saved { complete: true, instance_id: Some(b"i-1") };
        let unfinished = Saved { complete: false, instance_id: Some(b"i-1") };
        let unsaved = Saved { complete: true, instance_id: None };
        for (saved, id) in [(bootstrapped, &b"i-1"[..]), (bootstrapped, b"i-2"), (unfinished, b"i-2"), (unsaved, b"i-1")] {
            let new = matches!(saved.course(Phase::Main, Current::Id(id)), Course::NewInstance { .. });
            assert_eq!(saved.is_another_instance(id), new, "{saved:?} {id:?}");
        }
        assert!(bootstrapped.is_another_instance(b"i-2") && !unfinished.is_another_instance(b"i-2"));
    }

    #[test]
    fn a_later_boot_of_the_same_instance_runs_only_the_every_boot_actions() {
        let mut host = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-1\n");
        mark_complete(&mut host);
        assert_eq!(saved(&mut host), (true, Some(b"i-1".to_vec())));
        for phase in [Phase::Early, Phase::Main, Phase::Final] {
            assert_eq!(course(&mut host, phase, Current::Id(b"i-1")), Course::EveryBootOnly);
        }
        assert_eq!(course(&mut host, Phase::Boot, Current::NotAsked), Course::EveryBootOnly);
        // A metadata service that does not answer: the same instance, nothing run.
        assert_eq!(course(&mut host, Phase::Main, Current::Unknown), Course::AssumeSame);
        let every = |phase: Phase| every_boot(&phase.plan(None, "").unwrap());
        assert_eq!(every(Phase::Boot).as_slice(), &[Action::SetEphemeralNetwork]);
        assert_eq!(every(Phase::Early).as_slice(), &[Action::UserdataBoothooks]);
        assert_eq!(every(Phase::Main).as_slice(), &[Action::UserdataBootcmd]);
        assert_eq!(every(Phase::Final).as_slice(), &[Action::RunUserdata]);
    }

    #[test]
    fn a_new_instance_bootstraps_again_and_the_early_phase_runs_boot_first() {
        let mut host = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-old\n");
        mark_complete(&mut host);
        assert_eq!(
            course(&mut host, Phase::Early, Current::Id(b"i-new")),
            Course::NewInstance { was: Some(b"i-old"), boot_actions_first: true }
        );
        // bin clears the marker, then saves the id: the main phase then finds a bootstrap
        // under way for this instance.
        host.dir(VAR).remove(MARKER).unwrap();
        save_id(&mut host.dir(VAR), b"i-new").unwrap();
        assert_eq!(course(&mut host, Phase::Main, Current::Id(b"i-new")), Course::Bootstrap { save_id: false });
        // Only the early phase runs the boot actions: a main phase run alone does not.
        let mut host = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-old\n");
        mark_complete(&mut host);
        assert_eq!(course(&mut host, Phase::Main, Current::Id(b"i-new")), Course::NewInstance { was: Some(b"i-old"), boot_actions_first: false });
        // A marker with no saved id is another instance's too.
        let mut host = MemoryHost::new();
        mark_complete(&mut host);
        assert_eq!(course(&mut host, Phase::Early, Current::Id(b"i-1")), Course::NewInstance { was: None, boot_actions_first: true });
    }

    #[test]
    fn a_phase_run_alone_goes_on_from_the_earlier_phases_failures() {
        // The early phase failed to save the user-data, the main phase to set the host
        // name (status.json's messages); the final phase, its own process, starts from them.
        let mut earlier = Failed::default();
        earlier.add_message(b"early/save_userdata: metadata user-data: timed out");
        earlier.add_message(b"main/set_hostname: hostname has byte 0x5f at position 3");
        let mut progress = Progress::after(earlier);
        let ran: std::vec::Vec<_> = Phase::Final.plan(None, "").unwrap().into_iter().map(|action| (action, progress.may_run(action))).collect();
        assert_eq!(
            ran,
            [
                (Action::UserdataWriteFilesDeferred, Err(NotRun::HeldBack(HeldBack::By(Action::SaveUserdata)))),
                (Action::RunUserdata, Err(NotRun::HeldBack(HeldBack::By(Action::SaveUserdata)))),
                (Action::UserdataRuncmd, Err(NotRun::HeldBack(HeldBack::By(Action::SaveUserdata)))),
                (Action::BootstrapComplete, Err(NotRun::HeldBack(HeldBack::EarlierFailure))),
                (Action::UserdataPowerState, Err(NotRun::HeldBack(HeldBack::By(Action::BootstrapComplete)))),
            ]
        );
        assert!(progress.held_back());
        // Only the host name failed: everything but the marker (and power) runs.
        let mut earlier = Failed::default();
        earlier.add_message(b"main/set_hostname: x");
        let mut progress = Progress::after(earlier);
        assert_eq!(progress.may_run(Action::RunUserdata), Ok(()));
        assert_eq!(progress.may_run(Action::UserdataRuncmd), Ok(()));
        assert_eq!(progress.may_run(Action::BootstrapComplete), Err(NotRun::HeldBack(HeldBack::EarlierFailure)));
        // A clean earlier boot holds nothing back.
        let mut progress = Progress::after(Failed::default());
        for action in Phase::Final.plan(None, "").unwrap() {
            assert_eq!(progress.may_run(action), Ok(()), "{}", action.name());
        }
        assert!(!progress.held_back());
    }

    #[test]
    fn unusable_userdata_holds_back_the_actions_that_apply_it_but_not_the_others() {
        let mut progress = Progress::default();
        assert_eq!(progress.may_run(Action::UserdataBootcmd), Ok(()));
        progress.failed(Action::UserdataBootcmd);
        progress.userdata_unusable();
        assert_eq!(progress.may_run(Action::UserdataUsers), Err(NotRun::UserdataUnusable));
        assert_eq!(NotRun::UserdataUnusable.to_string(), "not run: the user-data's error is above");
        assert_eq!(progress.may_run(Action::SetSshKeys), Ok(()));
        assert_eq!(progress.may_run(Action::BootstrapComplete), Err(NotRun::HeldBack(HeldBack::EarlierFailure)));
        // Power waits for the marker, not for the user-data.
        assert_eq!(progress.may_run(Action::UserdataPowerState), Err(NotRun::HeldBack(HeldBack::By(Action::BootstrapComplete))));
    }

    #[test]
    fn a_crash_between_steps_leaves_a_state_the_next_run_reads_right() {
        // Cut after the id was saved and before the marker: the same instance's bootstrap
        // runs again whole, and the id is not written again.
        let mut host = MemoryHost::new();
        save_id(&mut host.dir(VAR), b"i-1").unwrap();
        assert_eq!(course(&mut host, Phase::Early, Current::Id(b"i-1")), Course::Bootstrap { save_id: false });
        // A new instance cut after its marker was cleared and before its id was saved:
        // a bootstrap, not a later boot of the old instance, and the id is saved then.
        let mut host = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-old\n");
        assert_eq!(course(&mut host, Phase::Early, Current::Id(b"i-new")), Course::Bootstrap { save_id: true });
        // A cut-short id file (a crash before the sync) is another instance's: bootstrap.
        let mut host = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-");
        mark_complete(&mut host);
        assert_eq!(course(&mut host, Phase::Main, Current::Id(b"i-1")), Course::NewInstance { was: Some(b"i-"), boot_actions_first: false });
        // The marker cannot be read: the phase cannot tell, and says so.
        let mut host = MemoryHost::new();
        host.fail.insert(b"/var/lib/cloud/.bootstrap-complete".to_vec(), HostError { errno: 5 });
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        assert_eq!(Saved::read(&mut host.dir(VAR), &mut buf), Err(HostError { errno: 5 }));
    }

    #[test]
    fn instance_ids() {
        assert!(is_valid_id(b"i-0123456789abcdef0"));
        for bad in [&b""[..], b"a/b", b"a b", b"\xff"] {
            assert!(!is_valid_id(bad), "{bad:?}");
        }
        assert!(is_valid_id(&[b'a'; INSTANCE_ID_LIMIT]) && !is_valid_id(&[b'a'; INSTANCE_ID_LIMIT + 1]));
        let mut host = MemoryHost::new();
        assert_eq!(save_id(&mut host.dir(VAR), &[b'a'; INSTANCE_ID_LIMIT + 1]), Err(SaveError::TooLong));
        assert!(host.files.is_empty());
    }

    #[test]
    fn what_a_phase_asks_beside_the_instance_id() {
        let items = [Item::InstanceId, Item::SshKeys, Item::UserData];
        let first_boot = Saved { complete: false, instance_id: None };
        let bootstrapped = Saved { complete: true, instance_id: Some(b"i-1") };
        // A first boot asks for everything in its first round, then for the id alone.
        assert_eq!(first_boot.asked_with_id(true, None, &items), &items);
        assert_eq!(first_boot.asked_with_id(false, None, &items), &[]);
        // A bootstrapped instance asks for the id alone unless the DMI said it is another.
        assert_eq!(bootstrapped.asked_with_id(true, None, &items), &[]);
        assert_eq!(bootstrapped.asked_with_id(true, Some(false), &items), &items);
        // The DMI's word is taken only for a completed bootstrap.
        assert_eq!(bootstrapped.vouched_id(Some(true)), Some(&b"i-1"[..]));
        assert_eq!(bootstrapped.vouched_id(Some(false)), None);
        assert_eq!(bootstrapped.vouched_id(None), None);
        assert_eq!(Saved { complete: false, instance_id: Some(b"i-1") }.vouched_id(Some(true)), None);
    }

    #[test]
    fn only_a_first_round_failure_of_another_item_waits_for_its_action() {
        assert!(failure_deferred(Some(Item::SshKeys), true));
        assert!(!failure_deferred(Some(Item::SshKeys), false));
        assert!(!failure_deferred(Some(Item::InstanceId), true));
        assert!(!failure_deferred(None, true));
    }
}
