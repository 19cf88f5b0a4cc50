//! Runs phases: fetches what their actions read from the metadata service in one go,
//! follows the course core's `instance` chooses (first boot, later boot, new instance),
//! and runs the actions in order (core's `phase_run`). A failed action is logged and
//! recorded; every later action that does not need it still runs, and the phase ends
//! with status 1.

use wisp_core::config::Cloud;
use wisp_core::instance::{self, Course, Current, Progress, Saved, INSTANCE_ID_LIMIT};
use wisp_core::host::actions::Actions;
use wisp_core::phase::{Action, Phase, Plan};
use wisp_core::phase_run;
use wisp_core::provider::Item;
use wisp_core::text::Plain;
use wisp_os_linux::fs::Dir;
use wisp_os_linux::time::monotonic_ms;

use crate::actions;
use crate::cloud_init_status;
use crate::context::Context;
use crate::host::OpenDir;
use crate::features::missing_for;
use crate::imds::{take_metadata, Imds};
use crate::output::{Message, Shown};
use crate::state;
use crate::instance_id;
use crate::session::Session;
use crate::{EXIT_FAILED, EXIT_USAGE};

/// Runs `phases` in order; returns the exit status.
pub fn run(ctx: &mut Context<'_>, phases: &[Phase]) -> i32 {
    ctx.open_log();
    if let Some(file) = wisp_core::phase::disabled_by(&mut crate::host::files::Root::of(ctx)) {
        ctx.log.line(format_args!("disabled by {file}: nothing to do", file = Plain(file)));
        // Each phase is done at once, so `cloud-init status --wait` has nothing to wait for.
        for &phase in phases {
            cloud_init_status::stage_started(ctx, phase, None);
            cloud_init_status::stage_finished(ctx, phase, None, None);
        }
        return 0;
    }
    // The plans of this run's phases and of the later ones, whose metadata the first
    // fetch of this boot gets for them.
    let mut plans = [const { Plan::new() }; 4];
    for &phase in &Phase::ALL[phases[0] as usize..] {
        match plan(ctx, phase) {
            Ok(plan) => plans[phase as usize] = plan,
            Err(e) if phases.contains(&phase) => return usage_error(ctx, phases, e),
            Err(_) => {}
        }
    }
    let cloud = match crate::cloud::resolve(ctx) {
        Ok(cloud) => cloud,
        Err(e) => return usage_error(ctx, phases, e),
    };
    let var = match ctx.var_dir() {
        Ok(var) => var,
        Err(e) => return failure(ctx, phases, e),
    };
    let timeouts = ctx.timeouts;
    let metadata = match take_metadata() {
        Ok(metadata) => metadata,
        Err(e) => return failure(ctx, phases, e),
    };
    // A local seed is read whole at once, unless only the boot phase (which needs no
    // metadata) runs.
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if matches!(cloud, Cloud::Nocloud | Cloud::Configdrive) && phases.iter().any(|&p| p != Phase::Boot) {
        match crate::seed::load(ctx, cloud, metadata, Some(&var)) {
            Ok(source) => ctx.log.line(format_args!("{}: seed {source}", Plain(cloud.name()))),
            // Seed disks are often detached after the first boot: a completed bootstrap
            // then goes on as with an unreachable metadata service.
            Err(e) if state::is_complete(&var).unwrap_or(false) => ctx.log.line(format_args!("{}: {e}", Plain(cloud.name()))),
            Err(e) => return failure(ctx, phases, msg!("{}: {e}", Plain(cloud.name()))),
        }
    }
    #[cfg(feature = "azure")]
    if cloud == Cloud::Azure && phases.iter().any(|&p| p != Phase::Boot) {
        match crate::seed::load_azure_custom_data(ctx, metadata) {
            Ok(Some(note)) => ctx.log.line(format_args!("azure: {note}")),
            Ok(None) => {}
            Err(e) => return failure(ctx, phases, msg!("azure: {e}")),
        }
    }
    // What an earlier phase of this boot fetched, unless this run starts the boot.
    let kept = phases[0] != Phase::Boot && crate::boot_cache::load(ctx, metadata);
    let mut session = Session {
        imds: Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl),
        metadata,
        fetch_failed: None,
        progress: Progress::default(),
        fetched_once: false,
        later_boot: false,
        decoded: None,
        #[cfg(feature = "cloud-config")]
        config: None,
        cloud,
        keep_for_later: !kept && !phases.contains(&Phase::Final),
    };
    #[cfg(feature = "incus")]
    {
        session.imds.socket = ctx.guest_socket();
    }
    // What every phase from this one to the last will read, so the first round asks for
    // all of it.
    let all_items = wisp_core::phase::metadata_items(&plans, phases[0]);
    let mut status = EXIT_OK;
    for &phase in phases {
        let earlier = cloud_init_status::stage_started(ctx, phase, Some(cloud));
        // A phase run alone goes on from what the earlier phases of this boot recorded.
        if phase == phases[0] {
            session.progress = Progress::after(earlier);
        }
        // A phase whose actions failed lets the next phase run (each runs what does not
        // need the failures); one that could not start its actions ends the run.
        let (errors, go_on) = match run_phase(ctx, &mut session, &var, phase, &plans, &all_items) {
            Ok(errors) => (errors, true),
            Err(reason) => (Some(reason), false),
        };
        cloud_init_status::stage_finished(ctx, phase, Some(cloud), errors.as_ref());
        #[cfg_attr(not(feature = "azure"), allow(unused_variables))]
        if let Some(reason) = errors {
            #[cfg(feature = "azure")]
            if cloud == Cloud::Azure {
                let note = crate::azure::report_failure(&timeouts, &reason);
                ctx.log.line(format_args!("{note}"));
            }
            status = EXIT_FAILED;
            if !go_on {
                break;
            }
            continue;
        }
        #[cfg(feature = "azure")]
        if phase == Phase::Main && cloud == Cloud::Azure {
            if let Some(id) = session.metadata.get(Item::InstanceId) {
                let note = crate::azure::report_ready(&timeouts, &var, id.trim_ascii_end());
                ctx.log.line(format_args!("{note}"));
            }
        }
    }
    if let Err(e) = crate::markers::settle(&var) {
        ctx.log.line(format_args!("{e}"));
        status = EXIT_FAILED;
    }
    if session.progress.held_back() {
        EXIT_FAILED
    } else {
        status
    }
}

