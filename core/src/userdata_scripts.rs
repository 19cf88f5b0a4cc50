//! Running user-data's scripts, as tiny-cloud and cloud-init's final stage do: the
//! per-once, per-boot and per-instance directories in that order (user-data's per-X
//! parts written into them first), each in run-parts' order, then the user-data's own
//! scripts in document order; boothooks every boot, before anything else of user-data.
//! Output goes to `user-data.log`, a failure's status to `user-data.exit`
//! (`script_exit`); the first script that fails stops the action. A script marked done
//! for this instance is not run again.

use core::ffi::CStr;

use crate::host::directory::Directory;
use crate::host::files::{self, Files};
use crate::host::messages::Messages;
use crate::host::scripts::Scripts;
use crate::instance::{self, INSTANCE_ID_LIMIT};
use crate::script;
use crate::script_directories::{self, Frequency, DIRECTORY_LIMIT};
use crate::script_exit::{self, Ended};
use crate::state_files::{BOOTHOOKS_DIR, PER_INSTANCE_DONE, PER_ONCE_DONE, SCRIPTS_DIR, USER_DATA};
use crate::text::{Decimal, Plain};
use crate::userdata::{Handling, Kind, ScriptName, UserData, SCRIPT_NAME_LIMIT};

/// Longest path of a script: TINY_CLOUD_VAR, `/scripts/per-instance/` and a name.
pub const SCRIPT_PATH_LIMIT: usize = crate::config::VALUE_LIMIT + 32 + SCRIPT_NAME_LIMIT;
// The refusals name the limits as literals, not formatted at each: these keep them true.
const _: () = assert!(SCRIPT_PATH_LIMIT == 352 && DIRECTORY_LIMIT == 64 && SCRIPT_NAME_LIMIT == 64);

/// Where the scripts are: TINY_CLOUD_VAR (its path inside the root, and open) and
/// TINY_CLOUD_LOGS (open).
pub struct Places<'p, V: Directory, L: Directory> {
    pub var_dir: &'p [u8],
    pub var: &'p mut V,
    pub logs: &'p mut L,
}

/// A path of the scripts' tree, NUL-terminated for the program that runs it.
pub struct ScriptPath {
    buf: [u8; SCRIPT_PATH_LIMIT + 1],
    len: usize,
}

impl ScriptPath {
    /// The pieces joined as given.
    #[inline(never)]
    pub fn new<H: Messages>(host: &H, pieces: &[&[u8]]) -> Result<ScriptPath, H::Text> {
        let mut path = ScriptPath { buf: [0; SCRIPT_PATH_LIMIT + 1], len: 0 };
        for piece in pieces {
            let end = path.len + piece.len();
            let Some(room) = path.buf.get_mut(path.len..end).filter(|_| end <= SCRIPT_PATH_LIMIT) else {
                return Err(host.text(format_args!("path longer than 352 bytes")));
            };
            room.copy_from_slice(piece);
            path.len = end;
        }
        // TINY_CLOUD_VAR may hold one (file names cannot): refused, never cut short.
        if path.as_cstr().to_bytes().len() != path.len {
            return Err(host.text(format_args!("path contains a NUL byte")));
        }
        Ok(path)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub fn as_cstr(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.buf).unwrap_or(c"")
    }
}

/// `INSTANCE_ID=<saved instance-id>`, which cloud-init gives boothooks and `bootcmd`.
pub fn instance_env<H: Messages>(host: &H, var: &mut impl Directory) -> Result<ScriptPath, H::Text> {
    let mut id = [0u8; INSTANCE_ID_LIMIT];
    let id = instance::saved_id(var, &mut id).unwrap_or(b"");
    ScriptPath::new(host, &[b"INSTANCE_ID=", id])
}

