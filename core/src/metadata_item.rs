//! The metadata every cloud offers, by the names `wisp imds` and the boot cache use: what
//! the phases' actions ask for and the providers fetch.

/// The metadata every cloud offers, named as `wisp imds` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    InstanceId,
    Hostname,
    LocalHostname,
    SshKeys,
    UserData,
}

impl Item {
    pub const ALL: [Item; 5] =
        [Item::InstanceId, Item::Hostname, Item::LocalHostname, Item::SshKeys, Item::UserData];

    pub const fn key(self) -> &'static str {
        match self {
            Item::InstanceId => "@instance-id",
            Item::Hostname => "@hostname",
            Item::LocalHostname => "@local-hostname",
            Item::SshKeys => "@ssh-keys",
            Item::UserData => "@userdata",
        }
    }

    pub fn from_key(key: &[u8]) -> Option<Item> {
        Item::ALL.into_iter().find(|item| item.key().as_bytes() == key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_reads_back_to_its_item() {
        for item in Item::ALL {
            assert_eq!(Item::from_key(item.key().as_bytes()), Some(item));
        }
        assert_eq!(Item::from_key(b"@instance"), None);
        assert_eq!(Item::from_key(b""), None);
    }
}