const EXIT_OK: i32 = 0;

fn run_phase(
    ctx: &mut Context<'_>,
    session: &mut Session<'_>,
    var: &Dir,
    phase: Phase,
    plans: &[Plan; 4],
    run_items: &[Item],
) -> Result<Option<Message>, Message> {
    let started = monotonic_ms();
    let mut saved_buf = [0u8; INSTANCE_ID_LIMIT];
    let saved = Saved::read(&mut OpenDir { dir: var }, &mut saved_buf)
        .map_err(|e| logged(ctx, phase, crate::output::os_error("cannot read the completion marker", crate::host::errno(e))))?;
    let plan = &plans[phase as usize];
    let mut id: heapless::Vec<u8, INSTANCE_ID_LIMIT> = heapless::Vec::new();
    let mut unknown = None;
    // The network may not be up in the boot phase, so the instance cannot be asked for
    // its id there: a new instance is found by the early phase.
    let current = match phase {
        Phase::Boot => Current::NotAsked,
        _ => match current_instance_id(ctx, session, var, saved, run_items) {
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
    let unknown = unknown.unwrap_or_else(Message::new);
    match saved.course(phase, current) {
        Course::EveryBootOnly => {
            let every_boot = instance::every_boot(plan);
            let what = if every_boot.is_empty() { "nothing to do" } else { "per-boot work only" };
            match phase {
                Phase::Boot => ctx.log.line(format_args!("boot: bootstrap complete: {what}", what = Plain(what))),
                _ => ctx.log.line(format_args!("{}: bootstrap complete for {}: {what}", Plain(phase.name()), Shown(&id), what = Plain(what))),
            }
            if every_boot.is_empty() {
                return Ok(None);
            }
            session.later_boot = phase != Phase::Boot;
            return Ok(run_actions(ctx, session, var, phase, &every_boot, started));
        }
        Course::AssumeSame => {
            ctx.log.line(format_args!("{}: cannot check the instance-id ({unknown}): assuming the same instance", Plain(phase.name())));
            return Ok(None);
        }
        Course::Stop => return Err(logged(ctx, phase, msg!("failed: {unknown}"))),
        Course::Bootstrap { save_id } => {
            if save_id {
                instance_id::save(var, &id).map_err(|e| logged(ctx, phase, e))?;
            }
        }
        Course::NewInstance { was, boot_actions_first } => {
            ctx.log.line(format_args!("{}: new instance {} (was {}): bootstrapping again", Plain(phase.name()), Shown(&id), Shown(was.unwrap_or(b"unknown"))));
            state::set_complete(ctx, var, false).map_err(|e| logged(ctx, phase, e))?;
            instance_id::save(var, &id).map_err(|e| logged(ctx, phase, e))?;
            if boot_actions_first {
                let boot = boot_plan(ctx)?;
                let boot_errors = run_actions(ctx, session, var, Phase::Boot, &boot, monotonic_ms());
                return Ok(match (boot_errors, run_actions(ctx, session, var, phase, plan, started)) {
                    (Some(mut boot), Some(errors)) => {
                        let _ = core::fmt::Write::write_fmt(&mut boot, format_args!("\n{errors}"));
                        Some(boot)
                    }
                    (boot, errors) => boot.or(errors),
                });
            }
        }
    }
    Ok(run_actions(ctx, session, var, phase, plan, started))
}

/// The instance-id, asked of the DMI where it names the instance (a later boot then asks
/// the service nothing), else of the metadata service with what the run needs.
fn current_instance_id(
    ctx: &Context<'_>,
    session: &mut Session<'_>,
    var: &Dir,
    saved: Saved<'_>,
    run_items: &[Item],
) -> Result<heapless::Vec<u8, INSTANCE_ID_LIMIT>, Message> {
    let dmi_says = match (saved.complete, saved.instance_id) {
        (true, Some(id)) => crate::boot_cache::dmi_same_instance(ctx, var, session.cloud, id),
        _ => None,
    };
    // Later phases of the run ask only for the instance-id (fetched already): an item
    // the first round could not fetch is not waited for again.
    let first_round = !session.fetched_once;
    let wanted = saved.asked_with_id(first_round, dmi_says, run_items);
    let fetched = match saved.vouched_id(dmi_says) {
        Some(id) => Ok(heapless::Vec::from_slice(id).unwrap_or_default()),
        None => fetch_instance_id(session, wanted),
    };
    // A new instance found by asking for the id alone: what the rest of the boot reads,
    // as a first round with the same token, kept below for the later phases.
    if first_round && wanted.is_empty() && fetched.as_ref().is_ok_and(|id| saved.is_another_instance(id)) {
        session.fetched_once = false;
        let _ = fetch_instance_id(session, run_items);
    }
    if session.keep_for_later && session.imds.requests > 0 {
        crate::boot_cache::save(ctx, session.metadata);
        session.keep_for_later = false;
    }
    fetched
}

fn boot_plan(ctx: &mut Context<'_>) -> Result<Plan, Message> {
    plan(ctx, Phase::Boot).map_err(|e| logged(ctx, Phase::Boot, e))
}

/// The actions `phase` runs by the configuration. An action that needs a feature this
/// build lacks is left out of the defaults, and refused by name when INIT_ACTIONS_* asks
/// for it.
fn plan(ctx: &Context<'_>, phase: Phase) -> Result<Plan, Message> {
    let file = Shown(ctx.config_file.as_bytes());
    let init = ctx.config.init_actions[phase as usize].as_deref();
    let mut plan = phase.plan(init, &ctx.config.skip_actions).map_err(|e| msg!("{file}: {e}"))?;
    if let (Some(_), Some(&action)) = (init, plan.iter().find(|&&action| missing_for(action).is_some())) {
        let what = msg!("{file}: {}: {}", Plain(phase.init_actions_variable()), Plain(action.name()));
        return Err(crate::features::missing(what.text(), missing_for(action).unwrap_or("it")));
    }
    plan.retain(|&action| missing_for(action).is_none());
    Ok(plan)
}

/// Logs a phase's failure and returns it as the reason the run failed.
fn logged(ctx: &mut Context<'_>, phase: Phase, e: Message) -> Message {
    let reason = msg!("{}: {e}", Plain(phase.name()));
    ctx.log.line(format_args!("{reason}"));
    reason
}

/// The instance-id, fetched together with `also` so that a first boot costs one round.
fn fetch_instance_id(session: &mut Session<'_>, also: &[Item]) -> Result<heapless::Vec<u8, INSTANCE_ID_LIMIT>, Message> {
    let mut wanted: heapless::Vec<Item, 6> = heapless::Vec::new();
    let _ = wanted.push(Item::InstanceId);
    let _ = wanted.extend_from_slice(also);
    let first_round = !session.fetched_once;
    session.fetched_once = true;
    if let Err(e) = session.imds.fetch(session.metadata, &wanted) {
        match instance::failure_deferred(e.item(), first_round) {
            true => session.fetch_failed = Some(e),
            false => return Err(msg!("{e}")),
        }
    }
    let id = session.metadata.get(Item::InstanceId).unwrap_or(b"");
    let id = id.trim_ascii_end();
    if !instance::is_valid_id(id) {
        return Err(msg!("the metadata service gave an invalid instance-id \"{}\"", Shown(&id[..id.len().min(64)])));
    }
    Ok(heapless::Vec::from_slice(id).unwrap_or_default())
}

/// Runs the plan's actions (core's `phase_run`); the failures, one per line, as
/// `phase/action: reason`.
fn run_actions(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, phase: Phase, plan: &Plan, started: u64) -> Option<Message> {
    let mut errors = Message::new();
    let failed = phase_run::run_actions(&mut PhaseActions { ctx, session, var }, phase, plan, started, &mut errors);
    (failed > 0).then_some(errors)
}

/// The actions of a phase, on this run's context and session.
struct PhaseActions<'r, 'c, 's> {
    ctx: &'r mut Context<'c>,
    session: &'r mut Session<'s>,
    var: &'r Dir,
}

impl Actions for PhaseActions<'_, '_, '_> {
    type Text = Message;

    fn run(&mut self, action: Action) -> Result<Message, Message> {
        run_action(self.ctx, self.session, self.var, action)
    }

    fn progress(&mut self) -> &mut Progress {
        &mut self.session.progress
    }

    fn log(&mut self, args: core::fmt::Arguments<'_>) {
        self.ctx.log.line(args);
    }

    fn now_ms(&mut self) -> u64 {
        monotonic_ms()
    }

    fn requests(&self) -> u32 {
        self.session.imds.requests
    }

    fn crash_point(&mut self) {
        crate::markers::crash_point(self.ctx);
    }
}