/// `run_userdata`: the per-X script directories, then the user-data's scripts; on a
/// later boot of a bootstrapped instance, only the per-boot directory. `userdata` is
/// asked for only when it is used, after the log is opened.
pub fn run_userdata<'u, 'd: 'u, H, V, L>(
    host: &mut H,
    places: Places<'_, V, L>,
    later_boot: bool,
    userdata: impl FnOnce() -> Result<Option<&'u UserData<'d>>, H::Text>,
) -> Result<H::Text, H::Text>
where
    H: Files + Scripts,
    V: Directory,
    L: Directory,
{
    let Places { var_dir, var, logs } = places;
    let mut id_buf = [0u8; INSTANCE_ID_LIMIT];
    let id = instance::saved_id(var, &mut id_buf).unwrap_or(b"");
    open_log(host, !later_boot)?;
    let userdata = match later_boot {
        true => None,
        false => userdata()?,
    };
    create_dir(host, &ScriptPath::new(host, &[var_dir, b"/", SCRIPTS_DIR])?)?;
    let mut ran = 0;
    for frequency in Frequency::ALL {
        let directory = frequency.directory();
        let dir = ScriptPath::new(host, &[var_dir, b"/", SCRIPTS_DIR, b"/", directory])?;
        create_dir(host, &dir)?;
        // Only MIME parts are per-X scripts.
        if let Some(userdata) = userdata.filter(|_| H::PARTS) {
            for (index, part) in userdata.of_kind(frequency.part_kind()) {
                let name = part.script_name(index);
                save(host, &[dir.as_bytes(), b"/", name.as_bytes()], part.bytes, &name)?;
            }
        }
        let ran_before = || match frequency {
            Frequency::Instance => has_contents(var, PER_INSTANCE_DONE, id),
            _ => matches!(var.exists(PER_ONCE_DONE), Ok(true)),
        };
        if !frequency.is_due(later_boot, ran_before) {
            continue;
        }
        let marked = frequency == Frequency::Instance;
        if marked {
            host.open_markers()?;
        }
        ran += run_directory(host, logs, directory, &dir, marked)?;
        let done = match frequency {
            Frequency::Boot => Ok(()),
            // Made durable with the rest by the sync before the completion marker.
            Frequency::Once => var.write_volatile(PER_ONCE_DONE, b"", 0o644),
            Frequency::Instance => var.write_volatile(PER_INSTANCE_DONE, id, 0o644),
        };
        done.map_err(|e| host.text(format_args!("cannot record that the {} scripts ran: {}", H::shown(directory), H::reason(e))))?;
    }
    let Some(userdata) = userdata else {
        record_exit(host, logs, Ended::Exited(0))?;
        let what = if later_boot { "per-boot" } else { "user-data is empty or absent; image" };
        return Ok(host.text(format_args!("{what} scripts: {ran} ran", ran = Decimal(ran as u64), what = Plain(what))));
    };
    host.open_markers()?;
    let (mut skipped, mut done) = (0, 0);
    for (index, part) in userdata.parts.iter().enumerate() {
        match part.kind.handling() {
            Handling::Script => {
                // A lone script runs as tiny-cloud runs it: the saved file itself.
                let whole = part.whole || !H::PARTS;
                let own_name = if whole { ScriptName::new() } else { part.script_name(index) };
                let name = if whole { "user-data" } else { own_name.as_str() };
                if host.is_done("script", Some(name))? {
                    done += 1;
                    continue;
                }
                let path = if whole {
                    ScriptPath::new(host, &[var_dir, b"/", USER_DATA])?
                } else {
                    let path = ScriptPath::new(host, &[var_dir, b"/", SCRIPTS_DIR, b"/", name.as_bytes()])?;
                    save(host, &[path.as_bytes()], part.bytes, name)?;
                    path
                };
                let ended = run_script(host, part.bytes, &path, None)?;
                host.mark_done("script", Some(name))?;
                finish(host, logs, ended, if whole { "user-data script" } else { name })?;
                ran += 1;
            }
            // An include is followed as the user-data is decoded: one here was not.
            Handling::Unsupported | Handling::Include => {
                skipped += 1;
                host.error(format_args!(
                    "user-data part {} ({}): {}: not supported, not run",
                    Decimal((index + 1) as u64),
                    H::shown(part.media_type),
                    Plain(part.kind.name())
                ));
            }
            // Handled by other actions.
            Handling::ScriptDirectory | Handling::CloudConfig | Handling::Boothook => {}
        }
    }
    record_exit(host, logs, Ended::Exited(0))?;
    Ok(host.text(format_args!(
        "{ran} scripts ran, {done} had run already, {skipped} parts not supported",
        ran = Decimal(ran as u64),
        done = Decimal(done as u64),
        skipped = Decimal(skipped as u64)
    )))
}

