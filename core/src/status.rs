//! `wisp status`: whether the bootstrap is complete and which instance it was for, said in
//! one line, and how the command exits. It reads the saved state and writes nothing;
//! `--wait` first waits for this boot's `result.json`, as `cloud-init status --wait` does.

use core::fmt;

use crate::cli::EXIT_FAILED;
use crate::cloud_init_status::result_has_errors;
use crate::completion;
use crate::host::directory::Directory;
use crate::host::explain::{ErrnoWords, Explain};
use crate::host::timer::Timer;
use crate::host::HostError;
use crate::instance::{self, INSTANCE_ID_LIMIT};
use crate::text::{Decimal, Shown};

/// Where the phases leave `result.json` (`cloud_init_status`), under the root.
const RESULT_PATH: &[u8] = b"/run/cloud-init/result.json";

/// How often `--wait` looks for `result.json`, as cloud-init's command does.
const POLL_MS: u64 = 250;

/// The state of TINY_CLOUD_VAR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status<'b> {
    pub complete: bool,
    /// The instance-id saved by the last bootstrap, if any.
    pub instance_id: Option<&'b [u8]>,
}

/// The completion marker could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusError(pub HostError);

impl Explain for StatusError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        f.write_str("cannot read the completion marker: ")?;
        words(self.0, f)
    }
}

/// The status of `var` (TINY_CLOUD_VAR, open): `None` when it does not exist, which is
/// an instance never bootstrapped.
pub fn read<'b>(var: Option<&mut impl Directory>, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Result<Status<'b>, StatusError> {
    let Some(var) = var else { return Ok(Status { complete: false, instance_id: None }) };
    let complete = completion::is_complete(var).map_err(StatusError)?;
    Ok(Status { complete, instance_id: instance::saved_id(var, buf) })
}

/// `--wait`: polls for `result.json` (for at most `timeout_s`), then says whether its list
/// of errors (which the log has too) is empty. `read` is the host's read of `RESULT_PATH`
/// (its errors in the host's words) into `buf` (`cloud_init_status::DOCUMENT_LIMIT` bytes, the host's room:
/// on the stack they were probed whole by `wisp status` with or without `--wait`), `text`
/// its message line.
pub fn wait_for_result<E>(timer: &mut impl Timer, timeout_s: Option<u32>, buf: &mut [u8], mut read: impl FnMut(&[u8], &mut [u8]) -> Result<Option<usize>, E>, text: fn(fmt::Arguments<'_>) -> E) -> Result<bool, E> {
    let started = timer.now_ms();
    loop {
        if let Some(len) = read(RESULT_PATH, buf)? {
            let errors = result_has_errors(buf.get(..len).unwrap_or_default());
            return errors.map(|any| !any).map_err(|e| text(format_args!("{}: {e}", Shown(RESULT_PATH))));
        }
        if let Some(limit) = timeout_s {
            if timer.now_ms() - started >= u64::from(limit) * 1000 {
                return Err(text(format_args!("status --wait: no {} after {} s (--timeout)", Shown(RESULT_PATH), Decimal(limit.into()))));
            }
        }
        timer.pause_ms(POLL_MS);
    }
}

impl Status<'_> {
    /// 0 when complete, else 1. After `--wait` (`waited`: whether this boot's phases
    /// ended without errors), by the phases' errors alone, as `cloud-init status --wait`.
    pub fn exit_code(&self, waited: Option<bool>) -> i32 {
        match waited {
            Some(false) => EXIT_FAILED,
            Some(true) => 0,
            None if self.complete => 0,
            None => EXIT_FAILED,
        }
    }
}

