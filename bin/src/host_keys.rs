//! Fresh SSH host keys for each new instance and their fingerprints on the console (the
//! rules are core's `host_keys`; the image's ssh-keygen or dropbearkey makes the keys).

use wisp_core::cloud_config::CloudConfig;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::system::System;
use crate::output::Message;
use crate::host::OpenDir;

#[inline(never)]
pub fn set_ssh_host_keys(ctx: &mut Context<'_>, var: &Dir, config: Option<&CloudConfig<'_>>) -> Result<Message, Message> {
    let mut id_buf = [0u8; wisp_core::instance::INSTANCE_ID_LIMIT];
    let instance_id = wisp_core::instance::saved_id(&mut OpenDir { dir: var }, &mut id_buf).unwrap_or(b"");
    let ctx: &Context<'_> = ctx;
    wisp_core::host_keys::set_ssh_host_keys(&mut System::new(ctx), ctx.config.var_dir.as_bytes(), instance_id, config)
}
