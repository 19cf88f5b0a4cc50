//! A user-data script's end, as tiny-cloud records it: `user-data.exit` in
//! TINY_CLOUD_LOGS holds the exit status of the last script run (128 + the signal for
//! one killed, as a shell says it), and is rewritten only when that changes.

use crate::host::directory::Directory;
use crate::host::HostError;
use crate::out::Out;
use crate::state_files::USER_DATA_EXIT;

/// How a script ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signaled(i32),
}

impl Ended {
    /// Whether the script succeeded: exited 0.
    pub fn succeeded(self) -> bool {
        self == Ended::Exited(0)
    }

    /// The status as a shell's `$?` says it.
    pub fn code(self) -> u32 {
        match self {
            Ended::Exited(code) => code.unsigned_abs(),
            Ended::Signaled(signal) => 128 + signal.unsigned_abs(),
        }
    }
}

/// Records `ended` in `logs`' `user-data.exit`, unless it says so already.
#[inline(never)]
pub fn record(logs: &mut impl Directory, ended: Ended) -> Result<(), HostError> {
    let mut line = [0u8; 12];
    let mut out = Out::new(&mut line);
    // A u32 and a newline fit in 12 bytes.
    let _ = out.put_decimal(u64::from(ended.code())).and_then(|()| out.put(b"\n"));
    let mut kept = [0u8; 12];
    if matches!(logs.read(USER_DATA_EXIT, &mut kept), Ok(Some(len)) if kept[..len] == *out.written()) {
        return Ok(());
    }
    logs.write_volatile(USER_DATA_EXIT, out.written(), 0o644)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryHost;

    #[test]
    fn the_status_is_the_shells() {
        assert_eq!(Ended::Exited(0).code(), 0);
        assert_eq!(Ended::Exited(3).code(), 3);
        assert_eq!(Ended::Signaled(9).code(), 137);
        assert!(Ended::Exited(0).succeeded());
        assert!(!Ended::Exited(1).succeeded() && !Ended::Signaled(15).succeeded());
    }

    #[test]
    fn the_file_is_rewritten_only_when_the_status_changes() {
        let mut host = MemoryHost::new();
        record(&mut host.dir("/var/log"), Ended::Signaled(15)).unwrap();
        assert_eq!(host.contents("/var/log/user-data.exit"), Some(&b"143\n"[..]));
        host.calls.clear();
        record(&mut host.dir("/var/log"), Ended::Signaled(15)).unwrap();
        assert_eq!(host.calls, ["read /var/log/user-data.exit"]);
        record(&mut host.dir("/var/log"), Ended::Exited(0)).unwrap();
        assert_eq!(host.contents("/var/log/user-data.exit"), Some(&b"0\n"[..]));
        assert_eq!(host.files[&b"/var/log/user-data.exit".to_vec()].meta.mode, 0o644);
    }

    #[test]
    fn a_file_that_says_something_else_is_replaced() {
        let mut host = MemoryHost::new().with_file("/var/log/user-data.exit", b"not a status at all\n");
        record(&mut host.dir("/var/log"), Ended::Exited(2)).unwrap();
        assert_eq!(host.contents("/var/log/user-data.exit"), Some(&b"2\n"[..]));
    }
}