/// `userdata_boothooks`: cloud-init's boothooks, every boot: the part less its
/// `#cloud-boothook` line, run as a script (`/bin/sh` when it has no `#!` line), with the
/// instance's id in `INSTANCE_ID`. User-data that did not decode is the main phase's to
/// report: the instance still gets its keys first.
pub fn run_boothooks<H, V, L>(host: &mut H, places: Places<'_, V, L>, userdata: Result<Option<&UserData<'_>>, H::Text>) -> Result<H::Text, H::Text>
where
    H: Files + Scripts,
    V: Directory,
    L: Directory,
{
    let userdata = match userdata {
        Ok(Some(userdata)) => userdata,
        Ok(None) => return Ok(host.text(format_args!("no user-data"))),
        Err(e) => return Ok(host.text(format_args!("skipped: {e}"))),
    };
    let Places { var_dir, var, logs } = places;
    let env = instance_env(host, var)?;
    let dir = ScriptPath::new(host, &[var_dir, b"/", BOOTHOOKS_DIR])?;
    create_dir(host, &dir)?;
    open_log(host, false)?;
    let mut ran = 0;
    for (index, part) in userdata.of_kind(Kind::Boothook) {
        let text = part.bytes.trim_ascii_start();
        let body = text.iter().position(|&b| b == b'\n').map_or(&b""[..], |end| &text[end + 1..]);
        let name = part.script_name(index);
        let path = ScriptPath::new(host, &[dir.as_bytes(), b"/", name.as_bytes()])?;
        if let Err(e) = host.save(path.as_bytes(), body, 0o700) {
            return Err(host.text(format_args!("cannot save boothook {name}: {}", H::reason(e), name = Plain(&name))));
        }
        let env = Some(env.as_cstr());
        let ended = if body.starts_with(b"#!") { run_script(host, body, &path, env)? } else { run_shell(host, &path, env)? };
        finish(host, logs, ended, &name)?;
        ran += 1;
    }
    Ok(host.text(format_args!("{ran} boothooks ran", ran = Decimal(ran as u64))))
}

/// Saves `text` as `$TINY_CLOUD_VAR/scripts/<name>` and runs it with `/bin/sh`, its
/// output appended to user-data.log: what `bootcmd`, `runcmd` and power_state's condition
/// become.
pub fn run_saved_shell<H: Files + Scripts>(
    host: &mut H,
    var_dir: &[u8],
    name: &[u8],
    text: &[u8],
    env: Option<&CStr>,
) -> Result<Ended, H::Text> {
    create_dir(host, &ScriptPath::new(host, &[var_dir, b"/", SCRIPTS_DIR])?)?;
    let path = ScriptPath::new(host, &[var_dir, b"/", SCRIPTS_DIR, b"/", name])?;
    if let Err(e) = host.save(path.as_bytes(), text, 0o700) {
        return Err(host.text(format_args!("cannot save scripts/{}: {}", H::shown(name), H::reason(e))));
    }
    open_log(host, false)?;
    run_shell(host, &path, env)
}

/// Runs one of the image's programs, its output appended to user-data.log; `what` names
/// it in the messages.
pub fn run_program<H: Scripts>(host: &mut H, logs: &mut impl Directory, program: &CStr, args: &[&CStr], what: &str) -> Result<(), H::Text> {
    open_log(host, false)?;
    let ended = host.run(program, args, None).map_err(|e| host.text(format_args!("cannot run {what}: {}", H::reason(e), what = Plain(what))))?;
    finish(host, logs, ended, what)
}

