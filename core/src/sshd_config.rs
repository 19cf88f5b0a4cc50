//! Setting one option of sshd_config(5) as cloud-init's `ssh_pwauth` does (ssh_util's
//! `update_ssh_config`): every global line of the keyword (keywords are
//! case-insensitive) gets the value; without one, a line is added. Unlike cloud-init,
//! lines inside `Match` blocks are left alone (they are not the global setting), a new
//! line goes before the first `Match` (after it, it would be conditional), and every
//! other line is kept byte for byte.

use crate::out::{Full, Out};

/// The drop-in cloud-init writes when the main file includes its `.d` directory.
pub const DROP_IN: &str = "50-cloud-init.conf";

/// The main file includes `/etc/ssh/sshd_config.d/*.conf` (cloud-init's test: a line
/// starting with exactly that).
pub fn includes_drop_ins(main: &[u8]) -> bool {
    main.split(|&b| b == b'\n').any(|line| line.starts_with(b"Include /etc/ssh/sshd_config.d/*.conf"))
}

/// `text` with `keyword value` set, into `out`; `Ok(None)` when it is set already.
pub fn set_option(text: &[u8], keyword: &str, value: &str, out: &mut [u8]) -> Result<Option<usize>, Full> {
    let mut writer = Out::new(out);
    let mut found = false;
    let mut changed = false;
    let mut in_match = false;
    let mut lines = text.split_inclusive(|&b| b == b'\n').peekable();
    let wanted = [keyword.as_bytes(), b" ", value.as_bytes(), b"\n"];
    while let Some(line) = lines.next() {
        let (key, rest) = split_keyword(line);
        in_match |= crate::text::eq_ignoring_case(key, b"Match");
        if !in_match && crate::text::eq_ignoring_case(key, keyword.as_bytes()) {
            found = true;
            if rest != value.as_bytes() {
                changed = true;
                writer.put_all(&wanted)?;
                continue;
            }
        }
        if in_match && !found {
            found = true;
            changed = true;
            writer.put_all(&wanted)?;
        }
        writer.put(line)?;
        if lines.peek().is_none() && !line.ends_with(b"\n") {
            writer.put(b"\n")?;
        }
    }
    if !found {
        changed = true;
        writer.put_all(&wanted)?;
    }
    Ok(changed.then(|| writer.len()))
}

/// A line's keyword and its argument (`Keyword arg`, `Keyword=arg`); an empty keyword for
/// blank and comment lines.
fn split_keyword(line: &[u8]) -> (&[u8], &[u8]) {
    let line = line.trim_ascii();
    if line.first() == Some(&b'#') {
        return (b"", b"");
    }
    let end = line.iter().position(|&b| b == b' ' || b == b'\t' || b == b'=').unwrap_or(line.len());
    let rest = line[end..].trim_ascii_start();
    let rest = rest.strip_prefix(b"=").unwrap_or(rest).trim_ascii_start();
    (&line[..end], rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, value: &str) -> Option<String> {
        let mut out = [0u8; 512];
        set_option(text.as_bytes(), "PasswordAuthentication", value, &mut out).unwrap().map(|n| String::from_utf8(out[..n].to_vec()).unwrap())
    }

    #[test]
    fn sets_replaces_and_leaves_alone() {
        assert_eq!(set("Port 22\n#PasswordAuthentication yes\n", "no").unwrap(), "Port 22\n#PasswordAuthentication yes\nPasswordAuthentication no\n");
        assert_eq!(set("passwordauthentication  yes\nX 1", "no").unwrap(), "PasswordAuthentication no\nX 1\n");
        assert_eq!(set("PasswordAuthentication=no\n", "no"), None);
        assert_eq!(set("PasswordAuthentication no\n", "no"), None);
        assert_eq!(set("", "yes").unwrap(), "PasswordAuthentication yes\n");
        // Match blocks keep their own setting; a new global line goes before them.
        let text = "Port 22\nMatch User bob\n  PasswordAuthentication yes\n";
        assert_eq!(set(text, "no").unwrap(), "Port 22\nPasswordAuthentication no\nMatch User bob\n  PasswordAuthentication yes\n");
        let mut small = [0u8; 8];
        assert!(set_option(b"Port 22\n", "PasswordAuthentication", "no", &mut small).is_err());
    }

    #[test]
    fn drop_ins() {
        assert!(includes_drop_ins(b"# x\nInclude /etc/ssh/sshd_config.d/*.conf\nPort 22\n"));
        assert!(!includes_drop_ins(b"#Include /etc/ssh/sshd_config.d/*.conf\n"));
    }
}
