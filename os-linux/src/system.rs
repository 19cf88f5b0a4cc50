//! Host identity and power.

use rustix::io::Errno;
use rustix::system::RebootCommand;

/// sethostname(2): the kernel's hostname for this UTS namespace.
pub fn set_hostname(name: &[u8]) -> Result<(), Errno> {
    rustix::system::sethostname(name)
}

/// getrandom(2): fills `buf` from the kernel's random pool (salts for password hashes).
pub fn random_bytes(buf: &mut [u8]) -> Result<(), Errno> {
    let mut filled = 0;
    while filled < buf.len() {
        filled += rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty())?;
    }
    Ok(())
}

/// What cloud-config's `power_state` can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerAction {
    PowerOff,
    Restart,
    Halt,
}

/// sync(2) then reboot(2): the machine stops at once, returning only on failure (EPERM
/// without CAP_SYS_BOOT). The sync comes first because reboot(2) itself loses whatever is
/// not on disk yet; no service is stopped and nothing is unmounted, which is init's job
/// when asked to shut down instead. In a PID namespace other than the first, reboot(2)
/// ends that namespace's init rather than the machine.
pub fn reboot(action: PowerAction) -> Result<(), Errno> {
    rustix::fs::sync();
    rustix::system::reboot(match action {
        PowerAction::PowerOff => RebootCommand::PowerOff,
        PowerAction::Restart => RebootCommand::Restart,
        PowerAction::Halt => RebootCommand::Halt,
    })
}