/// A script's end: a failure is recorded in `user-data.exit` and fails the action.
pub fn finish<H: Messages>(host: &H, logs: &mut impl Directory, ended: Ended, what: &str) -> Result<(), H::Text> {
    if ended.succeeded() {
        return Ok(());
    }
    record_exit(host, logs, ended)?;
    Err(match ended {
        // Never negative: printed as u32, so the binary has one formatter less (i32's).
        Ended::Exited(code) => host.text(format_args!("{what} exited with status {} (output in user-data.log)", Decimal(code.unsigned_abs().into()), what = Plain(what))),
        Ended::Signaled(signal) => host.text(format_args!("{what} killed by signal {} (output in user-data.log)", Decimal(signal.unsigned_abs().into()), what = Plain(what))),
    })
}

/// Longest name of a directory entry (Linux's NAME_MAX).
const NAME_MAX: usize = 255;

/// Why a script directory is refused whole. Lives on the stack of one listing only.
#[allow(clippy::large_enum_variant)]
enum Refused {
    /// More than `DIRECTORY_LIMIT` entries.
    TooMany,
    /// An entry's name is longer than `SCRIPT_NAME_LIMIT`, or not UTF-8.
    Name(heapless::Vec<u8, NAME_MAX>),
}

/// Runs the executable files of a script directory in name order, as run-parts does;
/// `marked`: those the markers say ran for this instance are not run again.
#[inline(never)]
fn run_directory<H: Files + Scripts>(
    host: &mut H,
    logs: &mut impl Directory,
    directory: &[u8],
    dir: &ScriptPath,
    marked: bool,
) -> Result<usize, H::Text> {
    let mut names: heapless::Vec<ScriptName, DIRECTORY_LIMIT> = heapless::Vec::new();
    let mut refused: Option<Refused> = None;
    let listed = host.list(dir.as_bytes(), &mut |name| {
        if !script_directories::is_listed(name) || refused.is_some() {
            return;
        }
        let kept = core::str::from_utf8(name).ok().and_then(|n| ScriptName::try_from(n).ok());
        refused = match kept.map(|name| names.push(name)) {
            Some(Ok(())) => None,
            Some(Err(_)) => Some(Refused::TooMany),
            None => Some(Refused::Name(heapless::Vec::from_slice(&name[..name.len().min(NAME_MAX)]).unwrap_or_default())),
        };
    });
    listed.map_err(|e| host.text(format_args!("scripts/{}: {}", H::shown(directory), H::reason(e))))?;
    match refused {
        Some(Refused::TooMany) => return Err(host.text(format_args!("scripts/{}: more than 64 entries", H::shown(directory)))),
        Some(Refused::Name(name)) => {
            return Err(host.text(format_args!(
                "scripts/{}/{}: a name longer than 64 bytes, or not UTF-8",
                H::shown(directory),
                H::shown(&name)
            )))
        }
        None => {}
    }
    script_directories::sort(&mut names);
    let mut ran = 0;
    for name in &names {
        let path = ScriptPath::new(host, &[dir.as_bytes(), b"/", name.as_bytes()])?;
        let executable = matches!(host.metadata(path.as_bytes()), Ok(Some(m)) if m.kind == files::Kind::File && m.mode & 0o111 != 0);
        if !executable || marked && host.is_done("per-instance", Some(name))? {
            continue;
        }
        let ended = host
            .run(path.as_cstr(), &[path.as_cstr()], None)
            .map_err(|e| host.text(format_args!("cannot run scripts/{}/{name}: {}", H::shown(directory), H::reason(e), name = Plain(name))))?;
        if marked {
            host.mark_done("per-instance", Some(name))?;
        }
        let label = ScriptPath::new(host, &[SCRIPTS_DIR, b"/", directory, b"/", name.as_bytes()])?;
        finish(host, logs, ended, crate::text::word(label.as_bytes()))?;
        ran += 1;
    }
    Ok(ran)
}

