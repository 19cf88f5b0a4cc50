//! Running one phase's actions in plan order: each runs unless something it needs failed
//! (`instance::Progress`); a failure is logged and recorded, and every later action that
//! does not need it still runs. Each action's start is a crash point of the tests.

use core::fmt::Write;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::host::actions::Actions;
use crate::phase::{Phase, Plan};
use crate::text::{Decimal, Plain};

/// Runs `plan`'s actions (the phase began at `started`); the failures go to `errors`,
/// one per line, as `phase/action: reason`. Returns how many failed.
pub fn run_actions<A: Actions>(host: &mut A, phase: Phase, plan: &Plan, started: u64, errors: &mut impl Write) -> usize {
    let mut failures = 0;
    for &action in plan {
        host.crash_point();
        let action_started = host.now_ms();
        if let Err(reason) = host.progress().may_run(action) {
            host.log(format_args!("{}/{}: {reason}", Plain(phase.name()), Plain(action.name())));
            continue;
        }
        let result = host.run(action);
        let ms = host.now_ms() - action_started;
        let (phase_name, name, ms) = (Plain(phase.name()), Plain(action.name()), Decimal(ms));
        match result {
            Ok(note) => host.log(format_args!("{phase_name}/{name}: ok: {note} ({ms} ms)")),
            Err(e) => {
                host.progress().failed(action);
                let separator = Plain(if failures == 0 { "" } else { "\n" });
                failures += 1;
                host.log(format_args!("{phase_name}/{name}: failed: {e} ({ms} ms)"));
                let _ = errors.write_fmt(format_args!("{separator}{phase_name}/{name}: {e}"));
            }
        }
    }
    let (ms, requests) = (Decimal(host.now_ms() - started), Decimal(host.requests().into()));
    host.log(format_args!("{}: done, {} failed ({ms} ms, {requests} metadata requests so far)", Plain(phase.name()), Decimal(failures as u64)));
    failures
}

/// The variable of the tests' crash points: `WISP_TEST_CRASH_AT=N` stops the process, as
/// a crash would, at its N-th crash point (the start of each action, and each piece of
/// work just marked done).
pub const CRASH_AT: &[u8] = b"WISP_TEST_CRASH_AT";

/// The crash points a process has passed.
#[derive(Default)]
pub struct CrashPoints(AtomicU32);

impl CrashPoints {
    pub const fn new() -> CrashPoints {
        CrashPoints(AtomicU32::new(0))
    }

    /// Counts one more crash point; whether it is the one `at` (`CRASH_AT`'s value) names.
    pub fn reached(&self, at: Option<&[u8]>) -> bool {
        let Some(at) = at.and_then(|n| crate::text::decimal(n, 10)) else { return false };
        u64::from(self.0.fetch_add(1, Ordering::Relaxed) + 1) == at
    }
}

#[cfg(test)]
mod tests {
    use std::string::String;
    use std::vec::Vec;

    use core::fmt;

    use super::*;
    use crate::instance::Progress;
    use crate::phase::Action;

    /// Actions that fail when named in `fail`; every call recorded.
    struct Script {
        fail: Vec<Action>,
        progress: Progress,
        said: Vec<String>,
        now: u64,
        crash_points: usize,
        ran: Vec<Action>,
    }

    impl Actions for Script {
        type Text = String;
        fn run(&mut self, action: Action) -> Result<String, String> {
            self.ran.push(action);
            self.now += 5;
            match self.fail.contains(&action) {
                true => Err("refused".into()),
                false => Ok("fine".into()),
            }
        }
        fn progress(&mut self) -> &mut Progress {
            &mut self.progress
        }
        fn log(&mut self, args: fmt::Arguments<'_>) {
            self.said.push(std::format!("{args}"));
        }
        fn now_ms(&mut self) -> u64 {
            self.now
        }
        fn requests(&self) -> u32 {
            3
        }
        fn crash_point(&mut self) {
            self.crash_points += 1;
        }
    }

    fn script(fail: &[Action]) -> Script {
        Script { fail: fail.to_vec(), progress: Progress::default(), said: Vec::new(), now: 100, crash_points: 0, ran: Vec::new() }
    }

    #[test]
    fn every_action_runs_in_order_with_a_crash_point_before_each() {
        let plan = Phase::Early.plan(None, "").unwrap();
        let mut host = script(&[]);
        let mut errors = String::new();
        assert_eq!(run_actions(&mut host, Phase::Early, &plan, 90, &mut errors), 0);
        assert_eq!(host.ran.as_slice(), plan.as_slice());
        assert_eq!(host.crash_points, plan.len());
        assert!(errors.is_empty());
        assert_eq!(host.said[0], std::format!("early/{}: ok: fine (5 ms)", plan[0].name()));
        assert_eq!(host.said.last().unwrap(), &std::format!("early: done, 0 failed ({} ms, 3 metadata requests so far)", 10 + 5 * plan.len()));
    }

    #[test]
    fn a_failure_holds_back_what_needs_it_and_the_rest_runs() {
        let plan = Phase::Main.plan(None, "").unwrap();
        let first = plan[0];
        let mut host = script(&[first]);
        let mut errors = String::new();
        let failed = run_actions(&mut host, Phase::Main, &plan, 100, &mut errors);
        let held: Vec<Action> = plan.iter().copied().filter(|&a| a != first && !host.ran.contains(&a)).collect();
        assert_eq!(failed, 1, "{:?}", host.said);
        assert_eq!(errors, std::format!("main/{}: refused", first.name()));
        assert!(host.said.contains(&std::format!("main/{}: failed: refused (5 ms)", first.name())));
        // Each action held back says why, and is recorded as failed this boot.
        for action in &held {
            assert!(host.said.iter().any(|line| line.starts_with(&std::format!("main/{}: ", action.name())) && !line.contains(": ok: ")));
            assert!(host.progress.failed.contains(*action));
        }
        assert_eq!(host.progress.held_back(), !held.is_empty());
        // Crash points come before each action, run or held back.
        assert_eq!(host.crash_points, plan.len());
    }

    #[test]
    fn failures_are_one_per_line() {
        let plan = Phase::Early.plan(None, "").unwrap();
        let fail: Vec<Action> = plan.iter().copied().filter(|a| a.held_back(Default::default()).is_none()).collect();
        let mut host = script(&fail);
        let mut errors = String::new();
        let failed = run_actions(&mut host, Phase::Early, &plan, 100, &mut errors);
        assert_eq!(errors.lines().count(), failed);
        assert!(errors.lines().all(|line| line.starts_with("early/") && line.ends_with(": refused")), "{errors}");
    }

    #[test]
    fn the_crash_point_named_is_the_nth_passed() {
        let points = CrashPoints::new();
        assert!(!points.reached(Some(b"3")) && !points.reached(Some(b"3")));
        assert!(points.reached(Some(b"3")));
        assert!(!points.reached(Some(b"3")));
        // Without the variable (or with no number in it) no point is one to stop at.
        let points = CrashPoints::new();
        assert!(!points.reached(None) && !points.reached(Some(b"x")));
    }

}
