//! The main phase's actions on accounts and names: the default user, the host name, the
//! SSH keys, and cloud-config's users. The rules are core's (`wisp_core::users`,
//! `passwords`, `set_hostname`); this module hands them the root.

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