/// Runs one script with the interpreter its `#!` names, so the saved copy needs no
/// execute bit.
#[inline(never)]
fn run_script<H: Scripts>(host: &mut H, text: &[u8], path: &ScriptPath, env: Option<&CStr>) -> Result<Ended, H::Text> {
    let shebang = script::parse(text).map_err(|e| host.text(format_args!("user-data: {e}")))?;
    let interpreter = ScriptPath::new(host, &[shebang.interpreter])?;
    let argument = ScriptPath::new(host, &[shebang.argument.unwrap_or(b"")])?;
    let (interpreter, argument) = (interpreter.as_cstr(), argument.as_cstr());
    let mut args: heapless::Vec<&CStr, 3> = heapless::Vec::new();
    let _ = args.push(interpreter);
    if shebang.argument.is_some() {
        let _ = args.push(argument);
    }
    let _ = args.push(path.as_cstr());
    host.run(interpreter, &args, env).map_err(|e| host.text(format_args!("cannot start {}: {}", H::shown(shebang.interpreter), H::reason(e))))
}

/// Runs a shell script file with `/bin/sh`.
fn run_shell<H: Scripts>(host: &mut H, path: &ScriptPath, env: Option<&CStr>) -> Result<Ended, H::Text> {
    host.run(c"/bin/sh", &[c"sh", path.as_cstr()], env).map_err(|e| host.text(format_args!("cannot start /bin/sh: {}", H::reason(e))))
}

/// `user-data.log`: started afresh by a bootstrap, appended to otherwise.
fn open_log<H: Scripts>(host: &mut H, fresh: bool) -> Result<(), H::Text> {
    host.open_log(fresh).map_err(|e| host.text(format_args!("cannot open user-data.log: {}", H::reason(e))))
}

fn create_dir<H: Files + Messages>(host: &mut H, dir: &ScriptPath) -> Result<(), H::Text> {
    match host.create_dir(dir.as_bytes(), 0o755) {
        Ok(_) => Ok(()),
        Err(e) => Err(host.path_error(dir.as_bytes(), e)),
    }
}

/// Saves a script part (`pieces` its path) with the execute bit.
fn save<H: Scripts>(host: &mut H, pieces: &[&[u8]], bytes: &[u8], name: &str) -> Result<(), H::Text> {
    let path = ScriptPath::new(host, pieces)?;
    host.save(path.as_bytes(), bytes, 0o700).map_err(|e| host.text(format_args!("cannot save {name}: {}", H::reason(e), name = Plain(name))))
}

fn has_contents(var: &mut impl Directory, name: &[u8], expected: &[u8]) -> bool {
    let mut kept = [0u8; INSTANCE_ID_LIMIT + 1];
    matches!(var.read(name, &mut kept), Ok(Some(len)) if kept[..len] == *expected)
}

/// `user-data.exit`, by `script_exit`.
fn record_exit<H: Messages>(host: &H, logs: &mut impl Directory, ended: Ended) -> Result<(), H::Text> {
    script_exit::record(logs, ended).map_err(|e| host.text(format_args!("cannot write user-data.exit: {}", H::reason(e))))
}

#[cfg(test)]
mod tests {
    use std::string::String;
    use std::vec::Vec;

    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::userdata::Part;

    const VAR: &[u8] = b"/var/lib/cloud";

