//! Runs phases: decides whether this instance still needs them, fetches what their
//! actions read from the metadata service in one go, and runs the actions in order. A
//! failed action is logged and recorded; every later action that does not need it still
//! runs (core's `Action::needs`), and the phase ends with status 1.

use wisp_core::config::Cloud;
use wisp_core::phase::{Action, Failed, Needs, Phase, Plan};
use wisp_core::provider::Item;
use wisp_os_linux::fs::Dir;
use wisp_os_linux::time::monotonic_ms;

use crate::actions;
use crate::cloud_init_status;
use crate::context::Context;
use crate::features::missing_for;
use crate::imds::{take_metadata, Imds, ImdsError, Metadata};
use crate::output::{Line, Shown};
use crate::state;
use crate::userdata::{Includes, UserData};
use wisp_core::cloud_config::CloudConfig;
use wisp_core::retry::Timeouts;
use crate::{EXIT_FAILED, EXIT_USAGE};

/// Files that switch wisp off, as tiny-cloud's does.
const DISABLED_FILES: [&str; 2] = ["/etc/wisp.disabled", "/etc/tiny-cloud.disabled"];

/// The metadata service and what was read from it, shared by the phases of one run.
pub struct Session<'c> {
    pub imds: Imds<'c>,
    pub metadata: &'c mut Metadata,
    /// A failure of the first round that belongs to one action's item, reported when
    /// that action runs (and never fetched again this run).
    pub fetch_failed: Option<ImdsError>,
    /// The actions that failed, or were held back, this boot.
    pub failed: Failed,
    /// Whether an action was held back by a failure this run: the run then fails too.
    held_back: bool,
    /// Whether the first round, which fetches what every phase of the run reads, is done.
    fetched_once: bool,
    /// A later boot of a bootstrapped instance: only every-boot actions run.
    pub later_boot: bool,
    /// The decoded user-data, once an action has needed it.
    decoded: Option<Result<Option<UserData>, Line>>,
    /// Its cloud-config documents, parsed and merged, once an action has needed them.
    #[cfg(feature = "cloud-config")]
    config: Option<Result<CloudConfig<'static>, Line>>,
    /// Whether an action has reported why the user-data cannot be applied.
    reported: bool,
    cloud: Cloud,
    /// What this run fetches is kept for the later phases of this boot (other processes).
    keep_for_later: bool,
}

