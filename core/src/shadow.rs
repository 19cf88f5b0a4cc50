//! Passwords in /etc/shadow (shadow(5)): what chpasswd -e does to a user's line, which
//! cloud-init's `chpasswd` and `password` keys run (with a last change on day 0 for
//! `expire`, as passwd --expire leaves it). Only the named user's first line changes;
//! every other byte of the file is kept.

use crate::accounts::{check, decimal, fields, lines, AccountsError};
use crate::out::{Full, Out};

const FILE: &str = "/etc/shadow";

/// Sets `name`'s password to `hash` (crypt(3) output, as chpasswd -e takes it) and the
/// day of the last change to `days_since_epoch`: the password (field 2) and last change
/// (field 3) of `name`'s first line.
pub fn set_shadow_password(shadow: &[u8], name: &[u8], hash: &[u8], days_since_epoch: u64, out: &mut [u8]) -> Result<usize, AccountsError> {
    check(&"password", hash)?;
    check(&"user name", name)?;
    if name.is_empty() {
        return Err(AccountsError::BadField { field: &"user name" });
    }
    let mut digits = [0u8; 20];
    let last_change = decimal(days_since_epoch, &mut digits);
    let too_large = |full: Full| AccountsError::TooLarge { file: &FILE, limit: full.limit as u32 };
    let mut writer = Out::new(out);
    let mut done = false;
    for (index, line) in lines(shadow).enumerate() {
        if index > 0 {
            writer.put(b"\n").map_err(too_large)?;
        }
        match fields::<9>(line) {
            Some(old) if !done && old[0] == name => {
                writer.put_all(&[old[0], b":", hash, b":", last_change]).map_err(too_large)?;
                // The rest of the line as it was, from its third ':'.
                let rest_at = old[0].len() + old[1].len() + old[2].len() + 2;
                writer.put(&line[rest_at..]).map_err(too_large)?;
                done = true;
            }
            _ => writer.put(line).map_err(too_large)?,
        }
    }
    match done {
        true => Ok(writer.len()),
        false => Err(AccountsError::MissingUser { file: &FILE }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHADOW: &[u8] = b"root:*::0:::::\nalpine:*:20414:0:99999:7:::\nbob:$6$s$h:19000:0:99999:7:::\n";

    fn run(result: Result<usize, AccountsError>, out: &[u8]) -> Vec<u8> {
        out[..result.unwrap()].to_vec()
    }

    #[test]
    fn set_password_and_day() {
        let mut out = [0u8; 512];
        let new = run(set_shadow_password(SHADOW, b"alpine", b"$6$salt$hash", 20_500, &mut out), &out);
        assert_eq!(new, b"root:*::0:::::\nalpine:$6$salt$hash:20500:0:99999:7:::\nbob:$6$s$h:19000:0:99999:7:::\n");
        // No final newline, and an empty last-change field.
        let new = run(set_shadow_password(b"root:*::0:::::", b"root", b"$6$a$b", 7, &mut out), &out);
        assert_eq!(new, b"root:$6$a$b:7:0:::::");
        // Only the first of two lines for one name changes.
        let new = run(set_shadow_password(b"a:x:1::::::\na:y:2::::::\n", b"a", b"z", 3, &mut out), &out);
        assert_eq!(new, b"a:z:3::::::\na:y:2::::::\n");
    }

    #[test]
    fn refusals_and_limits() {
        let mut out = [0u8; 512];
        let missing = Err(AccountsError::MissingUser { file: &"/etc/shadow" });
        assert_eq!(set_shadow_password(SHADOW, b"carol", b"h", 1, &mut out), missing);
        assert_eq!(set_shadow_password(SHADOW, b"alp", b"h", 1, &mut out), missing);
        // A line that is not shadow(5)'s nine fields is never matched.
        assert_eq!(set_shadow_password(b"alpine:*:1\n", b"alpine", b"h", 1, &mut out), missing);
        assert_eq!(set_shadow_password(b"", b"root", b"h", 0, &mut out), missing);
        assert_eq!(
            set_shadow_password(SHADOW, b"bob", b"h:0:0", 1, &mut out),
            Err(AccountsError::BadField { field: &"password" })
        );
        assert_eq!(
            set_shadow_password(SHADOW, b"bob\nroot", b"h", 1, &mut out),
            Err(AccountsError::BadField { field: &"user name" })
        );
        assert_eq!(set_shadow_password(b":x:1::::::\n", b"", b"h", 0, &mut out), Err(AccountsError::BadField { field: &"user name" }));
        let expected_len = SHADOW.len() - b"$6$s$h".len() + 1;
        let mut exact = vec![0u8; expected_len];
        assert_eq!(set_shadow_password(SHADOW, b"bob", b"h", 19000, &mut exact), Ok(expected_len));
        let mut short = vec![0u8; expected_len - 1];
        assert_eq!(
            set_shadow_password(SHADOW, b"bob", b"h", 19000, &mut short),
            Err(AccountsError::TooLarge { file: &"/etc/shadow", limit: expected_len as u32 - 1 })
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut garbage = crate::fuzz::Garbage::new(11);
        let mut out = [0u8; 512];
        for _ in 0..300 {
            let text = garbage.text(&[b"a", b":", b"!", b"\n", b"0", b"$"], 200);
            if let Ok(len) = set_shadow_password(&text, b"a", b"h", 1, &mut out) {
                assert!(out[..len].split(|&b| b == b'\n').any(|line| line.starts_with(b"a:h:")));
            }
            let _ = set_shadow_password(&text, b"a", b"!h", 0, &mut out[..garbage.below(64)]);
        }
    }
}
