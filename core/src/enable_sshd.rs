//! tiny-cloud's `enable_sshd`: what `rc-update add sshd default` does, a link to sshd's
//! init script in OpenRC's default runlevel, when the image has that script.

use crate::host::files::Files;
use crate::host::links::Links;
use crate::host::messages::Messages;
use crate::system_files::call_failed;

const INIT_SCRIPT: &[u8] = b"/etc/init.d/sshd";
const RUNLEVEL: &[u8] = b"/etc/runlevels/default";

/// The action: a note of what it found or did, or why it failed.
#[inline(never)]
pub fn enable_sshd<H: Files + Links + Messages>(host: &mut H) -> Result<H::Text, H::Text> {
    if host.followed(INIT_SCRIPT).is_none() {
        return Ok(host.text(format_args!("no /etc/init.d/sshd (not OpenRC, or no sshd): nothing to enable")));
    }
    host.create_dir(RUNLEVEL, 0o755).map_err(|e| host.path_error(RUNLEVEL, e))?;
    match host.create_symlink(INIT_SCRIPT, b"/etc/runlevels/default/sshd") {
        Ok(true) => Ok(host.text(format_args!("sshd added to the default runlevel"))),
        Ok(false) => Ok(host.text(format_args!("sshd already in the default runlevel"))),
        Err(e) => Err(call_failed(host, b"/etc/runlevels/default/sshd", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};

    #[test]
    fn the_link_is_made_once_and_only_with_an_init_script() {
        let mut host = MemorySystem::new(MemoryHost::new());
        assert_eq!(enable_sshd(&mut host).unwrap(), "no /etc/init.d/sshd (not OpenRC, or no sshd): nothing to enable");
        assert!(!host.host.files.contains_key(&b"/etc/runlevels/default"[..]));
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/etc/init.d/sshd", "#!/sbin/openrc-run\n");
        assert_eq!(enable_sshd(&mut host).unwrap(), "sshd added to the default runlevel");
        assert_eq!(host.host.files[&b"/etc/runlevels/default/sshd"[..]].contents, b"/etc/init.d/sshd");
        assert_eq!(enable_sshd(&mut host).unwrap(), "sshd already in the default runlevel");
    }
}