impl Session<'_> {
    /// The decoded user-data (`None` when there is none), decoded once per run; includes
    /// come from what the early phase fetched.
    pub fn userdata(&mut self, ctx: &Context<'_>, var: &Dir) -> Result<Option<&UserData>, Line> {
        if self.decoded.is_none() {
            self.decoded = Some(crate::userdata::load(ctx, var, Includes::Kept));
        }
        match self.decoded.as_ref() {
            Some(Ok(userdata)) => Ok(userdata.as_ref()),
            Some(Err(e)) => Err(*e),
            None => Ok(None),
        }
    }

    /// The merged cloud-config (`None` when the user-data has none); parsed once per run,
    /// with a warning for each key wisp does not know.
    #[cfg(feature = "cloud-config")]
    pub fn cloud_config(&mut self, ctx: &Context<'_>, var: &Dir) -> Result<Option<CloudConfig<'static>>, Line> {
        if self.config.is_none() {
            let parsed = match self.userdata(ctx, var) {
                Ok(Some(userdata)) => crate::cloud_config::parse(userdata).and_then(|c| c.validate().map(|()| c).map_err(crate::output::line)),
                Ok(None) => Ok(CloudConfig::default()),
                Err(e) => Err(e),
            };
            if let Ok(config) = &parsed {
                crate::cloud_config::warn_unapplied(config, false, &|args| ctx.warn(args));
            }
            self.config = Some(parsed);
        }
        match self.config.as_ref() {
            Some(Ok(config)) if !config.is_empty() => Ok(Some(config.clone())),
            Some(Err(e)) => Err(*e),
            _ => Ok(None),
        }
    }

    /// The cloud-config for the actions that run from metadata too: a document that
    /// does not parse counts as none here (the user-data actions report it).
    #[cfg(feature = "cloud-config")]
    pub fn cloud_config_if_valid(&mut self, ctx: &Context<'_>, var: &Dir) -> Option<CloudConfig<'static>> {
        self.cloud_config(ctx, var).ok().flatten()
    }

    /// A build without cloud-config has none: user-data that holds some does not decode.
    #[cfg(not(feature = "cloud-config"))]
    pub fn cloud_config_if_valid(&mut self, _: &Context<'_>, _: &Dir) -> Option<CloudConfig<'static>> {
        None
    }

    /// Why the user-data cannot be applied, reported by the first action that needs it;
    /// the later user-data actions of the run are then held back by it.
    pub fn report(&mut self, e: Line) -> Line {
        self.reported = true;
        e
    }

    /// Decodes the user-data just saved, fetching its includes.
    pub fn decode_saved(&mut self, ctx: &Context<'_>, var: &Dir, timeouts: &Timeouts) -> Result<Option<&UserData>, Line> {
        self.decoded = Some(crate::userdata::load(ctx, var, Includes::Fetch(timeouts)));
        self.userdata(ctx, var)
    }
}

/// Runs `phases` in order; returns the exit status.
pub fn run(ctx: &mut Context<'_>, phases: &[Phase]) -> i32 {
    ctx.open_log();
    for file in DISABLED_FILES {
        if ctx.path(file.as_bytes()).map(|p| exists(&p)).unwrap_or(false) {
            ctx.log.line(format_args!("disabled by {file}: nothing to do"));
            // Each phase is done at once, so `cloud-init status --wait` has nothing to wait for.
            for &phase in phases {
                cloud_init_status::stage_started(ctx, phase, None);
                cloud_init_status::stage_finished(ctx, phase, None, None);
            }
            return 0;
        }
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
            Ok(source) => ctx.log.line(format_args!("{}: seed {source}", cloud.name())),
            // Seed disks are often detached after the first boot: a completed bootstrap
            // then goes on as with an unreachable metadata service.
            Err(e) if state::is_complete(&var).unwrap_or(false) => ctx.log.line(format_args!("{}: {e}", cloud.name())),
            Err(e) => return failure(ctx, phases, msg!("{}: {e}", cloud.name())),
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
        failed: Failed::default(),
        fetched_once: false,
        held_back: false,
        later_boot: false,
        decoded: None,
        #[cfg(feature = "cloud-config")]
        config: None,
        reported: false,
        cloud,
        keep_for_later: !kept && !phases.contains(&Phase::Final),
    };
    #[cfg(feature = "incus")]
    {
        session.imds.socket = ctx.guest_socket();
    }
    // What every phase from this one to the last will read, so the first round asks for
    // all of it.
    let mut all_items: heapless::Vec<Item, 6> = heapless::Vec::new();
    for &phase in &Phase::ALL[phases[0] as usize..] {
        for item in items(&plans[phase as usize]) {
            if !all_items.contains(&item) {
                let _ = all_items.push(item);
            }
        }
    }
    let mut status = EXIT_OK;
    for &phase in phases {
        let earlier = cloud_init_status::stage_started(ctx, phase, Some(cloud));
        // A phase run alone goes on from what the earlier phases of this boot recorded.
        if phase == phases[0] {
            session.failed = earlier;
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
    if session.held_back {
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
) -> Result<Option<Line>, Line> {
    let started = monotonic_ms();
    let complete = state::is_complete(var).map_err(|e| logged(ctx, phase, e))?;
    let plan = &plans[phase as usize];
    if phase == Phase::Boot {
        // The network may not be up yet, so the instance cannot be asked for its id: a
        // new instance is found by the early phase, which then runs boot's actions too.
        if complete {
            let every_boot: Plan = plan.iter().copied().filter(|action| action.every_boot()).collect();
            if every_boot.is_empty() {
                ctx.log.line(format_args!("boot: bootstrap complete: nothing to do"));
                return Ok(None);
            }
            ctx.log.line(format_args!("boot: bootstrap complete: per-boot work only"));
            return Ok(run_actions(ctx, session, var, phase, &every_boot, started));
        }
        return Ok(run_actions(ctx, session, var, phase, plan, started));
    }
    let mut saved_buf = [0u8; state::INSTANCE_ID_LIMIT];
    let saved = state::saved_instance_id(var, &mut saved_buf);
    // A later boot asks the service nothing where the DMI names the instance.
    let dmi_says = match (complete, saved) {
        (true, Some(id)) => crate::boot_cache::dmi_same_instance(ctx, session.cloud, id),
        _ => None,
    };
    // Later phases of the run ask only for the instance-id (fetched already): an item
    // the first round could not fetch is not waited for again.
    let wanted: &[Item] = if session.fetched_once || (complete && dmi_says.is_none()) { &[] } else { run_items };
    let fetched = match (dmi_says, saved) {
        (Some(true), Some(id)) => Ok(heapless::Vec::from_slice(id).unwrap_or_default()),
        _ => fetch_instance_id(session, wanted),
    };
    if session.keep_for_later && session.imds.requests > 0 {
        crate::boot_cache::save(ctx, session.metadata);
        session.keep_for_later = false;
    }
    let instance_id = match fetched {
        Ok(id) => id,
        Err(e) if complete => {
            ctx.log.line(format_args!("{}: cannot check the instance-id ({e}): assuming the same instance", phase.name()));
            return Ok(None);
        }
        Err(e) => return Err(logged(ctx, phase, msg!("failed: {e}"))),
    };
    let same_instance = saved == Some(instance_id.as_slice());
    if complete && same_instance {
        let every_boot: Plan = plan.iter().copied().filter(|action| action.every_boot()).collect();
        if every_boot.is_empty() {
            ctx.log.line(format_args!("{}: bootstrap complete for {}: nothing to do", phase.name(), Shown(&instance_id)));
            return Ok(None);
        }
        ctx.log.line(format_args!("{}: bootstrap complete for {}: per-boot work only", phase.name(), Shown(&instance_id)));
        session.later_boot = true;
        return Ok(run_actions(ctx, session, var, phase, &every_boot, started));
    }
    if complete {
        ctx.log.line(format_args!(
            "{}: new instance {} (was {}): bootstrapping again",
            phase.name(),
            Shown(&instance_id),
            Shown(saved.unwrap_or(b"unknown"))
        ));
        state::set_complete(ctx, var, false).map_err(|e| logged(ctx, phase, e))?;
    }
    if !same_instance {
        state::save_instance_id(var, &instance_id).map_err(|e| logged(ctx, phase, e))?;
    }
    let mut boot_errors = None;
    if complete && phase == Phase::Early {
        let boot = boot_plan(ctx)?;
        boot_errors = run_actions(ctx, session, var, Phase::Boot, &boot, monotonic_ms());
    }
    Ok(match (boot_errors, run_actions(ctx, session, var, phase, plan, started)) {
        (Some(mut boot), Some(errors)) => {
            let _ = core::fmt::Write::write_fmt(&mut boot, format_args!("\n{errors}"));
            Some(boot)
        }
        (boot, errors) => boot.or(errors),
    })
}

fn boot_plan(ctx: &mut Context<'_>) -> Result<Plan, Line> {
    plan(ctx, Phase::Boot).map_err(|e| logged(ctx, Phase::Boot, e))
}

/// The actions `phase` runs by the configuration. An action that needs a feature this
/// build lacks is left out of the defaults, and refused by name when INIT_ACTIONS_* asks
/// for it.
fn plan(ctx: &Context<'_>, phase: Phase) -> Result<Plan, Line> {
    let file = Shown(ctx.config_file.as_bytes());
    let init = ctx.config.init_actions[phase as usize].as_deref();
    let mut plan = phase.plan(init, &ctx.config.skip_actions).map_err(|e| msg!("{file}: {e}"))?;
    if let (Some(_), Some(&action)) = (init, plan.iter().find(|&&action| missing_for(action).is_some())) {
        let what = msg!("{file}: {}: {}", phase.init_actions_variable(), action.name());
        return Err(crate::features::missing(what.text(), missing_for(action).unwrap_or("it")));
    }
    plan.retain(|&action| missing_for(action).is_none());
    Ok(plan)
}

/// Logs a phase's failure and returns it as the reason the run failed.
fn logged(ctx: &mut Context<'_>, phase: Phase, e: Line) -> Line {
    let reason = msg!("{}: {e}", phase.name());
    ctx.log.line(format_args!("{reason}"));
    reason
}

/// The instance-id, fetched together with `also` so that a first boot costs one round.
fn fetch_instance_id(session: &mut Session<'_>, also: &[Item]) -> Result<heapless::Vec<u8, { state::INSTANCE_ID_LIMIT }>, Line> {
    let mut wanted: heapless::Vec<Item, 6> = heapless::Vec::new();
    let _ = wanted.push(Item::InstanceId);
    let _ = wanted.extend_from_slice(also);
    let first_round = !session.fetched_once;
    session.fetched_once = true;
    if let Err(e) = session.imds.fetch(session.metadata, &wanted) {
        match e.item() {
            Some(item) if item != Item::InstanceId && first_round => session.fetch_failed = Some(e),
            _ => return Err(msg!("{e}")),
        }
    }
    let id = session.metadata.get(Item::InstanceId).unwrap_or(b"");
    let id = id.trim_ascii_end();
    if id.is_empty() || id.len() > state::INSTANCE_ID_LIMIT || !id.iter().all(|b| b.is_ascii_graphic() && *b != b'/') {
        return Err(msg!("the metadata service gave an invalid instance-id \"{}\"", Shown(&id[..id.len().min(64)])));
    }
    Ok(heapless::Vec::from_slice(id).unwrap_or_default())
}

fn items(plan: &Plan) -> heapless::Vec<Item, 6> {
    let mut items = heapless::Vec::new();
    for item in plan.iter().filter_map(|action| action.metadata()) {
        if !items.contains(&item) {
            let _ = items.push(item);
        }
    }
    items
}

/// Runs the plan's actions, each that nothing it needs failed; the failures, one per
/// line, as `phase/action: reason`.
fn run_actions(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, phase: Phase, plan: &Plan, started: u64) -> Option<Line> {
    let mut errors: Option<Line> = None;
    let mut failures = 0;
    for &action in plan {
        crate::markers::crash_point(ctx);
        let action_started = monotonic_ms();
        let reason = match action.held_back(session.failed) {
            Some(reason) => Some(msg!("{reason}")),
            None if session.reported && action.needs() == Needs::Actions(&[Action::SaveUserdata]) => {
                Some(msg!("not run: the user-data's error is above"))
            }
            None => None,
        };
        if let Some(reason) = reason {
            // Recorded as held back, not as an error of its own: the error is the cause's.
            session.failed.add(action);
            session.held_back = true;
            ctx.log.line(format_args!("{}/{}: {reason}", phase.name(), action.name()));
            continue;
        }
        let result = run_action(ctx, session, var, action);
        let ms = monotonic_ms() - action_started;
        let name = action.name();
        match result {
            Ok(note) => ctx.log.line(format_args!("{}/{name}: ok: {} ({ms} ms)", phase.name(), note)),
            Err(e) => {
                session.failed.add(action);
                failures += 1;
                ctx.log.line(format_args!("{}/{name}: failed: {} ({ms} ms)", phase.name(), e));
                let line = errors.get_or_insert_with(Line::new);
                let separator = if line.text().is_empty() { "" } else { "\n" };
                let _ = core::fmt::Write::write_fmt(line, format_args!("{separator}{}/{name}: {e}", phase.name()));
            }
        }
    }
    let ms = monotonic_ms() - started;
    let requests = session.imds.requests;
    ctx.log.line(format_args!("{}: done, {failures} failed ({ms} ms, {requests} metadata requests so far)", phase.name()));
    errors
}

/// One action, with the metadata item it reads. An item the first round could not fetch
/// fails its action, after the action has applied what did arrive (the keys that were
/// fetched when one was not), so the next boot retries it.
fn run_action(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Line, Line> {
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

fn usage_error(ctx: &mut Context<'_>, phases: &[Phase], message: Line) -> i32 {
    failure(ctx, phases, message);
    EXIT_USAGE
}

/// A failure before the first phase started counts as the first phase's, so that
/// `cloud-init status --wait` ends.
fn failure(ctx: &mut Context<'_>, phases: &[Phase], message: Line) -> i32 {
    ctx.log.line(format_args!("{message}"));
    cloud_init_status::stage_finished(ctx, phases[0], None, Some(&message));
    EXIT_FAILED
}

fn exists(path: &wisp_os_linux::cpath::CPath) -> bool {
    matches!(wisp_os_linux::fs::metadata(path.as_cstr()), Ok(Some(_)))
}

