//! cloud-config's `power_state`, applied after the bootstrap is marked complete: its
//! `condition` decides first, then the image's own `poweroff`, `reboot` or `halt` (so
//! services stop cleanly) is given the delay; an image with no such tool gets reboot(2)
//! after the delay, everything synced first.

use crate::cloud_config::{self, CloudConfig, Condition, PowerMode};
use crate::host::commands::Commands;
use crate::host::links::Links;
use crate::out::Out;
use crate::text::{Decimal, Plain};

/// Longest `condition` command, as the script it becomes.
pub const CONDITION_LIMIT: usize = 4096;

#[inline(never)]
pub fn apply<H: Commands + Links>(host: &mut H, config: &CloudConfig<'_>) -> Result<H::Text, H::Text> {
    let Some(value) = config.value("power_state") else { return Ok(crate::system_files::no_key(host, "power_state")) };
    let state = cloud_config::power_state(value)?;
    match state.condition {
        Condition::Never => return Ok(host.text(format_args!("condition is false: nothing done"))),
        Condition::Always => {}
        Condition::Command(command) => {
            let mut script = [0u8; CONDITION_LIMIT];
            let len = cloud_config::command_script("power_state", command, &mut script).map_err(|e| crate::system_files::said(host, &e))?;
            if !host.run_script(b"power-state-condition", &script[..len])? {
                return Ok(host.text(format_args!("condition exited non-zero: nothing done")));
            }
        }
    }
    let (program, name) = state.mode.program();
    if let Some(message) = state.message {
        host.error(format_args!("power_state: {}", H::shown(message.as_bytes())));
    }
    let what = match state.mode {
        PowerMode::Poweroff => "poweroff",
        PowerMode::Reboot => "reboot",
        PowerMode::Halt => "halt",
    };
    host.sync_all();
    let delay = Decimal(state.delay_seconds);
    if host.followed(program.to_bytes()).is_none() {
        // No service is stopped: the kernel is asked directly.
        host.error(format_args!("power_state: no {}: {} with reboot(2) in {delay} seconds", H::shown(program.to_bytes()), Plain(what)));
        host.sleep_ms(state.delay_seconds.saturating_mul(1000).min(u64::from(u32::MAX)) as u32);
        let e = host.reboot(state.mode);
        return Err(crate::system_files::call_failed(host, b"reboot(2)", e));
    }
    // A u64 has at most 20 digits.
    let mut digits = [0u8; 21];
    let mut out = Out::new(&mut digits);
    let _ = out.put_decimal(state.delay_seconds);
    let _ = out.put(b"\0");
    let seconds = core::ffi::CStr::from_bytes_until_nul(out.written()).map_err(|_| host.text(format_args!("power_state: delay")))?;
    host.run_logged(program, &[name, c"-d", seconds], what)?;
    Ok(host.text(format_args!("{} in {delay} seconds", Plain(what))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    fn run(host: &mut MemorySystem, source: &str) -> Result<std::string::String, std::string::String> {
        with_config(source, |config| apply(host, config))
    }

    fn busybox(exits_0: bool) -> MemorySystem {
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/sbin/poweroff", "").with_file("/sbin/reboot", "");
        host.programs.push((b"/sbin/poweroff".to_vec(), |_, _| Some(Vec::new())));
        host.programs.push((b"/sbin/reboot".to_vec(), |_, _| Some(Vec::new())));
        host.programs.push((b"/bin/sh".to_vec(), if exits_0 { |_, _| Some(Vec::new()) } else { |_, _| None }));
        host
    }

    #[test]
    fn the_images_tool_gets_the_delay_after_a_sync() {
        let mut host = busybox(true);
        assert_eq!(run(&mut host, "power_state:\n  mode: poweroff\n  delay: '+2'\n  message: bye\n").unwrap(), "poweroff in 120 seconds");
        assert_eq!(host.runs, ["sync", "poweroff -d 120"]);
        assert_eq!(host.said.borrow()[0], "error: power_state: bye");
    }

    #[test]
    fn the_condition_decides_first() {
        let mut host = busybox(false);
        assert_eq!(run(&mut host, "power_state:\n  mode: reboot\n  condition: test -f /x\n").unwrap(), "condition exited non-zero: nothing done");
        assert_eq!(host.runs, ["sh power-state-condition"]);
        assert!(host.contents("/scripts/power-state-condition").unwrap().contains("test -f /x"));
        let mut host = busybox(true);
        assert_eq!(run(&mut host, "power_state:\n  mode: reboot\n  condition: true\n").unwrap(), "reboot in 0 seconds");
        assert_eq!(run(&mut host, "power_state:\n  mode: reboot\n  condition: false\n").unwrap(), "condition is false: nothing done");
        assert_eq!(run(&mut host, "runcmd: [ls]\n").unwrap(), "no power_state");
    }

    #[test]
    fn without_a_tool_the_kernel_is_asked_after_the_delay() {
        let mut host = MemorySystem::new(MemoryHost::new());
        assert_eq!(run(&mut host, "power_state:\n  mode: halt\n  delay: 1\n").unwrap_err(), "reboot(2): errno 1");
        assert_eq!(host.runs, ["sync", "sleep 60000", "reboot(2) Halt"]);
        assert_eq!(host.said.borrow()[0], "error: power_state: no /sbin/halt: halt with reboot(2) in 60 seconds");
    }
}