/// One action, with the metadata item it reads. An item the first round could not fetch
/// fails its action, after the action has applied what did arrive (the keys that were
/// fetched when one was not), so the next boot retries it.
fn run_action(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Message, Message> {
    let Some(item) = action.metadata() else { return actions::run(ctx, session, var, action) };
    let fetch_failed = match session.fetch_failed.filter(|e| e.item() == Some(item)) {
        Some(e) => Some(msg!("{e}")),
        // Only this action's item: another item's failure is not this action's.
        None => session.imds.fetch(session.metadata, &[item]).err().map(crate::output::line),
    };
    match fetch_failed {
        None => actions::run(ctx, session, var, action),
        Some(e) if item == Item::SshKeys && session.metadata.get(item).is_some() => {
            let applied = actions::run(ctx, session, var, action)?;
            Err(msg!("{e} (applied what arrived: {applied})"))
        }
        Some(e) => Err(e),
    }
}

fn usage_error(ctx: &mut Context<'_>, phases: &[Phase], message: Message) -> i32 {
    failure(ctx, phases, message);
    EXIT_USAGE
}

/// A failure before the first phase started counts as the first phase's, so that
/// `cloud-init status --wait` ends.
fn failure(ctx: &mut Context<'_>, phases: &[Phase], message: Message) -> i32 {
    ctx.log.line(format_args!("{message}"));
    cloud_init_status::stage_finished(ctx, phases[0], None, Some(&message));
    EXIT_FAILED
}

