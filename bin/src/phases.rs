//! Runs phases: decides whether this instance still needs them, fetches what their
//! actions read from the metadata service in one go, runs the actions in order, and stops
//! at the first that fails.

use wisp_core::config::Cloud;
use wisp_core::phase::{Phase, Plan};
use wisp_core::provider::Item;
use wisp_os_linux::fs::Dir;
use wisp_os_linux::time::monotonic_ms;

use crate::actions;
use crate::cloud_init_status;
use crate::context::Context;
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
    /// that action runs, so the phase stops at the action that needed it.
    pub failed: Option<ImdsError>,
    /// A later boot of a bootstrapped instance: only every-boot actions run.
    pub later_boot: bool,
    /// The decoded user-data, once an action has needed it.
    decoded: Option<Result<Option<UserData>, Line>>,
    /// Its cloud-config documents, parsed and merged, once an action has needed them.
    config: Option<Result<CloudConfig<'static>, Line>>,
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
    pub fn cloud_config(&mut self, ctx: &Context<'_>, var: &Dir) -> Result<Option<CloudConfig<'static>>, Line> {
        if self.config.is_none() {
            let parsed = match self.userdata(ctx, var) {
                Ok(Some(userdata)) => crate::cloud_config::parse(userdata).and_then(|c| c.validate().map(|()| c).map_err(crate::output::line)),
                Ok(None) => Ok(CloudConfig::default()),
                Err(e) => Err(e),
            };
            if let Ok(config) = &parsed {
                for key in config.unknown_keys() {
                    crate::output::error(format_args!(
                        "cloud-config line {}: {}: not a key wisp knows: ignored",
                        key.line(),
                        Shown(key.as_str().unwrap_or("?").as_bytes())
                    ));
                }
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
    /// does not parse counts as none here (the user-data actions report it and stop).
    pub fn cloud_config_if_valid(&mut self, ctx: &Context<'_>, var: &Dir) -> Option<CloudConfig<'static>> {
        self.cloud_config(ctx, var).ok().flatten()
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
    let mut plans = [const { Plan::new() }; 4];
    for &phase in phases {
        let init = ctx.config.init_actions[phase as usize].as_deref();
        match phase.plan(init, &ctx.config.skip_actions) {
            Ok(plan) => plans[phase as usize] = plan,
            Err(e) => return usage_error(ctx, phases, msg!("{}: {e}", Shown(ctx.config_file.as_bytes()))),
        }
    }
    let cloud = match ctx.cloud() {
        Ok(cloud) => cloud,
        Err(e) => return usage_error(ctx, phases, e),
    };
    let var = match ctx.var_dir() {
        Ok(var) => var,
        Err(e) => return failure(ctx, phases, e),
    };
    let timeouts = ctx.timeouts;
    let Some(metadata) = take_metadata() else { return failure(ctx, phases, msg!("metadata store already in use")) };
    // A local seed is read whole at once, unless only the boot phase (which needs no
    // metadata) runs.
    if matches!(cloud, Cloud::Nocloud | Cloud::Configdrive) && phases.iter().any(|&p| p != Phase::Boot) {
        match crate::seed::load(ctx, cloud, metadata) {
            Ok(source) => ctx.log.line(format_args!("{}: seed {source}", cloud.name())),
            // Seed disks are often detached after the first boot: a completed bootstrap
            // then goes on as with an unreachable metadata service.
            Err(e) if state::is_complete(&var).unwrap_or(false) => ctx.log.line(format_args!("{}: {e}", cloud.name())),
            Err(e) => return failure(ctx, phases, msg!("{}: {e}", cloud.name())),
        }
    }
    if cloud == Cloud::Azure && phases.iter().any(|&p| p != Phase::Boot) {
        match crate::seed::load_azure_custom_data(ctx, metadata) {
            Ok(Some(note)) => ctx.log.line(format_args!("azure: {note}")),
            Ok(None) => {}
            Err(e) => return failure(ctx, phases, msg!("azure: {e}")),
        }
    }
    let mut session = Session { imds: Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl), metadata, failed: None, later_boot: false, decoded: None, config: None };
    session.imds.socket = ctx.guest_socket();
    // What every phase of this run will read, so the first round asks for all of it.
    let mut all_items: heapless::Vec<Item, 6> = heapless::Vec::new();
    for &phase in phases {
        for item in items(&plans[phase as usize]) {
            if !all_items.contains(&item) {
                let _ = all_items.push(item);
            }
        }
    }
    for &phase in phases {
        cloud_init_status::stage_started(ctx, phase, Some(cloud));
        let result = run_phase(ctx, &mut session, &var, phase, &plans, &all_items);
        cloud_init_status::stage_finished(ctx, phase, Some(cloud), result.as_ref().err());
        if let Err(reason) = result {
            if cloud == Cloud::Azure {
                let note = crate::azure::report_failure(&timeouts, &reason);
                ctx.log.line(format_args!("{note}"));
            }
            return EXIT_FAILED;
        }
        if phase == Phase::Main && cloud == Cloud::Azure {
            if let Some(id) = session.metadata.get(Item::InstanceId) {
                let note = crate::azure::report_ready(&timeouts, &var, id.trim_ascii_end());
                ctx.log.line(format_args!("{note}"));
            }
        }
    }
    EXIT_OK
}

const EXIT_OK: i32 = 0;

fn run_phase(
    ctx: &mut Context<'_>,
    session: &mut Session<'_>,
    var: &Dir,
    phase: Phase,
    plans: &[Plan; 4],
    run_items: &[Item],
) -> Result<(), Line> {
    let started = monotonic_ms();
    let complete = state::is_complete(var).map_err(|e| logged(ctx, phase, e))?;
    let plan = &plans[phase as usize];
    if phase == Phase::Boot {
        // The network may not be up yet, so the instance cannot be asked for its id: a
        // new instance is found by the early phase, which then runs boot's actions too.
        if complete {
            ctx.log.line(format_args!("boot: bootstrap complete: nothing to do"));
            return Ok(());
        }
        return run_actions(ctx, session, var, phase, plan, started);
    }
    let wanted: &[Item] = if complete { &[] } else { run_items };
    let fetched = fetch_instance_id(session, wanted);
    let instance_id = match fetched {
        Ok(id) => id,
        Err(e) if complete => {
            ctx.log.line(format_args!("{}: cannot check the instance-id ({e}): assuming the same instance", phase.name()));
            return Ok(());
        }
        Err(e) => return Err(logged(ctx, phase, msg!("failed: {e}"))),
    };
    let mut saved_buf = [0u8; state::INSTANCE_ID_LIMIT];
    let saved = state::saved_instance_id(var, &mut saved_buf);
    let same_instance = saved == Some(instance_id.as_slice());
    if complete && same_instance {
        let every_boot: Plan = plan.iter().copied().filter(|action| action.every_boot()).collect();
        if every_boot.is_empty() {
            ctx.log.line(format_args!("{}: bootstrap complete for {}: nothing to do", phase.name(), Shown(&instance_id)));
            return Ok(());
        }
        ctx.log.line(format_args!("{}: bootstrap complete for {}: per-boot work only", phase.name(), Shown(&instance_id)));
        session.later_boot = true;
        return run_actions(ctx, session, var, phase, &every_boot, started);
    }
    if complete {
        ctx.log.line(format_args!(
            "{}: new instance {} (was {}): bootstrapping again",
            phase.name(),
            Shown(&instance_id),
            Shown(saved.unwrap_or(b"unknown"))
        ));
        state::set_complete(var, false).map_err(|e| logged(ctx, phase, e))?;
    }
    if !same_instance {
        state::save_instance_id(var, &instance_id).map_err(|e| logged(ctx, phase, e))?;
    }
    if complete && phase == Phase::Early {
        let boot = boot_plan(ctx)?;
        run_actions(ctx, session, var, Phase::Boot, &boot, monotonic_ms())?;
    }
    run_actions(ctx, session, var, phase, plan, started)
}

fn boot_plan(ctx: &mut Context<'_>) -> Result<Plan, Line> {
    let init = ctx.config.init_actions[Phase::Boot as usize].as_deref();
    Phase::Boot.plan(init, &ctx.config.skip_actions).map_err(|e| logged(ctx, Phase::Boot, msg!("{e}")))
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
    if let Err(e) = session.imds.fetch(session.metadata, &wanted) {
        match e.item() {
            Some(item) if item != Item::InstanceId => session.failed = Some(e),
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

fn run_actions(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, phase: Phase, plan: &Plan, started: u64) -> Result<(), Line> {
    for &action in plan {
        let action_started = monotonic_ms();
        let result = match action.metadata() {
            Some(item) => match session.failed.filter(|e| e.item() == Some(item)) {
                Some(e) => Err(msg!("{e}")),
                // Only this action's item: another item's failure is not this action's.
                None => session
                    .imds
                    .fetch(session.metadata, &[item])
                    .map_err(crate::output::line)
                    .and_then(|()| actions::run(ctx, session, var, action)),
            },
            None => actions::run(ctx, session, var, action),
        };
        let ms = monotonic_ms() - action_started;
        let name = action.name();
        match result {
            Ok(note) => ctx.log.line(format_args!("{}/{name}: ok: {} ({ms} ms)", phase.name(), note)),
            Err(e) => {
                ctx.log.line(format_args!("{}/{name}: failed: {} ({ms} ms)", phase.name(), e));
                ctx.log.line(format_args!("{}: stopped at {name}", phase.name()));
                return Err(msg!("{}/{name}: {e}", phase.name()));
            }
        }
    }
    let ms = monotonic_ms() - started;
    let requests = session.imds.requests;
    ctx.log.line(format_args!("{}: done ({ms} ms, {requests} metadata requests so far)", phase.name()));
    Ok(())
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

