//! `wisp boot|early|main|final|bootstrap`: what a run needs before its first phase (the
//! plans, the cloud, TINY_CLOUD_VAR, a local seed), then core's `phases::run` on this
//! run's context and session (`PhaseHost`), all within core's `phases_start::run`.

use wisp_core::boot_cache;
use wisp_core::host::actions::Actions;
use wisp_core::host::phases::Phases;
use wisp_core::host::HostError;
use wisp_core::instance::Progress;
use wisp_core::phases::Unplanned;
use wisp_core::phases_start::{self, Unstarted};
use wisp_core::session::Shared;
use wisp_core::phase::{Action, Phase, Plan};
use wisp_core::provider::Item;
use wisp_core::retry::Timeouts;
use wisp_core::text::Plain;
use wisp_os_linux::memory::Mapping;
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::time::monotonic_ms;

use crate::actions;
use crate::context::Context;
use crate::host::{Network, OpenDir};
use crate::features::FEATURES;
use crate::imds::{take_metadata, ImdsError};
use crate::output::{Message, Shown};
use crate::session::Session;

/// Runs `phases` in order; returns the exit status.
pub fn run(ctx: &mut Context<'_>, phases: &[Phase]) -> i32 {
    ctx.open_log();
    let disabled_by = wisp_core::phase::disabled_by(&mut OpenDir::root(ctx));
    phases_start::run(ctx, phases, disabled_by, |ctx| run_phases(ctx, phases))
}

/// Sets the run up (the plans, the cloud, TINY_CLOUD_VAR, a local seed) and runs its
/// phases: whether one failed.
fn run_phases(ctx: &mut Context<'_>, phases: &[Phase]) -> Result<bool, Unstarted<Message>> {
    let plans = wisp_core::phases::plans(phases, |phase| plan(ctx, phase)).map_err(Unstarted::refused)?;
    // Opened once, `.autodetect` read from it too.
    let (cloud, var) = crate::cloud::resolve(ctx, ctx.var_dir()?).map_err(Unstarted::refused)?;
    let timeouts = ctx.config.timeouts();
    let metadata = take_metadata()?;
    // Looked up as the session is built, in its slot: 80 bytes less than a `let` before it.
    let mut socket = None;
    // A local seed is read whole at once, unless only the boot phase (which needs no
    // metadata) runs.
    if wisp_core::phases::reads_metadata(phases) {
        let note = match crate::seed::load_local(ctx, cloud, metadata, Some(&var)) {
            Ok(note) => note,
            Err(e) => Some(phases_start::local_unread(&mut OpenDir { dir: &var }, cloud, e)?),
        };
        if let Some(note) = note {
            ctx.log.message(note);
        }
    }
    let mut session = Session {
        imds: crate::imds::session(cloud, &timeouts, ctx.config.imds_token_ttl),
        network: Network { guest_socket: socket.insert(ctx.guest_socket()).as_ref().map(NulTerminated::as_cstr) },
        metadata,
        later_boot: false,
        shared: Shared::new(Progress::default()),
    };
    let host = &mut PhaseHost { ctx, session: &mut session, var: OpenDir { dir: &var }, timeouts: &timeouts };
    Ok(wisp_core::phases::run(host, phases, &plans, cloud))
}

/// The actions `phase` runs by the configuration and this build's features.
fn plan(ctx: &Context<'_>, phase: Phase) -> Result<Plan, Message> {
    let file = Shown(ctx.config_file.as_bytes());
    let init = ctx.config.init_actions[phase as usize].as_deref();
    wisp_core::phases::plan_for_build(phase, init, &ctx.config.skip_actions, |action| FEATURES.lacks_for_action(action)).map_err(|e| match e {
        Unplanned::Config(e) => msg!("{file}: {e}"),
        Unplanned::Missing { action, feature } => {
            let what = msg!("{file}: {}: {}", Plain(phase.init_actions_variable()), Plain(action.name()));
            crate::features::missing(what.text(), feature)
        }
    })
}

/// Room for what a boot keeps (`boot_cache`).
fn kept_room() -> Option<Mapping> {
    crate::memory::map(boot_cache::KEPT_LIMIT, "kept metadata").ok()
}

/// The phases of one run, on this run's context and session.
struct PhaseHost<'r, 'c, 's> {
    ctx: &'r mut Context<'c>,
    session: &'r mut Session<'s>,
    var: OpenDir<'r>,
    timeouts: &'r Timeouts,
}

impl Actions for PhaseHost<'_, '_, '_> {
    type Text = Message;

    fn run(&mut self, action: Action) -> Result<Message, Message> {
        actions::run(self.ctx, self.session, self.var.dir, action)
    }

    fn progress(&mut self) -> &mut Progress {
        &mut self.session.shared.progress
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

impl<'r, 'c> Phases for PhaseHost<'r, 'c, '_> {
    type FetchError = ImdsError;
    type Var = OpenDir<'r>;
    type Start = Context<'c>;

    fn start(&mut self) -> &mut Context<'c> {
        self.ctx
    }

    fn var(&mut self) -> &mut OpenDir<'r> {
        &mut self.var
    }

    fn os_error(&self, what: &str, error: HostError) -> Message {
        crate::output::path_error(what.as_bytes(), crate::host::errno(error))
    }

    fn plan(&mut self, phase: Phase) -> Result<Plan, Message> {
        plan(self.ctx, phase)
    }

    fn fetch(&mut self, items: &[Item]) -> Result<(), ImdsError> {
        self.session.imds.fetch(&mut self.session.network, self.session.metadata, items).map_err(ImdsError)
    }

    fn failed_item(error: &ImdsError) -> Option<Item> {
        error.0.item()
    }

    fn fetched(&self, item: Item) -> Option<&[u8]> {
        self.session.metadata.get(item)
    }

    fn dmi_same_instance(&mut self, saved_id: &[u8]) -> Option<bool> {
        boot_cache::dmi_same_instance::<{ crate::features::FEATURES.bits() }>(&mut OpenDir::root(self.ctx), &mut self.var, self.session.imds.cloud(), saved_id)
    }

    #[inline(never)]
    fn load_kept(&mut self) -> bool {
        kept_room().is_some_and(|mut room| boot_cache::load(&mut OpenDir::root(self.ctx), room.as_mut_slice(), self.session.metadata))
    }

    fn keep_for_later(&mut self) {
        let Some(mut room) = kept_room() else { return };
        let Some(kept) = boot_cache::kept(&mut OpenDir::root(self.ctx), room.as_mut_slice(), self.session.metadata) else { return };
        // A failure only costs the later phases requests.
        if let Ok(dir) = self.ctx.create_dir(boot_cache::KEPT_DIR, wisp_os_linux::fs::Resolve::InRoot) {
            let _ = dir.write_volatile(boot_cache::KEPT_FILE, kept, 0o600);
        }
    }

    fn later_boot(&mut self) {
        self.session.later_boot = true;
    }

    #[cfg(feature = "azure")]
    fn report_failure(&mut self, reason: &Message) {
        self.ctx.log.message(crate::azure::report_failure(self.timeouts, reason));
    }

    #[cfg(feature = "azure")]
    fn report_ready(&mut self, instance_id: &[u8]) {
        self.ctx.log.message(crate::azure::report_ready(self.timeouts, self.var.dir, instance_id));
    }

    fn settle_markers(&mut self) -> Result<(), Message> {
        crate::markers::settle(self.var.dir)
    }
}
