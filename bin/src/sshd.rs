//! `ssh_pwauth`: sshd's `PasswordAuthentication` where cloud-init sets it (the rules are
//! core's `sshd`).

use wisp_core::cloud_config::CloudConfig;

use crate::context::Context;
use crate::host::system::System;
use crate::output::Message;

#[inline(never)]
pub fn ssh_pwauth(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Message, Message> {
    wisp_core::sshd::ssh_pwauth(&mut System::new(ctx), config)
}
