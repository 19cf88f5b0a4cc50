//! Growing a mounted filesystem and the partition under it: `expand_root` and `wisp grow`.

use wisp_core::cli::GrowTarget;
use wisp_core::mountinfo::{self, Filesystem};

use crate::context::Context;
use crate::output::{Line, Shown};

/// Largest /proc/self/mountinfo read.
const MOUNTINFO_LIMIT: usize = 64 * 1024;

pub fn expand_root(ctx: &mut Context<'_>) -> Result<Line, Line> {
    grow_mount(ctx, b"/")
}

fn grow_mount(ctx: &Context<'_>, mountpoint: &[u8]) -> Result<Line, Line> {
    let mut text = [0u8; MOUNTINFO_LIMIT];
    let mountinfo = ctx.read(b"/proc/self/mountinfo", &mut text)?.ok_or_else(|| msg!("/proc/self/mountinfo is missing"))?;
    let mount = mountinfo::find(mountinfo, mountpoint)
        .map_err(|e| msg!("/proc/self/mountinfo: {e}"))?
        .ok_or_else(|| msg!("nothing is mounted at {}", Shown(mountpoint)))?;
    let filesystem = match mountinfo::growable(&mount) {
        Ok(filesystem) => filesystem,
        Err(reason) => return Ok(msg!("skipped: {} is {} ({reason})", Shown(mountpoint), Shown(mount.fs_type))),
    };
    grow_device(ctx, mountpoint, mount.major, mount.minor, filesystem)
}

fn grow_device(_ctx: &Context<'_>, mountpoint: &[u8], major: u32, minor: u32, _filesystem: Filesystem) -> Result<Line, Line> {
    Err(msg!("{} on {major}:{minor}: partition growth is not wired yet", Shown(mountpoint)))
}

pub fn command(ctx: &mut Context<'_>, target: GrowTarget<'_>) -> i32 {
    let result = match target {
        GrowTarget::Mount(mountpoint) => grow_mount(ctx, mountpoint),
        GrowTarget::Image { .. } => Err(msg!("grow --image is not wired yet")),
    };
    match result {
        Ok(note) => {
            crate::output::print(format_args!("{note}"));
            0
        }
        Err(e) => {
            crate::output::error(format_args!("{e}"));
            crate::EXIT_FAILED
        }
    }
}
