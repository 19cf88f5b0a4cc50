//! A run of phases around the action loop: which actions each phase plans, what the first
//! fetch of the run asks the metadata service for (everything the run's phases read, in
//! one round), the course `instance` chooses for each phase (first boot, later boot, new
//! instance) and what it then runs, which failed fetch fails which action, and what a
//! phase's failure stops. Each phase's actions run by `phase_run`.
//!
//! A failed action is logged and recorded; every later action that does not need it
//! still runs, and the run fails. A phase that cannot start its actions ends the run.

use core::fmt;

use crate::completion;
use crate::config::Cloud;
use crate::host::actions::Actions;
use crate::host::phases::Phases;
use crate::instance::{self, Course, Current, Progress, SaveError, Saved, INSTANCE_ID_LIMIT};
use crate::phase::{metadata_items, Action, Phase, Plan, PlanError, ITEMS_LIMIT};
use crate::phase_run;
use crate::phases_start::Starting;
use crate::provider::Item;
use crate::text::{Plain, Shown};

const _: () = assert!(INSTANCE_ID_LIMIT == 256, "the message of SaveError::TooLong says 256");

type InstanceId = heapless::Vec<u8, INSTANCE_ID_LIMIT>;

/// What the phases of one run share beside the host's: how far the fetching went.
struct Run<E> {
    /// Whether the first round, which fetches what every phase of the run reads, is done.
    fetched_once: bool,
    /// A failure of the first round that belongs to one action's item, reported when
    /// that action runs (and never fetched again this run).
    fetch_failed: Option<E>,
    /// What this run fetches is kept for the later phases of this boot (other processes).
    keep_for_later: bool,
}

