//! What a run of phases decides before its first phase starts: a disabled wisp marks every
//! phase started and finished at once, a failure to set the run up counts as the first
//! phase's, and an unreadable local seed is tolerated after a completed bootstrap. Each so
//! that `cloud-init status --wait` ends.

use core::fmt;

use crate::cli::{EXIT_FAILED, EXIT_USAGE};
use crate::completion;
use crate::config::Cloud;
use crate::host::directory::Directory;
use crate::phase::{Failed, Phase};
use crate::seed::local::{before_service, BeforeService};
use crate::text::Plain;

/// The host of a run before its first phase and of its phases' records: its log and
/// cloud-init's status, of `cloud` once it is known (`Phases::start` is this host).
pub trait Starting {
    /// A line of the host's (`Actions::Text`).
    type Text: fmt::Display;

    fn log(&mut self, args: fmt::Arguments<'_>);

    /// Records that `phase` started; what the earlier phases of this boot recorded failing.
    fn stage_started(&mut self, phase: Phase, cloud: Option<Cloud>) -> Failed;

    /// Records that `phase` ended, with the reason it failed.
    fn stage_finished(&mut self, phase: Phase, cloud: Option<Cloud>, failure: Option<&Self::Text>);
}

/// Why a run stopped before its first phase started, and its exit status: `EXIT_USAGE`
/// when the configuration refused the run (`refused`), else `EXIT_FAILED` (`?` on the
/// host's reason).
pub struct Unstarted<T> {
    reason: T,
    exit: i32,
}

impl<T> Unstarted<T> {
    /// The configuration refused the run: its plans, its cloud.
    pub fn refused(reason: T) -> Unstarted<T> {
        Unstarted { reason, exit: EXIT_USAGE }
    }
}

impl<T> From<T> for Unstarted<T> {
    fn from(reason: T) -> Unstarted<T> {
        Unstarted { reason, exit: EXIT_FAILED }
    }
}

/// Runs `phases` by `run_phases` (whether a phase failed), unless `disabled_by` names the
/// file that disables wisp; the exit status. A run that stopped before its first phase is
/// logged, and counted as the first phase's failure so that `cloud-init status --wait`
/// ends.
pub fn run<H: Starting>(host: &mut H, phases: &[Phase], disabled_by: Option<&str>, run_phases: impl FnOnce(&mut H) -> Result<bool, Unstarted<H::Text>>) -> i32 {
    let Some(file) = disabled_by else {
        return match run_phases(host) {
            Ok(failed) => failed as i32 * EXIT_FAILED,
            Err(Unstarted { reason, exit }) => {
                host.log(format_args!("{reason}"));
                host.stage_finished(phases[0], None, Some(&reason));
                exit
            }
        };
    };
    host.log(format_args!("disabled by {}: nothing to do", Plain(file)));
    // Each phase is done at once, so `cloud-init status --wait` has nothing to wait for.
    for &phase in phases {
        host.stage_started(phase, None);
        host.stage_finished(phase, None, None);
    }
    0
}

/// What `cloud` reads before its metadata service (`seed::local::before_service`) that
/// could not be read: seed disks are often detached after the first boot, so a seed's
/// failure after a completed bootstrap goes on as with an unreachable metadata service
/// (`Ok`: the reason, to log); before that, or Azure's provisioning CD, the run fails.
pub fn local_unread<T>(var: &mut impl Directory, cloud: Cloud, reason: T) -> Result<T, T> {
    match before_service(cloud) == Some(BeforeService::Seed) && completion::is_complete(var) == Ok(true) {
        true => Ok(reason),
        false => Err(reason),
    }
}

#[cfg(test)]
mod tests {
    use std::string::String;
    use std::vec::Vec;

    use super::*;
    use crate::host::memory::{MemoryHost, MemoryPhases};

    const VAR: &str = "/var/lib/cloud";

    fn said<'a>(host: &'a MemoryPhases<'_>) -> Vec<&'a str> {
        host.said.iter().map(String::as_str).collect()
    }

    #[test]
    fn a_disabled_wisp_marks_every_phase_started_and_finished_and_runs_nothing() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        let exit = run(&mut host, &[Phase::Early, Phase::Main], Some("/etc/wisp.disabled"), |_| panic!("a disabled run sets nothing up"));
        assert_eq!(exit, 0);
        assert_eq!(said(&host), ["disabled by /etc/wisp.disabled: nothing to do", "started early", "finished early: None", "started main", "finished main: None"]);
    }

    #[test]
    fn a_failure_before_the_first_phase_is_logged_and_counts_as_its_failure() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        let exit = run(&mut host, &[Phase::Main, Phase::Final], None, |_| Err(String::from("no metadata"))?);
        assert_eq!(exit, EXIT_FAILED);
        assert_eq!(said(&host), ["no metadata", "finished main: Some(\"no metadata\")"]);
    }

    #[test]
    fn a_refused_configuration_is_a_usage_error_of_the_first_phase() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        let exit = run(&mut host, &Phase::ALL, None, |_| Err(Unstarted::refused("wisp.conf: CLOUD: unknown".into())));
        assert_eq!(exit, EXIT_USAGE);
        assert_eq!(said(&host), ["wisp.conf: CLOUD: unknown", "finished boot: Some(\"wisp.conf: CLOUD: unknown\")"]);
    }

    #[test]
    fn a_run_that_is_not_disabled_ends_as_its_phases_did_and_records_nothing_itself() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        assert_eq!(run(&mut host, &[Phase::Main], None, |_| Ok(true)), EXIT_FAILED);
        assert_eq!(run(&mut host, &[Phase::Main], None, |_| Ok(false)), 0);
        assert!(host.said.is_empty());
    }

    #[test]
    fn an_unreadable_seed_fails_a_first_boot_and_is_only_logged_after_a_bootstrap() {
        let mut disk = MemoryHost::new();
        assert_eq!(local_unread(&mut disk.dir(VAR), Cloud::Nocloud, "no seed"), Err("no seed"));
        let mut disk = MemoryHost::new().with_file("/var/lib/cloud/.bootstrap-complete", b"");
        assert_eq!(local_unread(&mut disk.dir(VAR), Cloud::Nocloud, "no seed"), Ok("no seed"));
        assert_eq!(local_unread(&mut disk.dir(VAR), Cloud::Configdrive, "no seed"), Ok("no seed"));
        // A marker that cannot be read is no completed bootstrap.
        disk.fail.insert(b"/var/lib/cloud/.bootstrap-complete".to_vec(), crate::host::HostError { errno: 5 });
        let mut var = disk.dir(VAR);
        assert_eq!(local_unread(&mut var, Cloud::Nocloud, "no seed"), Err("no seed"));
    }

    #[test]
    fn an_unreadable_azure_provisioning_cd_fails_the_run_even_after_a_bootstrap() {
        let mut disk = MemoryHost::new().with_file("/var/lib/cloud/.bootstrap-complete", b"");
        assert_eq!(local_unread(&mut disk.dir(VAR), Cloud::Azure, "no ovf-env.xml"), Err("no ovf-env.xml"));
    }
}
