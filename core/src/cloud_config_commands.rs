//! cloud-config's `bootcmd` and `runcmd`: each list written as the shell script
//! cloud-init makes of it, saved in the scripts directory and run with `/bin/sh`, its
//! output in user-data.log and a failure's status in `user-data.exit`, as user-data's
//! scripts' are (`userdata_scripts`). `bootcmd` runs every boot with the instance's id in
//! `INSTANCE_ID`; `runcmd` once per instance, as a whole: a crash inside it runs it
//! again, one after it does not.

use crate::cloud_config::{self, CloudConfig};
use crate::host::directory::Directory;
use crate::host::files::Files;
use crate::host::room::Room;
use crate::host::scripts::Scripts;
use crate::text::{Decimal, Plain};
use crate::userdata_scripts::{self, Places, ScriptPath};

/// Largest script a list of commands makes.
pub const SCRIPT_LIMIT: usize = 64 * 1024;

/// cloud-config's lists of shell commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandList {
    /// Every boot, with the instance's id in `INSTANCE_ID`.
    Bootcmd,
    /// Once per instance, marked done in `sem/` once it ran to its end.
    Runcmd,
}

impl CommandList {
    /// Its cloud-config key, which names its script and its marker too.
    pub const fn key(self) -> &'static str {
        match self {
            CommandList::Bootcmd => "bootcmd",
            CommandList::Runcmd => "runcmd",
        }
    }
}

/// Runs `list` of `config`: a note of how many commands ran, or why it failed.
#[inline(never)]
pub fn run<H, V, L>(host: &mut H, places: Places<'_, V, L>, config: &CloudConfig<'_>, list: CommandList) -> Result<H::Text, H::Text>
where
    H: Files + Scripts + Room,
    V: Directory,
    L: Directory,
{
    let Places { var_dir, var, logs } = places;
    let key = list.key();
    let env = match list {
        CommandList::Bootcmd => Some(userdata_scripts::instance_env(host, var)?),
        CommandList::Runcmd => None,
    };
    if list == CommandList::Runcmd {
        host.open_markers()?;
        if host.is_done(key, None)? {
            return Ok(host.text(format_args!("ran already for this instance")));
        }
    }
    let Some(commands) = config.value(key) else { return Ok(host.text(format_args!("no {}", Plain(key)))) };
    // Mapped, not on the stack: only the pages the script fills are touched.
    let mut script = host.room(SCRIPT_LIMIT, "the commands' script")?;
    let len = cloud_config::shell_script(key, commands, &mut script).map_err(|e| crate::system_files::said(host, &e))?;
    let ended = userdata_scripts::run_saved_shell(host, var_dir, key.as_bytes(), &script[..len], env.as_ref().map(ScriptPath::as_cstr))?;
    if list == CommandList::Runcmd {
        host.mark_done(key, None)?;
    }
    userdata_scripts::finish(host, logs, ended, key)?;
    Ok(host.text(format_args!("{} commands ran", Decimal(commands.len() as u64))))
}

#[cfg(test)]
mod tests {
    use std::string::String;

    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::script_exit::Ended;
    use crate::users::tests::with_config;

    const VAR: &[u8] = b"/var/lib/cloud";

    /// Runs `list` of the cloud-config `source` on an image whose instance is `i-1`.
    fn run_list(system: &mut MemorySystem, logs: &mut MemoryHost, source: &str, list: CommandList) -> Result<String, String> {
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-1\n");
        with_config(source, |config| {
            let places = Places { var_dir: VAR, var: &mut var.dir("/var/lib/cloud"), logs: &mut logs.dir("/var/log") };
            run(system, places, config, list)
        })
    }

    #[test]
    fn bootcmd_runs_every_time_with_the_instance_id() {
        let mut system = MemorySystem::new(MemoryHost::new());
        let mut logs = MemoryHost::new();
        for _ in 0..2 {
            assert_eq!(run_list(&mut system, &mut logs, "bootcmd:\n  - echo one\n  - [touch, /a b]\n", CommandList::Bootcmd).unwrap(), "2 commands ran");
        }
        assert_eq!(system.scripts.runs, ["sh /var/lib/cloud/scripts/bootcmd | INSTANCE_ID=i-1", "sh /var/lib/cloud/scripts/bootcmd | INSTANCE_ID=i-1"]);
        let (path, text, mode) = &system.scripts.saved[0];
        assert_eq!((path.as_str(), text.as_slice(), *mode), ("/var/lib/cloud/scripts/bootcmd", &b"#!/bin/sh\necho one\n'touch' '/a b'\n"[..], 0o700));
        assert!(system.scripts.marked.is_empty() && !system.scripts.markers_open);
    }

    #[test]
    fn runcmd_runs_once_per_instance_and_is_marked_only_after_it_ran() {
        let mut system = MemorySystem::new(MemoryHost::new());
        let mut logs = MemoryHost::new();
        assert_eq!(run_list(&mut system, &mut logs, "runcmd:\n  - echo one\n", CommandList::Runcmd).unwrap(), "1 commands ran");
        assert_eq!(system.scripts.runs, ["sh /var/lib/cloud/scripts/runcmd"]);
        assert!(system.scripts.marked.contains("runcmd "));
        assert_eq!(run_list(&mut system, &mut logs, "runcmd:\n  - echo one\n", CommandList::Runcmd).unwrap(), "ran already for this instance");
        assert_eq!(system.scripts.runs.len(), 1);
        // A failure still marks it done (it ran to its end) and is recorded and said.
        let mut failing = MemorySystem::new(MemoryHost::new());
        failing.scripts.ends = |_| Ended::Exited(3);
        let said = run_list(&mut failing, &mut logs, "runcmd:\n  - 'false'\n", CommandList::Runcmd).unwrap_err();
        assert_eq!(said, "runcmd exited with status 3 (output in user-data.log)");
        assert!(failing.scripts.marked.contains("runcmd "));
        assert!(logs.files.contains_key(&b"/var/log/user-data.exit"[..]));
    }

    #[test]
    fn no_room_for_the_script_is_said_by_name_and_runs_and_marks_nothing() {
        let mut system = MemorySystem::new(MemoryHost::new());
        system.no_room = true;
        let said = run_list(&mut system, &mut MemoryHost::new(), "runcmd:\n  - echo one\n", CommandList::Runcmd).unwrap_err();
        assert_eq!(said, "cannot reserve 65536 bytes for the commands' script");
        assert!(system.scripts.runs.is_empty() && system.scripts.saved.is_empty() && system.scripts.marked.is_empty());
    }

    #[test]
    fn no_list_runs_nothing_and_marks_nothing() {
        let mut system = MemorySystem::new(MemoryHost::new());
        assert_eq!(run_list(&mut system, &mut MemoryHost::new(), "hostname: a\n", CommandList::Runcmd).unwrap(), "no runcmd");
        assert_eq!(run_list(&mut system, &mut MemoryHost::new(), "bootcmd: ~\n", CommandList::Bootcmd).unwrap(), "no bootcmd");
        assert!(system.scripts.runs.is_empty() && system.scripts.marked.is_empty());
    }
}