/// The plans of `phases` and of the phases after them, whose metadata the first fetch of
/// the boot gets for them; a phase of the run that cannot be planned refuses the run (a
/// later one is left out).
pub fn plans<T>(phases: &[Phase], mut plan: impl FnMut(Phase) -> Result<Plan, T>) -> Result<[Plan; 4], T> {
    let mut plans = [const { Plan::new() }; 4];
    for &phase in &Phase::ALL[phases[0] as usize..] {
        match plan(phase) {
            Ok(plan) => plans[phase as usize] = plan,
            Err(e) if phases.contains(&phase) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(plans)
}

/// Why a phase has no plan in this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unplanned {
    /// INIT_ACTIONS_* or SKIP_INIT_ACTIONS (`Phase::plan`).
    Config(PlanError),
    /// INIT_ACTIONS_* names `action`, which needs `feature`, which this build lacks.
    Missing { action: Action, feature: &'static str },
}

/// The actions `phase` runs by the configuration (`Phase::plan`) in a build that lacks
/// the features `missing_for` names: an action that needs one is left out of the
/// defaults, and refused by name when INIT_ACTIONS_* asks for it.
pub fn plan_for_build(phase: Phase, init_actions: Option<&str>, skip_actions: &str, missing_for: impl Fn(Action) -> Option<&'static str>) -> Result<Plan, Unplanned> {
    let mut plan = phase.plan(init_actions, skip_actions).map_err(Unplanned::Config)?;
    if init_actions.is_some() {
        if let Some((action, feature)) = plan.iter().find_map(|&action| missing_for(action).map(|feature| (action, feature))) {
            return Err(Unplanned::Missing { action, feature });
        }
    }
    plan.retain(|&action| missing_for(action).is_none());
    Ok(plan)
}

/// Whether a run of `phases` reads metadata (a local seed's, too): the boot phase alone
/// does not.
#[inline]
pub fn reads_metadata(phases: &[Phase]) -> bool {
    phases.iter().any(|&phase| phase != Phase::Boot)
}

/// Runs `phases` in order, by `plans`, on `cloud`. Whether the run failed.
pub fn run<H: Phases>(host: &mut H, phases: &[Phase], plans: &[Plan; 4], cloud: Cloud) -> bool {
    // What an earlier phase of this boot fetched, unless this run starts the boot.
    let kept = phases[0] != Phase::Boot && host.load_kept();
    let mut run = Run { fetched_once: false, fetch_failed: None, keep_for_later: !kept && !phases.contains(&Phase::Final) };
    let all_items = metadata_items(plans, phases[0]);
    let mut failed = false;
    for &phase in phases {
        let earlier = host.start().stage_started(phase, Some(cloud));
        // A phase run alone goes on from what the earlier phases of this boot recorded.
        if phase == phases[0] {
            *host.progress() = Progress::after(earlier);
        }
        // A phase whose actions failed lets the next phase run (each runs what does not
        // need the failures); one that could not start its actions ends the run.
        let (errors, go_on) = match run_phase(host, &mut run, phase, plans, &all_items) {
            Ok(errors) => (errors, true),
            Err(reason) => (Some(reason), false),
        };
        host.start().stage_finished(phase, Some(cloud), errors.as_ref());
        // Only Azure is told how a phase went; a ready instance, by its id.
        match errors {
            Some(reason) => {
                if cloud == Cloud::Azure {
                    host.report_failure(&reason);
                }
                failed = true;
                if !go_on {
                    break;
                }
            }
            None if phase == Phase::Main && cloud == Cloud::Azure => {
                if let Some(id) = host.fetched(Item::InstanceId).and_then(|id| InstanceId::from_slice(id.trim_ascii_end()).ok()) {
                    host.report_ready(&id);
                }
            }
            None => {}
        }
    }
    if let Err(e) = host.settle_markers() {
        host.log(format_args!("{e}"));
        failed = true;
    }
    failed || host.progress().held_back()
}

/// One phase, by the course `instance` chooses: its failures (`None`: none), or why it
/// could not start its actions. Out of line: inlined into `run`, it costs 370 bytes more.
#[inline(never)]
fn run_phase<H: Phases>(host: &mut H, run: &mut Run<H::FetchError>, phase: Phase, plans: &[Plan; 4], run_items: &[Item]) -> Result<Option<H::Text>, H::Text> {
    let started = host.now_ms();
    let mut saved_buf = [0u8; INSTANCE_ID_LIMIT];
    let saved = match Saved::read(host.var(), &mut saved_buf) {
        Ok(saved) => saved,
        Err(e) => {
            let e = host.os_error("cannot read the completion marker", e);
            return Err(logged(host, phase, e));
        }
    };
    let plan = &plans[phase as usize];
    let mut id = InstanceId::new();
    let mut unknown = None;
    // The network may not be up in the boot phase, so the instance cannot be asked for
    // its id there: a new instance is found by the early phase.
    let current = match phase {
        Phase::Boot => Current::NotAsked,
        _ => match current_instance_id(host, run, saved, run_items) {
            Ok(found) => {
                id = found;
                Current::Id(&id)
            }
            Err(e) => {
                unknown = Some(e);
                Current::Unknown
            }
        },
    };
    // Why the instance is unknown: only the courses of an unknown instance say it.
    let unknown = match unknown {
        Some(unknown) => unknown,
        None => host.text(format_args!("")),
    };
    match saved.course(phase, current) {
        Course::EveryBootOnly => {
            let every_boot = instance::every_boot(plan);
            let what = Plain(if every_boot.is_empty() { "nothing to do" } else { "per-boot work only" });
            // The boot phase did not ask for the instance-id.
            let id_for = Plain(if phase == Phase::Boot { "" } else { " for " });
            host.log(format_args!("{}: bootstrap complete{id_for}{}: {what}", Plain(phase.name()), Shown(&id)));
            if every_boot.is_empty() {
                return Ok(None);
            }
            if phase != Phase::Boot {
                host.later_boot();
            }
            return Ok(run_actions(host, run, phase, &every_boot, started));
        }
        Course::AssumeSame => {
            host.log(format_args!("{}: cannot check the instance-id ({unknown}): assuming the same instance", Plain(phase.name())));
            return Ok(None);
        }
        Course::Stop => {
            let e = host.text(format_args!("failed: {unknown}"));
            return Err(logged(host, phase, e));
        }
        Course::Bootstrap { save_id } => {
            if save_id {
                save_instance_id(host, phase, &id)?;
            }
        }
        Course::NewInstance { was, boot_actions_first } => {
            let was = Shown(was.unwrap_or(b"unknown"));
            host.log(format_args!("{}: new instance {} (was {was}): bootstrapping again", Plain(phase.name()), Shown(&id)));
            if let Err(e) = completion::clear(host.var()) {
                let e = host.os_error("cannot clear the completion marker", e);
                return Err(logged(host, phase, e));
            }
            save_instance_id(host, phase, &id)?;
            if boot_actions_first {
                let boot = host.plan(Phase::Boot).map_err(|e| logged(host, Phase::Boot, e))?;
                let boot_started = host.now_ms();
                let boot_errors = run_actions(host, run, Phase::Boot, &boot, boot_started);
                return Ok(match (boot_errors, run_actions(host, run, phase, plan, started)) {
                    (Some(boot), Some(errors)) => Some(host.text(format_args!("{boot}\n{errors}"))),
                    (boot, errors) => boot.or(errors),
                });
            }
        }
    }
    Ok(run_actions(host, run, phase, plan, started))
}

/// Saves the instance-id the phase found (`instance::save_id`).
fn save_instance_id<H: Phases>(host: &mut H, phase: Phase, id: &[u8]) -> Result<(), H::Text> {
    match instance::save_id(host.var(), id) {
        Ok(()) => Ok(()),
        Err(SaveError::TooLong) => {
            let e = host.text(format_args!("instance-id longer than 256 bytes"));
            Err(logged(host, phase, e))
        }
        Err(SaveError::Host(e)) => {
            let e = host.os_error("cannot save the instance-id", e);
            Err(logged(host, phase, e))
        }
    }
}

/// The instance-id, asked of the DMI where it names the instance (a later boot then asks
/// the service nothing), else of the metadata service with what the run needs.
fn current_instance_id<H: Phases>(host: &mut H, run: &mut Run<H::FetchError>, saved: Saved<'_>, run_items: &[Item]) -> Result<InstanceId, H::Text> {
    let dmi_says = match (saved.complete, saved.instance_id) {
        (true, Some(id)) => host.dmi_same_instance(id),
        _ => None,
    };
    // Later phases of the run ask only for the instance-id (fetched already): an item
    // the first round could not fetch is not waited for again.
    let first_round = !run.fetched_once;
    let wanted = saved.asked_with_id(first_round, dmi_says, run_items);
    let fetched = match saved.vouched_id(dmi_says) {
        Some(id) => Ok(InstanceId::from_slice(id).unwrap_or_default()),
        None => fetch_instance_id(host, run, wanted),
    };
    // A new instance found by asking for the id alone: what the rest of the boot reads,
    // as a first round with the same token, kept below for the later phases.
    if first_round && wanted.is_empty() && fetched.as_ref().is_ok_and(|id| saved.is_another_instance(id)) {
        run.fetched_once = false;
        let _ = fetch_instance_id(host, run, run_items);
    }
    if run.keep_for_later && host.requests() > 0 {
        host.keep_for_later();
        run.keep_for_later = false;
    }
    fetched
}

/// The instance-id, fetched together with `also` so that a first boot costs one round.
fn fetch_instance_id<H: Phases>(host: &mut H, run: &mut Run<H::FetchError>, also: &[Item]) -> Result<InstanceId, H::Text> {
    let mut wanted: heapless::Vec<Item, { ITEMS_LIMIT + 1 }> = heapless::Vec::new();
    let _ = wanted.push(Item::InstanceId);
    let _ = wanted.extend_from_slice(also);
    let first_round = !run.fetched_once;
    run.fetched_once = true;
    if let Err(e) = host.fetch(&wanted) {
        match instance::failure_deferred(H::failed_item(&e), first_round) {
            true => run.fetch_failed = Some(e),
            false => return Err(host.text(format_args!("{e}"))),
        }
    }
    let id = host.fetched(Item::InstanceId).unwrap_or(b"").trim_ascii_end();
    if !instance::is_valid_id(id) {
        return Err(host.text(format_args!("the metadata service gave an invalid instance-id \"{}\"", Shown(&id[..id.len().min(64)]))));
    }
    Ok(InstanceId::from_slice(id).unwrap_or_default())
}

/// Runs the plan's actions (`phase_run`); the failures, one per line, as
/// `phase/action: reason`.
fn run_actions<H: Phases>(host: &mut H, run: &mut Run<H::FetchError>, phase: Phase, plan: &Plan, started: u64) -> Option<H::Text> {
    let mut errors = host.text(format_args!(""));
    let failed = phase_run::run_actions(&mut WithFetch { host, run }, phase, plan, started, &mut errors);
    (failed > 0).then_some(errors)
}

/// A phase's actions, with the metadata item each reads fetched first.
struct WithFetch<'r, H: Phases> {
    host: &'r mut H,
    run: &'r mut Run<H::FetchError>,
}

impl<H: Phases> Actions for WithFetch<'_, H> {
    type Text = H::Text;

    fn run(&mut self, action: Action) -> Result<H::Text, H::Text> {
        run_action(self.host, self.run, action)
    }

    fn progress(&mut self) -> &mut Progress {
        self.host.progress()
    }

    fn log(&mut self, args: fmt::Arguments<'_>) {
        self.host.log(args);
    }

    fn now_ms(&mut self) -> u64 {
        self.host.now_ms()
    }

    fn requests(&self) -> u32 {
        self.host.requests()
    }

    fn crash_point(&mut self) {
        self.host.crash_point();
    }
}