/// `complete` or `incomplete`, then the instance-id when one is saved.
impl fmt::Display for Status<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.complete { "complete" } else { "incomplete" })?;
        match self.instance_id {
            Some(id) => {
                f.write_str(" ")?;
                Shown(id).fmt(f)
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_init_status::DOCUMENT_LIMIT;
    use crate::host::explain::{errno_number, Worded};
    use crate::host::memory::MemoryHost;

    fn status_of(host: &mut MemoryHost) -> (std::string::String, bool) {
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        let status = read(Some(&mut host.dir("/var/lib/cloud")), &mut buf).unwrap();
        (status.to_string(), status.complete)
    }

    #[test]
    fn complete_or_not_then_the_saved_instance() {
        let mut host = MemoryHost::new();
        assert_eq!(status_of(&mut host), ("incomplete".into(), false));
        host = host.with_file("/var/lib/cloud/.instance-id", b"i-0abc\n");
        assert_eq!(status_of(&mut host), ("incomplete i-0abc".into(), false));
        host = host.with_file("/var/lib/cloud/.bootstrap-complete", b"");
        assert_eq!(status_of(&mut host), ("complete i-0abc".into(), true));
        // An id from outside is shown, never printed raw.
        host = host.with_file("/var/lib/cloud/.instance-id", b"i-\x1b[2J\n");
        assert_eq!(status_of(&mut host).0, "complete i-\\x1b[2J");
        // It only reads.
        assert!(host.calls.iter().all(|call| call.starts_with("read ") || call.starts_with("metadata ")), "{:?}", host.calls);
    }

    #[test]
    fn no_directory_is_a_machine_never_bootstrapped() {
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        let status = read(None::<&mut crate::host::memory::MemoryDir<'_>>, &mut buf).unwrap();
        assert_eq!((status.to_string(), status.exit_code(None)), ("incomplete".into(), 1));
    }

    #[test]
    fn exit_codes_with_and_without_wait() {
        let complete = Status { complete: true, instance_id: None };
        let incomplete = Status { complete: false, instance_id: None };
        assert_eq!((complete.exit_code(None), incomplete.exit_code(None)), (0, 1));
        // After --wait, the phases' errors decide, not the marker (INIT_ACTIONS may set none).
        assert_eq!((complete.exit_code(Some(true)), incomplete.exit_code(Some(true))), (0, 0));
        assert_eq!((complete.exit_code(Some(false)), incomplete.exit_code(Some(false))), (1, 1));
    }

    fn read_from(host: &mut MemoryHost) -> impl FnMut(&[u8], &mut [u8]) -> Result<Option<usize>, std::string::String> + '_ {
        move |path, buf| crate::host::files::Files::read(host, path, buf).map_err(|e| std::format!("{e}"))
    }

    fn text(args: fmt::Arguments<'_>) -> std::string::String {
        std::format!("{args}")
    }

    #[test]
    fn wait_polls_until_result_json_then_says_whether_it_lists_errors() {
        use crate::host::memory::MemoryTimer;
        let mut timer = MemoryTimer::default();
        let mut host = MemoryHost::new().with_file("/run/cloud-init/result.json", b"{\"v1\": {\"errors\": []}}");
        assert_eq!(wait_for_result(&mut timer, None, &mut [0; DOCUMENT_LIMIT], read_from(&mut host), text), Ok(true));
        assert!(timer.pauses.is_empty(), "{:?}", timer.pauses);
        let mut host = MemoryHost::new().with_file("/run/cloud-init/result.json", b"{\"v1\": {\"errors\": [\"boot: failed\"]}}");
        assert_eq!(wait_for_result(&mut timer, Some(5), &mut [0; DOCUMENT_LIMIT], read_from(&mut host), text), Ok(false));
        let mut host = MemoryHost::new().with_file("/run/cloud-init/result.json", b"{\"v1\": ");
        assert!(wait_for_result(&mut timer, None, &mut [0; DOCUMENT_LIMIT], read_from(&mut host), text).unwrap_err().starts_with("/run/cloud-init/result.json: "));
    }

    #[test]
    fn wait_looks_every_250_ms_until_the_timeout() {
        use crate::host::memory::MemoryTimer;
        let mut timer = MemoryTimer { now: 1_000, pauses: std::vec::Vec::new() };
        let mut reads = 0;
        let read = |path: &[u8], _: &mut [u8]| {
            assert_eq!(path, b"/run/cloud-init/result.json");
            reads += 1;
            Ok(None)
        };
        let error = wait_for_result(&mut timer, Some(1), &mut [0; DOCUMENT_LIMIT], read, text).unwrap_err();
        assert_eq!(error, "status --wait: no /run/cloud-init/result.json after 1 s (--timeout)");
        assert_eq!((timer.pauses.as_slice(), reads), (&[250, 250, 250, 250][..], 5));
    }

    #[test]
    fn wait_stops_at_a_read_that_fails() {
        use crate::host::memory::MemoryTimer;
        let mut host = MemoryHost::new();
        host.fail.insert(RESULT_PATH.to_vec(), HostError { errno: 13 });
        assert_eq!(wait_for_result(&mut MemoryTimer::default(), Some(60), &mut [0; DOCUMENT_LIMIT], read_from(&mut host), text), Err("errno 13".into()));
    }

    #[test]
    fn an_unreadable_marker_is_an_error() {
        let mut host = MemoryHost::new();
        host.fail.insert(b"/var/lib/cloud/.bootstrap-complete".to_vec(), HostError { errno: 13 });
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        let error = read(Some(&mut host.dir("/var/lib/cloud")), &mut buf).unwrap_err();
        assert_eq!(Worded(&error, errno_number).to_string(), "cannot read the completion marker: errno 13");
    }
}
