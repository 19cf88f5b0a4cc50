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

    pub fn key(self) -> &'static str {
        crate::text::nth_word(KEYS, self as usize)
    }

    pub fn from_key(key: &[u8]) -> Option<Item> {
        crate::text::word_index(KEYS, key).and_then(|index| Item::ALL.get(index).copied())
    }
}

/// The items' keys, in the order of `Item`'s variants (one string, not a table, as
/// `config::CLOUD_NAMES`).
const KEYS: &str = "@instance-id @hostname @local-hostname @ssh-keys @userdata";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_reads_back_to_its_item() {
        for item in Item::ALL {
            assert_eq!(Item::from_key(item.key().as_bytes()), Some(item));
        }
        let keys = Item::ALL.map(Item::key);
        assert_eq!(keys, ["@instance-id", "@hostname", "@local-hostname", "@ssh-keys", "@userdata"]);
        assert_eq!(Item::from_key(b"@instance"), None);
        assert_eq!(Item::from_key(b"@hostname @local-hostname"), None);
        assert_eq!(Item::from_key(b""), None);
    }
}