/// One action, with the metadata item it reads. An item the first round could not fetch
/// fails its action, after the action has applied what did arrive (the keys that were
/// fetched when one was not), so the next boot retries it. Out of line: inlined into the
/// action loop, it costs 120 bytes more.
#[inline(never)]
fn run_action<H: Phases>(host: &mut H, run: &mut Run<H::FetchError>, action: Action) -> Result<H::Text, H::Text> {
    let Some(item) = action.metadata() else { return host.run(action) };
    let fetched = match run.fetch_failed.filter(|e| H::failed_item(e) == Some(item)) {
        Some(e) => Err(e),
        // Only this action's item: another item's failure is not this action's.
        None => host.fetch(&[item]),
    };
    let fetch_failed = fetched.err().map(|e| host.text(format_args!("{e}")));
    match fetch_failed {
        None => host.run(action),
        Some(e) if item == Item::SshKeys && host.fetched(item).is_some() => {
            let applied = host.run(action)?;
            Err(host.text(format_args!("{e} (applied what arrived: {applied})")))
        }
        Some(e) => Err(e),
    }
}

/// Logs a phase's failure and returns it as the reason the run failed.
fn logged<H: Phases>(host: &mut H, phase: Phase, e: H::Text) -> H::Text {
    let reason = host.text(format_args!("{}: {e}", Plain(phase.name())));
    host.log(format_args!("{reason}"));
    reason
}

