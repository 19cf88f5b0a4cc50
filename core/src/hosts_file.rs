//! The `127.0.1.1` line of /etc/hosts, which names the host locally. tiny-cloud appends
//! one every run; wisp keeps exactly one, replacing it in place, and leaves every other
//! line as it was.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::Decimal;

pub const ADDRESS: &[u8] = b"127.0.1.1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostsError {
    /// The new file does not fit in the caller's buffer, whose size is the limit.
    TooLarge { limit: usize },
}

impl fmt::Display for HostsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostsError::TooLarge { limit } => write!(f, "/etc/hosts would be larger than {limit} bytes", limit = Decimal(*limit as u64)),
        }
    }
}

/// The new /etc/hosts in `out`, or `None` when `existing` already is exactly that.
pub fn update(existing: &[u8], fqdn: &str, short: &str, out: &mut [u8]) -> Result<Option<usize>, HostsError> {
    let mut writer = Out::new(out);
    let mut written_ours = false;
    for line in lines(existing) {
        if is_ours(line) {
            if !written_ours {
                put_line(&mut writer, fqdn, short)?;
                written_ours = true;
            }
            continue;
        }
        writer.put_all(&[line, b"\n"])?;
    }
    if !written_ours {
        put_line(&mut writer, fqdn, short)?;
    }
    let changed = writer.written() != existing;
    Ok(changed.then_some(writer.len()))
}

fn put_line(out: &mut Out<'_>, fqdn: &str, short: &str) -> Result<(), HostsError> {
    let (separator, short) = if short == fqdn { ("", "") } else { (" ", short) };
    let line: [&[u8]; 6] = [ADDRESS, b"\t", fqdn.as_bytes(), separator.as_bytes(), short.as_bytes(), b"\n"];
    out.put_all(&line).map_err(HostsError::from)
}

impl From<Full> for HostsError {
    fn from(full: Full) -> Self {
        HostsError::TooLarge { limit: full.limit }
    }
}

/// A line whose first field is 127.0.1.1.
fn is_ours(line: &[u8]) -> bool {
    let start = line.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(line.len());
    let rest = &line[start..];
    rest.starts_with(ADDRESS) && matches!(rest.get(ADDRESS.len()), Some(b' ' | b'\t') | None)
}

/// The lines of a file, without their newlines; a last line without one still counts.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    text.split(|&b| b == b'\n').filter(move |_| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(existing: &[u8], fqdn: &str, short: &str) -> Option<Vec<u8>> {
        crate::fuzz::seed_pair("hostname", fqdn.as_bytes(), existing);
        let mut out = [0u8; 1024];
        update(existing, fqdn, short, &mut out).unwrap().map(|n| out[..n].to_vec())
    }

    const ALPINE: &[u8] = b"127.0.0.1\tlocalhost localhost.localdomain\n::1\t\tlocalhost localhost.localdomain\n";

    #[test]
    fn appends_then_stays() {
        let once = run(ALPINE, "web1.example.com", "web1").unwrap();
        let mut expected = ALPINE.to_vec();
        expected.extend_from_slice(b"127.0.1.1\tweb1.example.com web1\n");
        assert_eq!(once, expected);
        assert_eq!(run(&once, "web1.example.com", "web1"), None);
    }

    #[test]
    fn replaces_in_place_and_collapses_duplicates() {
        let existing = b"# hosts\n127.0.1.1 old.example old\n10.0.0.1 db\n  127.0.1.1\told2\n127.0.1.10 other\n";
        let new = run(existing, "web1", "web1").unwrap();
        assert_eq!(new, b"# hosts\n127.0.1.1\tweb1\n10.0.0.1 db\n127.0.1.10 other\n");
    }

    #[test]
    fn missing_final_newline_and_empty_file() {
        assert_eq!(run(b"127.0.0.1 localhost", "a.b", "a").unwrap(), b"127.0.0.1 localhost\n127.0.1.1\ta.b a\n");
        assert_eq!(run(b"", "a", "a").unwrap(), b"127.0.1.1\ta\n");
    }

    #[test]
    fn limit_at_the_boundary() {
        let expected_len = ALPINE.len() + b"127.0.1.1\tweb1\n".len();
        let mut exact = vec![0u8; expected_len];
        assert_eq!(update(ALPINE, "web1", "web1", &mut exact), Ok(Some(expected_len)));
        let mut short = vec![0u8; expected_len - 1];
        assert_eq!(update(ALPINE, "web1", "web1", &mut short), Err(HostsError::TooLarge { limit: expected_len - 1 }));
    }
}
