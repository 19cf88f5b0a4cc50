//! The metadata one boot's first phase fetched, kept for its later phases (separate
//! processes under OpenRC) in `/run/wisp/metadata`, mode 0600, for this boot only. The
//! rules, and the DMI's that tell the same instance, are `wisp_core::boot_cache`'s.

use wisp_core::boot_cache::{self, BOOT_ID_LIMIT};
use wisp_core::config::Cloud;
use wisp_core::out::Out;
use wisp_core::provider::Item;

use crate::context::Context;
use crate::imds::Metadata;

const DIR: &[u8] = b"/run/wisp";
const FILE: &[u8] = b"metadata";
const BOOT_ID: &[u8] = b"/proc/sys/kernel/random/boot_id";

/// Fills `metadata` with what an earlier phase of this boot kept; false when nothing was
/// kept for this boot.
#[inline(never)]
pub fn load(ctx: &Context<'_>, metadata: &mut Metadata) -> bool {
    let mut boot_id = [0u8; BOOT_ID_LIMIT];
    let Ok(Some(boot_id)) = ctx.read(BOOT_ID, &mut boot_id) else { return false };
    let Ok(dir) = ctx.open_dir(DIR) else { return false };
    let size = match dir.metadata(FILE) {
        Ok(Some(found)) if found.is_file() => found.size as usize,
        _ => return false,
    };
    let Ok(mut room) = crate::memory::map(size, "kept metadata") else { return false };
    let buf = room.as_mut_slice();
    let Ok(Some(len)) = dir.read(FILE, buf) else { return false };
    let Some(values) = boot_cache::decode(&buf[..len], boot_id) else { return false };
    for (item, value) in values {
        match value {
            // A kept value is one that fitted its buffer when fetched.
            Some(value) => drop(metadata.set(item, value)),
            None => metadata.set_len(item, None),
        }
    }
    true
}

/// Keeps what `metadata` holds for the later phases of this boot; a boot without a boot
/// id (a scratch root) keeps nothing. A failure only costs the later phases requests.
#[inline(never)]
pub fn save(ctx: &Context<'_>, metadata: &Metadata) {
    let mut boot_id = [0u8; BOOT_ID_LIMIT];
    let Ok(Some(boot_id)) = ctx.read(BOOT_ID, &mut boot_id) else { return };
    let fetched = Item::ALL.into_iter().filter(|&item| metadata.is_fetched(item)).map(|item| (item, metadata.get(item)));
    // Room for every value and its record line.
    let Ok(mut room) = crate::memory::map(crate::imds::METADATA_SIZE + 512, "kept metadata") else { return };
    let mut out = Out::new(room.as_mut_slice());
    if boot_cache::encode(boot_id.trim_ascii(), fetched, &mut out).is_err() {
        return;
    }
    if let Ok(dir) = ctx.create_dir(DIR) {
        let _ = dir.write_volatile(FILE, out.written(), 0o600);
    }
}

/// Whether the DMI names this instance as `saved_id`, or is the one the completion
/// marker in `var` remembers (see `boot_cache::dmi_same_instance`).
pub fn dmi_same_instance(ctx: &Context<'_>, var: &wisp_os_linux::fs::Dir, cloud: Cloud, saved_id: &[u8]) -> Option<bool> {
    boot_cache::dmi_same_instance(&mut crate::host::files::Root::of(ctx), &mut crate::host::OpenDir { dir: var }, cloud, saved_id)
}