#[cfg(test)]
mod tests {
    use std::string::String;
    use std::vec::Vec;

    use super::*;
    use crate::host::memory::{MemoryHost, MemoryPhases};
    use crate::host::HostError;
    use crate::state_files::MARKER;

    const VAR: &str = "/var/lib/cloud";

    /// A service that has an instance-id, a host name, keys and user-data.
    fn service(host: &mut MemoryPhases<'_>, id: &[u8]) {
        host.service = std::vec![
            (Item::InstanceId, id.to_vec()),
            (Item::Hostname, b"box".to_vec()),
            (Item::SshKeys, b"ssh-ed25519 AAAA\n".to_vec()),
            (Item::UserData, b"#!/bin/sh\n".to_vec()),
        ];
    }

    /// A TINY_CLOUD_VAR a bootstrap of `id` finished in.
    fn bootstrapped(id: &str) -> MemoryHost {
        MemoryHost::new().with_file("/var/lib/cloud/.bootstrap-complete", b"").with_file("/var/lib/cloud/.instance-id", std::format!("{id}\n").as_bytes())
    }

    /// Runs `phases` with their default plans; whether the run failed.
    fn run_phases(host: &mut MemoryPhases<'_>, phases: &[Phase], kept: bool) -> bool {
        let plans = plans(phases, |phase| phase.plan(None, "")).unwrap();
        host.kept = kept;
        run(host, phases, &plans, Cloud::Aws)
    }