    fn part(kind: Kind, filename: Option<&str>, bytes: &'static [u8], whole: bool) -> Part<'static> {
        Part { kind, media_type: b"text/plain", filename: filename.map(|n| ScriptName::try_from(n).unwrap()), bytes, whole }
    }

    fn userdata(parts: Vec<Part<'static>>) -> UserData<'static> {
        UserData { parts: parts.into_iter().collect() }
    }

    /// An image with a script in each directory (one not executable, one hidden) and a
    /// saved instance-id; its state directory and its logs directory.
    fn image() -> (MemorySystem, MemoryHost, MemoryHost) {
        let mut system = MemorySystem::new(MemoryHost::new());
        for dir in ["per-once", "per-boot", "per-instance"] {
            system = system.with_dir(&std::format!("/var/lib/cloud/scripts/{dir}"), (0, 0));
        }
        for (path, mode) in [("per-boot/b", 0o755), ("per-boot/a", 0o700), ("per-boot/readme", 0o644), ("per-boot/.a.tmp", 0o755), ("per-once/o", 0o755), ("per-instance/i", 0o755)] {
            system = system.with_file(&std::format!("/var/lib/cloud/scripts/{path}"), "#!/bin/sh\n");
            system.host.files.get_mut(std::format!("/var/lib/cloud/scripts/{path}").as_bytes()).unwrap().meta.mode = mode;
        }
        let var = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-1\n");
        (system, var, MemoryHost::new())
    }

    fn run(system: &mut MemorySystem, var: &mut MemoryHost, logs: &mut MemoryHost, later_boot: bool, data: Option<&UserData<'_>>) -> Result<String, String> {
        let places = Places { var_dir: VAR, var: &mut var.dir("/var/lib/cloud"), logs: &mut logs.dir("/var/log") };
        run_userdata(system, places, later_boot, || Ok(data))
    }

    #[test]
    fn a_first_boot_runs_the_directories_in_cloud_inits_order_then_the_user_data_script() {
        let (mut system, mut var, mut logs) = image();
        let data = userdata(std::vec![part(Kind::Script, None, b"#!/bin/sh -eu\necho hi\n", true)]);
        let said = run(&mut system, &mut var, &mut logs, false, Some(&data)).unwrap();
        assert_eq!(said, "5 scripts ran, 0 had run already, 0 parts not supported");
        assert_eq!(system.scripts.logs_opened, [true]);
        assert_eq!(
            system.scripts.runs,
            [
                "/var/lib/cloud/scripts/per-once/o",
                "/var/lib/cloud/scripts/per-boot/a",
                "/var/lib/cloud/scripts/per-boot/b",
                "/var/lib/cloud/scripts/per-instance/i",
                "/bin/sh -eu /var/lib/cloud/user-data",
            ]
        );
        assert!(system.scripts.marked.contains("per-instance i") && system.scripts.marked.contains("script user-data"));
        assert_eq!(var.contents("/var/lib/cloud/.per-once-done"), Some(&b""[..]));
        assert_eq!(var.contents("/var/lib/cloud/.per-instance-done"), Some(&b"i-1"[..]));
        assert_eq!(logs.contents("/var/log/user-data.exit"), Some(&b"0\n"[..]));

        // Run again (a crash before the completion marker): the per-once and per-instance
        // directories ran, the script is marked done.
        system.scripts.runs.clear();
        let said = run(&mut system, &mut var, &mut logs, false, Some(&data)).unwrap();
        assert_eq!(said, "2 scripts ran, 1 had run already, 0 parts not supported");
        assert_eq!(system.scripts.runs, ["/var/lib/cloud/scripts/per-boot/a", "/var/lib/cloud/scripts/per-boot/b"]);
    }

    #[test]
    fn a_later_boot_runs_the_per_boot_directory_only_and_never_asks_for_user_data() {
        let (mut system, mut var, mut logs) = image();
        let places = Places { var_dir: VAR, var: &mut var.dir("/var/lib/cloud"), logs: &mut logs.dir("/var/log") };
        let said = run_userdata(&mut system, places, true, || unreachable!()).unwrap();
        assert_eq!(said, "per-boot scripts: 2 ran");
        assert_eq!(system.scripts.logs_opened, [false]);
        assert_eq!(system.scripts.runs.len(), 2);
        assert!(!system.scripts.markers_open);
    }

    #[test]
    fn without_user_data_the_image_scripts_still_run() {
        let (mut system, mut var, mut logs) = image();
        let said = run(&mut system, &mut var, &mut logs, false, None).unwrap();
        assert_eq!(said, "user-data is empty or absent; image scripts: 4 ran");
    }

    #[test]
    fn a_failing_script_stops_the_action_and_its_status_is_recorded() {
        let (mut system, mut var, mut logs) = image();
        system.scripts.ends = |args| match args.last() {
            Some(path) if path.ends_with(b"per-boot/a") => Ended::Signaled(15),
            _ => Ended::Exited(0),
        };
        let data = userdata(std::vec![part(Kind::Script, None, b"#!/bin/sh\n", true)]);
        let e = run(&mut system, &mut var, &mut logs, false, Some(&data)).unwrap_err();
        assert_eq!(e, "scripts/per-boot/a killed by signal 15 (output in user-data.log)");
        assert_eq!(logs.contents("/var/log/user-data.exit"), Some(&b"143\n"[..]));
        assert_eq!(system.scripts.runs.len(), 2, "nothing runs after the failure");
        system.scripts.ends = |_| Ended::Exited(3);
        system.scripts.runs.clear();
        let e = run(&mut system, &mut var, &mut logs, false, Some(&data)).unwrap_err();
        assert_eq!(e, "scripts/per-boot/a exited with status 3 (output in user-data.log)");
        assert_eq!(logs.contents("/var/log/user-data.exit"), Some(&b"3\n"[..]));
    }

    #[test]
    fn mime_parts_are_saved_where_they_run_and_unsupported_ones_are_said() {
        let mut system = MemorySystem::new(MemoryHost::new());
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-1\n");
        let mut logs = MemoryHost::new();
        let data = userdata(std::vec![
            part(Kind::ScriptPerBoot, Some("every.sh"), b"#!/bin/sh\nboot\n", false),
            part(Kind::Script, None, b"#!/bin/sh\nsecond\n", false),
            part(Kind::Jinja, None, b"## template: jinja\n", false),
            part(Kind::Script, Some("runcmd"), b"#!/bin/bash\nfourth\n", false),
        ]);
        let said = run(&mut system, &mut var, &mut logs, false, Some(&data)).unwrap();
        assert_eq!(said, "2 scripts ran, 0 had run already, 1 parts not supported");
        let saved: Vec<(&str, u32)> = system.scripts.saved.iter().map(|(path, _, mode)| (path.as_str(), *mode)).collect();
        // A part's own name is kept unless it is one wisp keeps for itself.
        assert_eq!(saved, [("/var/lib/cloud/scripts/per-boot/every.sh", 0o700), ("/var/lib/cloud/scripts/part-002", 0o700), ("/var/lib/cloud/scripts/part-004", 0o700)]);
        assert_eq!(system.scripts.runs, ["/bin/sh /var/lib/cloud/scripts/part-002", "/bin/bash /var/lib/cloud/scripts/part-004"]);
        assert_eq!(*system.said.borrow(), ["error: user-data part 3 (text/plain): jinja: not supported, not run"]);
    }

    #[test]
    fn a_script_without_an_interpreter_is_refused_by_its_shebang() {
        let mut system = MemorySystem::new(MemoryHost::new());
        let (mut var, mut logs) = (MemoryHost::new(), MemoryHost::new());
        let data = userdata(std::vec![part(Kind::Script, None, b"#!sh\n", true)]);
        let e = run(&mut system, &mut var, &mut logs, false, Some(&data)).unwrap_err();
        assert_eq!(e, "user-data: #! interpreter is not an absolute path");
    }

    #[test]
    fn a_directory_with_a_name_wisp_cannot_keep_is_refused_whole() {
        let (mut system, mut var, mut logs) = image();
        let long = "x".repeat(SCRIPT_NAME_LIMIT + 1);
        system = system.with_file(&std::format!("/var/lib/cloud/scripts/per-once/{long}"), "");
        let e = run(&mut system, &mut var, &mut logs, false, None).unwrap_err();
        assert_eq!(e, std::format!("scripts/per-once/{long}: a name longer than 64 bytes, or not UTF-8"));
        assert!(system.scripts.runs.is_empty());
    }

    #[test]
    fn a_directory_with_more_entries_than_wisp_keeps_is_refused_whole() {
        let (mut system, mut var, mut logs) = image();
        for i in 0..=DIRECTORY_LIMIT {
            system = system.with_file(&std::format!("/var/lib/cloud/scripts/per-once/s{i}"), "");
        }
        let e = run(&mut system, &mut var, &mut logs, false, None).unwrap_err();
        assert_eq!(e, "scripts/per-once: more than 64 entries");
        assert!(system.scripts.runs.is_empty());
    }

    #[test]
    fn a_path_is_refused_whole_never_cut_short() {
        let host = MemorySystem::new(MemoryHost::new());
        let path = ScriptPath::new(&host, &[VAR, b"/", SCRIPTS_DIR]).unwrap();
        assert_eq!((path.as_bytes(), path.as_cstr().to_bytes()), (&b"/var/lib/cloud/scripts"[..], &b"/var/lib/cloud/scripts"[..]));
        assert_eq!(ScriptPath::new(&host, &[b"/var\0/lib", b"/x"]).err().unwrap(), "path contains a NUL byte");
        let long = [b'a'; SCRIPT_PATH_LIMIT];
        assert_eq!(ScriptPath::new(&host, &[b"/", &long]).err().unwrap(), std::format!("path longer than {SCRIPT_PATH_LIMIT} bytes"));
        assert!(ScriptPath::new(&host, &[&long]).is_ok());
    }

    #[test]
    fn boothooks_run_without_their_first_line_with_the_instance_id() {
        let mut system = MemorySystem::new(MemoryHost::new());
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/.instance-id", b"i-9\n");
        let mut logs = MemoryHost::new();
        let data = userdata(std::vec![
            part(Kind::Boothook, None, b"#cloud-boothook\necho early\n", false),
            part(Kind::Script, None, b"#!/bin/sh\n", false),
            part(Kind::Boothook, Some("hook"), b"  #cloud-boothook\n#!/bin/ash\necho\n", false),
        ]);
        let places = Places { var_dir: VAR, var: &mut var.dir("/var/lib/cloud"), logs: &mut logs.dir("/var/log") };
        let said = run_boothooks(&mut system, places, Ok(Some(&data))).unwrap();
        assert_eq!(said, "2 boothooks ran");
        assert_eq!(system.scripts.saved[0], (String::from("/var/lib/cloud/boothooks/part-001"), b"echo early\n".to_vec(), 0o700));
        assert_eq!(system.scripts.runs, ["sh /var/lib/cloud/boothooks/part-001 | INSTANCE_ID=i-9", "/bin/ash /var/lib/cloud/boothooks/hook | INSTANCE_ID=i-9"]);
        assert_eq!(system.scripts.logs_opened, [false]);
        let places = Places { var_dir: VAR, var: &mut var.dir("/var/lib/cloud"), logs: &mut logs.dir("/var/log") };
        assert_eq!(run_boothooks(&mut system, places, Err(String::from("bad"))).unwrap(), "skipped: bad");
    }

    #[test]
    fn a_saved_shell_script_runs_with_sh() {
        let mut system = MemorySystem::new(MemoryHost::new());
        system.scripts.ends = |_| Ended::Exited(1);
        let ended = run_saved_shell(&mut system, VAR, b"runcmd", b"echo hi\n", Some(c"INSTANCE_ID=i")).unwrap();
        assert_eq!(ended, Ended::Exited(1));
        assert_eq!(system.scripts.runs, ["sh /var/lib/cloud/scripts/runcmd | INSTANCE_ID=i"]);
        assert_eq!(system.scripts.saved[0].0, "/var/lib/cloud/scripts/runcmd");
        let mut logs = MemoryHost::new();
        let e = run_program(&mut system, &mut logs.dir("/var/log"), c"/sbin/apk", &[c"apk", c"add"], "apk add").unwrap_err();
        assert_eq!(e, "apk add exited with status 1 (output in user-data.log)");
    }
}
