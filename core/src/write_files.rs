//! cloud-config's `write_files`, as wisp writes each entry: who owns the file, and when
//! appending changes nothing (the entry's keys and their shapes are `cloud_config`'s).

use crate::accounts;

/// An entry's `owner`: `user[:group]`, names or numbers; the group defaults to the
/// user's own (or, for a user given as a number with no account, the same number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner<'a> {
    pub user: &'a str,
    pub group: Option<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerError {
    NoSuchUser,
    NoSuchGroup,
}

impl<'a> Owner<'a> {
    pub fn parse(owner: &'a str) -> Owner<'a> {
        let (user, group) = owner.split_once(':').map_or((owner, None), |(u, g)| (u, Some(g)));
        Owner { user, group }
    }

    /// The uid, from /etc/passwd's contents, and the user's own gid when it has an account.
    pub fn uid(&self, passwd: &[u8]) -> Result<(u32, Option<u32>), OwnerError> {
        match (accounts::find_user(passwd, self.user.as_bytes()), self.user.parse::<u32>()) {
            (Some(found), _) => Ok((found.uid, Some(found.gid))),
            (None, Ok(uid)) => Ok((uid, None)),
            (None, Err(_)) => Err(OwnerError::NoSuchUser),
        }
    }

    /// Whether the gid needs /etc/group: a group is named.
    pub fn names_group(&self) -> bool {
        !matches!(self.group, None | Some(""))
    }

    /// The gid, given what `uid` found and (when `names_group`) /etc/group's contents.
    pub fn gid(&self, (uid, users_gid): (u32, Option<u32>), groups: &[u8]) -> Result<u32, OwnerError> {
        match self.group {
            None | Some("") => Ok(users_gid.unwrap_or(uid)),
            Some(group) => match (accounts::find_group(groups, group.as_bytes()), group.parse::<u32>()) {
                (Some(found), _) => Ok(found.gid),
                (None, Ok(gid)) => Ok(gid),
                (None, Err(_)) => Err(OwnerError::NoSuchGroup),
            },
        }
    }
}

/// Whether appending `added` to a file that holds `old` is done already: nothing to add,
/// or the file ends with it, so a rerun never appends twice.
pub fn appended_already(old: &[u8], added: &[u8]) -> bool {
    old.ends_with(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &[u8] = b"root:x:0:0:root:/root:/bin/sh\nalpine:x:1000:1000::/home/alpine:/bin/sh\n";
    const GROUP: &[u8] = b"root:x:0:\nwheel:x:10:alpine\n";

    fn ids(owner: &str) -> Result<(u32, u32), OwnerError> {
        let owner = Owner::parse(owner);
        let uid = owner.uid(PASSWD)?;
        Ok((uid.0, owner.gid(uid, if owner.names_group() { GROUP } else { b"" })?))
    }

    #[test]
    fn owners_by_name_or_number() {
        assert_eq!(ids("alpine"), Ok((1000, 1000)));
        assert_eq!(ids("alpine:wheel"), Ok((1000, 10)));
        assert_eq!(ids("alpine:"), Ok((1000, 1000)));
        assert_eq!(ids("root:1234"), Ok((0, 1234)));
        // A number with no account: its group is the same number.
        assert_eq!(ids("2000"), Ok((2000, 2000)));
        assert_eq!(ids("nobody"), Err(OwnerError::NoSuchUser));
        assert_eq!(ids("alpine:staff"), Err(OwnerError::NoSuchGroup));
        assert!(!Owner::parse("alpine:").names_group() && Owner::parse("a:b").names_group());
    }

    #[test]
    fn appending_twice_changes_nothing() {
        assert!(appended_already(b"a\nline\n", b"line\n"));
        assert!(appended_already(b"anything", b""));
        assert!(!appended_already(b"line\n", b"other\n"));
        assert!(!appended_already(b"ne\n", b"line\n"));
    }
}
