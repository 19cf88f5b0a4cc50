//! The main phase's actions on accounts, names and keys: the default user, the host name,
//! the SSH keys, the SSH host keys, and cloud-config's users. The rules are core's
//! (`wisp_core::users`, `passwords`, `set_hostname`, `host_keys`; the image's ssh-keygen
//! or dropbearkey makes host keys); this module hands them the root.

use wisp_core::cloud_config::CloudConfig;

use crate::context::Context;
use crate::host::system::{today, System};
use crate::output::Message;

#[inline(never)]
pub fn create_default_user(ctx: &Context<'_>, config: Option<&CloudConfig<'static>>) -> Result<Message, Message> {
    wisp_core::users::create_default_user(&mut System::new(ctx), ctx.config.cloud_user.as_bytes(), config, today())
}

#[inline(never)]
pub fn set_hostname(ctx: &Context<'_>, value: Option<&[u8]>, config: Option<&CloudConfig<'static>>) -> Result<Message, Message> {
    wisp_core::set_hostname::set_hostname(&mut System::new(ctx), value, config)
}

#[inline(never)]
pub fn set_ssh_keys(ctx: &Context<'_>, value: Option<&[u8]>, config: Option<&CloudConfig<'static>>) -> Result<Message, Message> {
    wisp_core::users::set_ssh_keys(&mut System::new(ctx), ctx.config.cloud_user.as_bytes(), value, config)
}

/// Fresh host keys for each new instance (the instance saved under `var`).
#[cfg(feature = "ssh")]
#[inline(never)]
pub fn set_ssh_host_keys(ctx: &Context<'_>, var: &wisp_os_linux::fs::Dir, config: Option<&CloudConfig<'_>>) -> Result<Message, Message> {
    let mut id_buf = [0u8; wisp_core::instance::INSTANCE_ID_LIMIT];
    let instance_id = wisp_core::instance::saved_id(&mut crate::host::OpenDir { dir: var }, &mut id_buf).unwrap_or(b"");
    wisp_core::host_keys::set_ssh_host_keys(&mut System::new(ctx), ctx.config.var_dir.as_bytes(), instance_id, config)
}
