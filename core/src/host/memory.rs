//! An in-memory host for core's tests: every trait of `host`, over maps, recording what
//! was asked of it so a test can assert the order of calls as well as the end state.

use std::collections::BTreeMap;
use std::vec::Vec;

use super::files::{Files, Kind, Metadata};
use super::HostError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub contents: Vec<u8>,
    pub meta: Metadata,
}

/// A file tree keyed by absolute path; directories are entries of kind `Directory`.
#[derive(Default)]
pub struct MemoryHost {
    pub files: BTreeMap<Vec<u8>, Entry>,
    /// Each call made, as `"write /etc/hostname"`, in order.
    pub calls: Vec<std::string::String>,
    /// Paths whose next access fails with this error (then the entry is removed).
    pub fail: BTreeMap<Vec<u8>, HostError>,
}

impl MemoryHost {
    pub fn new() -> MemoryHost {
        MemoryHost::default()
    }

    /// A file with `contents`, mode 0644, owned by root (its parents are not made).
    pub fn with_file(mut self, path: &str, contents: &[u8]) -> MemoryHost {
        self.put(path.as_bytes(), contents, 0o644, (0, 0));
        self
    }

    pub fn contents(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path.as_bytes()).map(|e| e.contents.as_slice())
    }

    fn put(&mut self, path: &[u8], contents: &[u8], mode: u32, (uid, gid): (u32, u32)) {
        let meta = Metadata { kind: Kind::File, mode, uid, gid, len: contents.len() as u64 };
        self.files.insert(path.to_vec(), Entry { contents: contents.to_vec(), meta });
    }

    fn call(&mut self, what: &str, path: &[u8]) -> Result<(), HostError> {
        self.calls.push(std::format!("{what} {}", std::string::String::from_utf8_lossy(path)));
        match self.fail.remove(path) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Files for MemoryHost {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.call("read", path)?;
        let Some(entry) = self.files.get(path) else { return Ok(None) };
        let dest = buf.get_mut(..entry.contents.len()).ok_or(HostError { errno: 27 })?;
        dest.copy_from_slice(&entry.contents);
        Ok(Some(entry.contents.len()))
    }

    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.call("write", path)?;
        self.put(path, contents, mode, owner.unwrap_or((0, 0)));
        Ok(())
    }

    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        self.call("create_dir", path)?;
        if self.files.contains_key(path) {
            return Ok(false);
        }
        let meta = Metadata { kind: Kind::Directory, mode, uid: 0, gid: 0, len: 0 };
        self.files.insert(path.to_vec(), Entry { contents: Vec::new(), meta });
        Ok(true)
    }

    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        self.call("metadata", path)?;
        Ok(self.files.get(path).map(|e| e.meta))
    }

    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.call("set_owner_and_mode", path)?;
        let entry = self.files.get_mut(path).ok_or(HostError::NOT_FOUND)?;
        entry.meta = Metadata { uid, gid, mode, ..entry.meta };
        Ok(())
    }

    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.call("remove", path)?;
        Ok(self.files.remove(path).is_some())
    }

    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        self.call("list", dir)?;
        let mut prefix = dir.to_vec();
        if !prefix.ends_with(b"/") {
            prefix.push(b'/');
        }
        for path in self.files.keys() {
            if let Some(name) = path.strip_prefix(prefix.as_slice()) {
                if !name.is_empty() && !name.contains(&b'/') {
                    visit(name);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_reads_back_and_lists_under_its_directory() {
        let mut host = MemoryHost::new();
        host.create_dir(b"/etc", 0o755).unwrap();
        host.write(b"/etc/hostname", b"alpha\n", 0o644, None).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(host.read(b"/etc/hostname", &mut buf), Ok(Some(6)));
        assert_eq!(host.read(b"/etc/hosts", &mut buf), Ok(None));
        let mut names = Vec::new();
        host.list(b"/etc", &mut |name| names.push(name.to_vec())).unwrap();
        assert_eq!(names, [b"hostname".to_vec()]);
        assert_eq!(host.calls[1], "write /etc/hostname");
    }

    #[test]
    fn a_file_larger_than_the_buffer_is_an_error_not_a_short_read() {
        let mut host = MemoryHost::new().with_file("/etc/passwd", b"root:x:0:0::/root:/bin/sh\n");
        assert_eq!(host.read(b"/etc/passwd", &mut [0u8; 4]), Err(HostError { errno: 27 }));
    }

    #[test]
    fn an_injected_failure_fails_that_path_once() {
        let mut host = MemoryHost::new();
        host.fail.insert(b"/etc/hostname".to_vec(), HostError { errno: 28 });
        assert_eq!(host.write(b"/etc/hostname", b"a", 0o644, None), Err(HostError { errno: 28 }));
        assert_eq!(host.write(b"/etc/hostname", b"a", 0o644, None), Ok(()));
    }
}

// ---- imds: a metadata service of canned answers ----

use std::collections::VecDeque;
use std::string::String;

use super::clock::Clock;
use super::http::{Cause, Endpoint, Exchange, Failure, Http, Outcome};
use crate::retry::{status_is_retryable, GaveUp, Timeouts};

/// What one canned answer is: a status and a body, or a transport failure.
#[derive(Clone, Debug)]
pub enum Answer {
    Reply(u16, Vec<u8>),
    Fail(Cause),
}

/// A request as the network received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub endpoint: Endpoint,
    /// `"GET /latest/meta-data/instance-id"`.
    pub line: String,
    /// Each header but `Host`, as `"Name: value"`, in order.
    pub headers: Vec<String>,
    pub host: String,
    pub body: Vec<u8>,
}

/// A network whose services answer from a table: each `"METHOD /path"` has a queue of
/// answers, the last of which repeats; anything else is a 404. Every request is
/// recorded, grouped by the `exchange_all` call (the round) that sent it.
#[derive(Default)]
pub struct MemoryNetwork {
    pub answers: BTreeMap<String, VecDeque<Answer>>,
    pub rounds: Vec<Vec<Seen>>,
    pub now: u64,
}

impl MemoryNetwork {
    pub fn new() -> MemoryNetwork {
        MemoryNetwork::default()
    }

    /// Answers `request` ("GET /path") with `status` and `body`, after the answers
    /// queued before.
    pub fn serve(mut self, request: &str, status: u16, body: &[u8]) -> MemoryNetwork {
        self.answers.entry(request.into()).or_default().push_back(Answer::Reply(status, body.to_vec()));
        self
    }

    pub fn fail(mut self, request: &str, cause: Cause) -> MemoryNetwork {
        self.answers.entry(request.into()).or_default().push_back(Answer::Fail(cause));
        self
    }

    /// Each round's request lines.
    pub fn lines(&self) -> Vec<Vec<String>> {
        self.rounds.iter().map(|round| round.iter().map(|seen| seen.line.clone()).collect()).collect()
    }

    /// Every request, in the order sent.
    pub fn seen(&self) -> Vec<&Seen> {
        self.rounds.iter().flatten().collect()
    }

    fn answer(&mut self, line: &str) -> Answer {
        match self.answers.get_mut(line) {
            Some(queue) if queue.len() > 1 => queue.pop_front().unwrap(),
            Some(queue) => queue.front().unwrap().clone(),
            None => Answer::Reply(404, b"not found".to_vec()),
        }
    }
}

/// The request's line, `Host` and other headers, and body, as written by `http::write_request`.
fn parse_request(endpoint: Endpoint, request: &[u8]) -> Seen {
    let text = String::from_utf8(request.to_vec()).expect("requests are ASCII");
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete head");
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap();
    let line = first.strip_suffix(" HTTP/1.0").or_else(|| first.strip_suffix(" HTTP/1.1")).unwrap_or(first).into();
    let mut host = String::new();
    let mut headers = Vec::new();
    for header in lines {
        match header.strip_prefix("Host: ") {
            Some(name) => host = name.into(),
            None => headers.push(header.into()),
        }
    }
    Seen { endpoint, line, headers, host, body: body.as_bytes().to_vec() }
}

impl Http for MemoryNetwork {
    fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
        let mut round = Vec::new();
        for exchange in exchanges.iter_mut() {
            let seen = parse_request(endpoint, exchange.request);
            let answer = self.answer(&seen.line);
            round.push(seen);
            exchange.outcome = match answer {
                Answer::Fail(cause) => Outcome::Failed(Failure { cause, gave_up: Some(GaveUp { attempts: 3, total_ms: timeouts.total_ms }) }),
                Answer::Reply(status, _) if status_is_retryable(status) => {
                    Outcome::Failed(Failure { cause: Cause::Status(status), gave_up: Some(GaveUp { attempts: 3, total_ms: timeouts.total_ms }) })
                }
                Answer::Reply(status, body) => {
                    let mut response = std::format!("HTTP/1.0 {status} X\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
                    response.extend_from_slice(&body);
                    let capacity = exchange.response.len();
                    // As Linux's exchange: an answer that overflows the buffer is too large.
                    if response.len() > capacity {
                        exchange.outcome = Outcome::Failed(Cause::Http(crate::http::Error::BodyTooLarge { limit: capacity }).into());
                        continue;
                    }
                    exchange.response[..response.len()].copy_from_slice(&response);
                    match crate::http::parse_response(&exchange.response[..response.len()], capacity, true) {
                        Ok(crate::http::Status::Complete(reply)) => Outcome::Reply {
                            status,
                            body_start: reply.body.as_ptr() as usize - exchange.response.as_ptr() as usize,
                            body_len: reply.body.len(),
                        },
                        Ok(crate::http::Status::Partial) => unreachable!("a complete answer"),
                        Err(e) => Outcome::Failed(Cause::Http(e).into()),
                    }
                }
            };
        }
        self.rounds.push(round);
    }
}

impl Clock for MemoryNetwork {
    fn realtime_secs(&mut self) -> u64 {
        self.now
    }
}