    fn all_actions(phases: &[Phase]) -> Vec<Action> {
        phases.iter().flat_map(|phase| phase.plan(None, "").unwrap()).collect()
    }

    #[test]
    fn a_first_boot_fetches_what_every_phase_reads_in_one_round_and_saves_the_id() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        assert!(!run_phases(&mut host, &Phase::ALL, false));
        assert_eq!(host.rounds, [std::vec![Item::InstanceId, Item::UserData, Item::Hostname, Item::SshKeys]]);
        assert_eq!(host.ran, all_actions(&Phase::ALL));
        // A bootstrap in one process has no later phase to keep anything for.
        assert_eq!(host.kept_for_later, 0);
        assert!(!host.later_boot);
        assert_eq!(host.said.last().unwrap(), "settled");
        drop(host);
        assert_eq!(disk.contents("/var/lib/cloud/.instance-id"), Some(&b"i-1\n"[..]));
        assert!(disk.contents("/var/lib/cloud/.bootstrap-complete").is_some());
    }

    #[test]
    fn the_early_phase_alone_fetches_for_the_later_phases_and_keeps_it_for_them() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        // What the boot phase recorded failing is the early phase's starting point.
        host.earlier.add(Action::ExpandRoot);
        assert!(!run_phases(&mut host, &[Phase::Early], false));
        assert_eq!(host.rounds, [std::vec![Item::InstanceId, Item::UserData, Item::Hostname, Item::SshKeys]]);
        assert_eq!(host.kept_for_later, 1);
        assert!(host.progress.failed.contains(Action::ExpandRoot));
        // What an earlier phase kept is not kept again.
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        assert!(!run_phases(&mut host, &[Phase::Main], true));
        assert_eq!((host.kept_loaded, host.kept_for_later), (1, 0));
        // A run that starts the boot reads nothing kept: it was kept by another boot.
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        assert!(!run_phases(&mut host, &[Phase::Boot, Phase::Early], true));
        assert_eq!((host.kept_loaded, host.kept_for_later), (0, 1));
        assert!(reads_metadata(&[Phase::Boot, Phase::Early]) && !reads_metadata(&[Phase::Boot]));
    }

    #[test]
    fn a_later_boot_runs_only_the_every_boot_actions() {
        let mut disk = bootstrapped("i-1");
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        assert!(!run_phases(&mut host, &Phase::ALL, false));
        let every_boot: Vec<Action> = all_actions(&Phase::ALL).into_iter().filter(|a| a.every_boot()).collect();
        assert_eq!(host.ran, every_boot);
        assert!(host.later_boot);
        // A bootstrapped instance whose DMI cannot vouch for it asks for the id alone.
        assert_eq!(host.rounds, [std::vec![Item::InstanceId]]);
        assert!(host.said.contains(&String::from("boot: bootstrap complete: per-boot work only")), "{:#?}", host.said);
        assert!(host.said.contains(&String::from("early: bootstrap complete for i-1: per-boot work only")), "{:#?}", host.said);
        assert!(host.said.contains(&String::from("main: bootstrap complete for i-1: per-boot work only")), "{:#?}", host.said);
    }

    #[test]
    fn a_dmi_that_names_the_instance_spares_every_request() {
        let mut disk = bootstrapped("i-1");
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        host.dmi = Some(true);
        assert!(!run_phases(&mut host, &Phase::ALL, false));
        assert!(host.rounds.is_empty(), "{:?}", host.rounds);
    }

    #[test]
    fn a_new_instance_bootstraps_again_with_the_boot_actions_first() {
        let mut disk = bootstrapped("i-old");
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-new");
        assert!(!run_phases(&mut host, &[Phase::Early], false));
        // Found by asking for the id alone; the rest of the boot is fetched in one more round.
        assert_eq!(host.rounds, [std::vec![Item::InstanceId], std::vec![Item::UserData, Item::Hostname, Item::SshKeys]]);
        assert_eq!(host.ran, all_actions(&[Phase::Boot, Phase::Early]));
        assert!(host.said.contains(&String::from("early: new instance i-new (was i-old): bootstrapping again")), "{:#?}", host.said);
        drop(host);
        assert_eq!(disk.contents("/var/lib/cloud/.instance-id"), Some(&b"i-new\n"[..]));
        assert_eq!(disk.contents("/var/lib/cloud/.bootstrap-complete"), None);
        let cleared = disk.calls.iter().position(|c| c.starts_with("remove") && c.ends_with(".bootstrap-complete")).unwrap();
        let saved = disk.calls.iter().position(|c| c.starts_with("write_volatile") && c.ends_with(".instance-id")).unwrap();
        assert!(cleared < saved, "{:?}", disk.calls);
    }

    #[test]
    fn an_unknown_instance_stops_a_first_boot_and_is_taken_for_the_same_after_one() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        host.failing = std::vec![Item::InstanceId];
        assert!(run_phases(&mut host, &Phase::ALL, false));
        // The boot phase asks nothing; the early phase cannot start, and ends the run.
        assert_eq!(host.ran, all_actions(&[Phase::Boot]));
        assert!(host.said.contains(&String::from("early: failed: @instance-id: timed out")), "{:#?}", host.said);
        assert!(host.said.contains(&String::from("finished early: Some(\"early: failed: @instance-id: timed out\")")), "{:#?}", host.said);
        assert!(!host.said.iter().any(|line| line == "started main"));
        assert_eq!(host.said.last().unwrap(), "settled");
        let mut disk = bootstrapped("i-1");
        let mut host = MemoryPhases::new(disk.dir(VAR));
        host.failing = std::vec![Item::InstanceId];
        assert!(!run_phases(&mut host, &[Phase::Main], false));
        assert!(host.ran.is_empty());
        assert!(host.said.contains(&String::from("main: cannot check the instance-id (@instance-id: timed out): assuming the same instance")), "{:#?}", host.said);
    }

    #[test]
    fn an_item_the_first_round_missed_fails_its_action_only_after_what_arrived_is_applied() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        host.failing = std::vec![Item::Hostname];
        assert!(run_phases(&mut host, &Phase::ALL, false));
        // Not fetched again: the action reports the first round's failure.
        assert_eq!(host.rounds.len(), 1);
        assert!(!host.ran.contains(&Action::SetHostname));
        assert!(host.said.contains(&String::from("main/set_hostname: failed: @hostname: timed out (0 ms)")), "{:#?}", host.said);
        // The rest runs, but the bootstrap is not marked complete: the next boot retries.
        assert!(host.ran.contains(&Action::SetSshKeys) && host.ran.contains(&Action::RunUserdata));
        assert!(!host.ran.contains(&Action::BootstrapComplete));
    }

    #[test]
    fn partial_keys_are_applied_and_the_action_still_fails() {
        let mut disk = MemoryHost::new();
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        // The listing arrived but a key did not: the value is there, the fetch failed.
        host.failing = std::vec![Item::SshKeys];
        assert!(run_phases(&mut host, &[Phase::Main], true));
        assert!(host.ran.contains(&Action::SetSshKeys));
        let said = "main/set_ssh_keys: failed: @ssh-keys: timed out (applied what arrived: done) (0 ms)";
        assert!(host.said.iter().any(|line| line == said), "{:?}", host.said);
    }

    #[test]
    fn only_azure_is_told_of_a_failed_phase_and_of_a_ready_instance_by_its_id() {
        let reports = |cloud: Cloud, failing: bool| {
            let mut disk = MemoryHost::new();
            let mut host = MemoryPhases::new(disk.dir(VAR));
            service(&mut host, b"i-1\n");
            if failing {
                host.failing_actions.push(Action::SetHostname);
            }
            let plans = plans(&Phase::ALL, |phase| phase.plan(None, "")).unwrap();
            assert_eq!(run(&mut host, &Phase::ALL, &plans, cloud), failing);
            host.said.iter().filter(|line| line.starts_with("reported")).cloned().collect::<Vec<_>>()
        };
        assert_eq!(reports(Cloud::Azure, false), ["reported ready: i-1"]);
        assert!(reports(Cloud::Azure, true)[0].starts_with("reported failure: "), "{:?}", reports(Cloud::Azure, true));
        assert!(!reports(Cloud::Azure, true).iter().any(|line| line.starts_with("reported ready")));
        assert!(reports(Cloud::Aws, false).is_empty() && reports(Cloud::Aws, true).is_empty());
    }

    #[test]
    fn azure_is_not_told_of_a_ready_instance_whose_id_it_did_not_give() {
        let mut disk = bootstrapped("i-1");
        let mut host = MemoryPhases::new(disk.dir(VAR));
        host.dmi = Some(true);
        let plans = plans(&[Phase::Main], |phase| phase.plan(None, "")).unwrap();
        assert!(!run(&mut host, &[Phase::Main], &plans, Cloud::Azure));
        assert!(!host.said.iter().any(|line| line.starts_with("reported")), "{:#?}", host.said);
    }

    #[test]
    fn a_phase_of_the_run_that_cannot_be_planned_refuses_it_and_a_later_one_is_left_out() {
        let refuse = |bad: Phase| move |phase: Phase| if phase == bad { Err("no plan") } else { phase.plan(None, "").map_err(|_| "?") };
        assert_eq!(plans(&[Phase::Main], refuse(Phase::Main)).err(), Some("no plan"));
        let planned = plans(&[Phase::Early], refuse(Phase::Final)).unwrap();
        assert!(planned[Phase::Boot as usize].is_empty() && planned[Phase::Final as usize].is_empty());
        assert_eq!(planned[Phase::Main as usize], Phase::Main.plan(None, "").unwrap());
    }

    #[test]
    fn an_unreadable_marker_stops_the_phase() {
        let mut disk = MemoryHost::new();
        disk.fail.insert(std::format!("{VAR}/{}", core::str::from_utf8(MARKER).unwrap()).into_bytes(), HostError { errno: 5 });
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-1");
        assert!(run_phases(&mut host, &[Phase::Boot, Phase::Early], false));
        assert!(host.said.contains(&String::from("boot: cannot read the completion marker: errno 5")), "{:#?}", host.said);
        assert!(!host.said.iter().any(|line| line == "started early"));
    }

    #[test]
    fn an_action_this_build_lacks_is_left_out_of_the_defaults_and_refused_by_name() {
        let no_ssh = |action: Action| (action == Action::SetSshKeys).then_some("ssh");
        let plan = plan_for_build(Phase::Main, None, "", no_ssh).unwrap();
        let mut expected = Phase::Main.plan(None, "").unwrap();
        expected.retain(|&action| action != Action::SetSshKeys);
        assert_eq!(plan, expected);
        assert_eq!(plan_for_build(Phase::Main, Some("set_hostname set_ssh_keys"), "", no_ssh), Err(Unplanned::Missing { action: Action::SetSshKeys, feature: "ssh" }));
        assert_eq!(plan_for_build(Phase::Main, Some("set_hostname"), "", no_ssh).unwrap().as_slice(), [Action::SetHostname]);
        // Skipped, it is not asked for.
        assert!(plan_for_build(Phase::Main, Some("set_hostname set_ssh_keys"), "set_ssh_keys", no_ssh).is_ok());
    }


    #[test]
    fn a_new_instance_reports_the_failures_of_its_boot_actions_with_the_phase_s_own() {
        let mut disk = bootstrapped("i-old");
        let mut host = MemoryPhases::new(disk.dir(VAR));
        service(&mut host, b"i-new");
        host.failing_actions = std::vec![Action::ExpandRoot, Action::UserdataBoothooks];
        assert!(run_phases(&mut host, &[Phase::Early], false));
        let finished = "finished early: Some(\"boot/expand_root: refused\\nearly/userdata_boothooks: refused\")";
        assert!(host.said.iter().any(|line| line == finished), "{:#?}", host.said);
    }

}
