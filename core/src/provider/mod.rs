//! Metadata services: the requests each cloud expects and the documents it answers with.
//! Providers make no system calls; the binary sends what they describe.

pub mod aws;

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

/// Every metadata service wisp knows listens on this address, port 80.
pub const IMDS_ADDRESS: [u8; 4] = [169, 254, 169, 254];
pub const IMDS_HOST: &str = "169.254.169.254";
