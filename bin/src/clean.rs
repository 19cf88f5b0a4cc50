//! `wisp clean`: removes what `wisp_core::clean::plan` names, under `--root`. What is
//! already gone counts as removed, so a clean cut short is finished by running it again.

use wisp_core::clean::{self, Options, Removal};
use wisp_os_linux::fs::Dir;
use wisp_os_linux::Errno;

use crate::context::Context;
use crate::output::{self, Message, Os, Shown};
use crate::state;
use crate::EXIT_FAILED;

/// How deep a directory wisp wrote nests: `scripts/per-boot/NAME`.
const TREE_DEPTH_LIMIT: usize = 2;
/// Names taken from a directory per listing; the listing is repeated until nothing is left.
const NAMES_PER_PASS: usize = 16;

#[inline(never)]
pub fn command(ctx: &Context<'_>, options: Options) -> i32 {
    match clean(ctx, options) {
        Ok(()) => 0,
        Err(e) => {
            output::error(format_args!("clean: {e}"));
            EXIT_FAILED
        }
    }
}

fn clean(ctx: &Context<'_>, options: Options) -> Result<(), Message> {
    let var_path = ctx.config.var_dir.as_bytes();
    for removal in clean::plan(options) {
        let (path, name): (&[u8], &[u8]) = match removal {
            Removal::CompletionMarker | Removal::Var(_) => (var_path, b""),
            Removal::Log(name) => (ctx.config.logs_dir.as_bytes(), name),
            Removal::SshHostKeys => (clean::SSH_DIR, b"ssh_host_*_key*"),
            Removal::EmptyMachineId => clean::MACHINE_ID,
        };
        // A directory that is not there holds nothing to remove.
        let Ok(dir) = ctx.open_dir(path) else { continue };
        let (name, result) = match removal {
            Removal::CompletionMarker => {
                state::set_complete(ctx, &dir, false)?;
                continue;
            }
            Removal::Var(name) => (name, remove(&dir, name, TREE_DEPTH_LIMIT)),
            Removal::SshHostKeys => (name, remove_matching(&dir, 0, clean::is_ssh_host_key)),
            Removal::EmptyMachineId => (name, empty(&dir, name)),
            Removal::Log(name) => (name, remove(&dir, name, 0)),
        };
        result.map_err(|e| msg!("{}/{}: {}", Shown(path), Shown(name), Os(e)))?;
    }
    match ctx.open_dir(var_path) {
        Ok(var) => var.sync().map_err(|e| msg!("{}: {}", Shown(var_path), Os(e))),
        Err(_) => Ok(()),
    }
}

/// Removes a file, or a directory and what it holds down to `depth` levels below it.
fn remove(parent: &Dir, name: &[u8], depth: usize) -> Result<(), Errno> {
    match parent.remove(name) {
        Err(Errno::ISDIR) if depth > 0 => {}
        other => return other.map(drop),
    }
    remove_matching(&parent.open_child(name)?, depth - 1, |_| true)?;
    parent.remove_dir(name).map(drop)
}

/// Removes the entries of `dir` that `matches`.
fn remove_matching(dir: &Dir, depth: usize, matches: fn(&[u8]) -> bool) -> Result<(), Errno> {
    loop {
        let mut names: heapless::Vec<heapless::Vec<u8, 255>, NAMES_PER_PASS> = heapless::Vec::new();
        dir.for_each_entry(|entry| {
            if matches(entry) {
                // Names are at most 255 bytes; past NAMES_PER_PASS, the next pass.
                if let Ok(name) = heapless::Vec::from_slice(entry) {
                    let _ = names.push(name);
                }
            }
        })?;
        if names.is_empty() {
            return Ok(());
        }
        for name in &names {
            remove(dir, name, depth)?;
        }
    }
}

/// Empties the file, atomically, where it exists.
fn empty(dir: &Dir, name: &[u8]) -> Result<(), Errno> {
    match dir.metadata(name)? {
        Some(_) => dir.write_atomic(name, b"", 0o444, None),
        None => Ok(()),
    }
}
