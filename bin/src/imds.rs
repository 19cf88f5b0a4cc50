//! The metadata service of the instance's cloud, fetched in as few rounds as the
//! dependencies allow: AWS needs a token first, then everything else at once, then one
//! request per SSH key named by the listing; GCP is one round of values; OCI and Azure
//! answer with one document that holds everything.

use core::fmt;

use wisp_core::config::Cloud;
use wisp_core::http::{self, Method, Request};
#[cfg(feature = "gcp")]
use wisp_core::out::Out;
#[cfg(feature = "azure")]
use wisp_core::provider::azure;
#[cfg(feature = "gcp")]
use wisp_core::provider::{self, gcp};
#[cfg(feature = "configdrive")]
use wisp_core::provider::openstack;
use wisp_core::provider::{aws, oci, DocumentError, Item, IMDS_ADDRESS, IMDS_HOST};
#[cfg(feature = "digitalocean")]
use wisp_core::provider::digitalocean;
#[cfg(feature = "hetzner")]
use wisp_core::provider::hetzner;
#[cfg(feature = "incus")]
use wisp_core::provider::incus;
#[cfg(feature = "scaleway")]
use wisp_core::provider::scaleway;
#[cfg(feature = "vultr")]
use wisp_core::provider::vultr;
#[cfg(feature = "incus")]
use wisp_os_linux::cpath::CPath;
use wisp_core::retry::Timeouts;

use crate::fetch::{exchange_all, exchange_all_at, Endpoint, Exchange, Failure, PARALLEL_LIMIT};
use crate::take_once::TakeOnce;
use crate::output::Line;

/// One GET of a round: what it is (for messages), where, and where its answer goes.
struct Target<'b, 's> {
    what: &'static str,
    path: &'s str,
    buf: &'b mut [u8],
    state: &'b mut ValueState,
}

/// Longest session token wisp keeps (AWS's are 56 bytes).
pub const TOKEN_LIMIT: usize = 256;
/// The size of each response buffer: head and body together.
pub const SMALL_RESPONSE: usize = 4 * 1024;
/// A key's response: an RSA key of 16384 bits is 2.8 KiB of base64.
pub const KEY_RESPONSE: usize = 4 * 1024;
/// AWS caps user-data at 16 KiB; other clouds allow up to 256 KiB.
pub const USERDATA_RESPONSE: usize = 256 * 1024 + 1024;
const REQUEST_LIMIT: usize = 512;

#[derive(Clone, Copy, Debug)]
pub enum ImdsError {
    Fetch { what: &'static str, failure: Failure },
    /// A status that means the service refuses us, such as 403 when IMDS is disabled.
    Refused { what: &'static str, status: u16 },
    Request(http::Error),
    TokenTooLong { limit: usize },
    KeyListing(aws::KeyListingError),
    /// The document, or a value in it, is not what the cloud documents.
    Document { what: &'static str, error: DocumentError },
    ValueTooLarge { what: &'static str, limit: usize },
    /// This wisp has no metadata service for the cloud.
    NoService { cloud: &'static str },
}

impl ImdsError {
    /// The item whose fetch failed, when it was one item's.
    pub fn item(&self) -> Option<Item> {
        match self {
            ImdsError::Fetch { what, .. } | ImdsError::Refused { what, .. } => match *what {
                "public-keys" | "openssh-key" => Some(Item::SshKeys),
                what => Item::from_key(what.as_bytes()),
            },
            ImdsError::KeyListing(_) => Some(Item::SshKeys),
            ImdsError::Document { what, .. } | ImdsError::ValueTooLarge { what, .. } => Item::from_key(what.as_bytes()),
            _ => None,
        }
    }
}

impl fmt::Display for ImdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImdsError::Fetch { what, failure } => write!(f, "metadata {what}: {failure}"),
            ImdsError::Refused { what, status } => write!(f, "metadata {what}: refused with HTTP status {}", u32::from(*status)),
            ImdsError::Request(e) => write!(f, "cannot write the metadata request: {e}"),
            ImdsError::TokenTooLong { limit } => write!(f, "metadata token longer than {limit} bytes"),
            ImdsError::KeyListing(e) => write!(f, "metadata {e}"),
            ImdsError::Document { what, error } => write!(f, "metadata {what}: {error}"),
            ImdsError::ValueTooLarge { what, limit } => write!(f, "metadata {what} larger than {limit} bytes"),
            ImdsError::NoService { cloud } => write!(f, "CLOUD={cloud} has no metadata service this wisp can read"),
        }
    }
}

/// One metadata value, stored in the buffer its response was received into.
pub struct Value {
    buf: &'static mut [u8],
    state: ValueState,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueState {
    NotFetched,
    Absent,
    Present { start: usize, len: usize },
}

impl Value {
    /// The first `len` bytes of `space` as a value's buffer; the rest is left in `space`.
    fn new(space: &mut &'static mut [u8], len: usize) -> Self {
        let (buf, rest) = core::mem::take(space).split_at_mut(len);
        *space = rest;
        Value { buf, state: ValueState::NotFetched }
    }

    /// `None` when the service has no such value (404) or it was not fetched.
    pub fn get(&self) -> Option<&[u8]> {
        match self.state {
            ValueState::Present { start, len } => Some(&self.buf[start..start + len]),
            _ => None,
        }
    }

    pub fn is_fetched(&self) -> bool {
        self.state != ValueState::NotFetched
    }

    /// The value is the first `len` bytes of its buffer, or absent.
    fn set(&mut self, len: Option<usize>) {
        self.state = len.map_or(ValueState::Absent, |len| ValueState::Present { start: 0, len });
    }
}

/// Everything a bootstrap reads from the metadata service, fetched on demand.
pub struct Metadata {
    /// One per item, in `Item::ALL`'s order; the keys one per line.
    values: [Value; 5],
    /// OCI's and Azure's whole document, and GCP's keys while they are combined.
    document: Value,
}

/// The room of every value together.
pub const METADATA_SIZE: usize = 3 * SMALL_RESPONSE + 2 * USERDATA_RESPONSE + KEYS_RESPONSE;
const KEYS_RESPONSE: usize = aws::KEYS_LIMIT * KEY_RESPONSE;

impl Metadata {
    /// Carves the values' buffers out of `space`, which holds `METADATA_SIZE` bytes.
    fn new(mut space: &'static mut [u8]) -> Self {
        let space = &mut space;
        Metadata {
            values: Item::ALL.map(|item| {
                let len = match item {
                    Item::UserData => USERDATA_RESPONSE,
                    Item::SshKeys => KEYS_RESPONSE,
                    _ => SMALL_RESPONSE,
                };
                Value::new(space, len)
            }),
            document: Value::new(space, USERDATA_RESPONSE),
        }
    }

    /// The values by name, for a round that fills several.
    fn parts(&mut self) -> (&mut [Value; 5], &mut Value) {
        (&mut self.values, &mut self.document)
    }

    pub fn get(&self, item: Item) -> Option<&[u8]> {
        self.values[item as usize].get()
    }

    /// The buffer an item's value is kept in, for filling from a local seed.
    pub fn buffer(&mut self, item: Item) -> &mut [u8] {
        self.values[item as usize].buf
    }

    /// The value is the first `len` bytes of its buffer (`None`: absent).
    pub fn set_len(&mut self, item: Item, len: Option<usize>) {
        self.values[item as usize].set(len)
    }

    /// Sets a value from bytes (a seed's `h=`/`i=` override).
    pub fn set(&mut self, item: Item, value: &[u8]) -> Result<(), ImdsError> {
        let buf = self.buffer(item);
        let limit = buf.len();
        buf.get_mut(..value.len()).ok_or(ImdsError::ValueTooLarge { what: item.key(), limit })?.copy_from_slice(value);
        self.set_len(item, Some(value.len()));
        Ok(())
    }

    pub fn is_fetched(&self, item: Item) -> bool {
        self.values[item as usize].is_fetched()
    }

    /// The instance document of the clouds that answer with one, once fetched.
    pub fn document(&self) -> Option<&[u8]> {
        self.document.get()
    }
}

static METADATA: TakeOnce<Option<Metadata>> = TakeOnce::new(None);

/// The process's metadata store, mapped when first needed; an error if it was taken before.
pub fn take_metadata() -> Result<&'static mut Metadata, Line> {
    let slot = METADATA.take().ok_or_else(|| msg!("metadata store already in use"))?;
    Ok(slot.insert(Metadata::new(crate::memory::reserve(METADATA_SIZE, "metadata")?)))
}

/// A conversation with the metadata service: its settings and its session token.
pub struct Imds<'c> {
    cloud: Cloud,
    timeouts: &'c Timeouts,
    token_ttl: u32,
    token: heapless::Vec<u8, TOKEN_LIMIT>,
    /// Requests sent so far, for the log.
    pub requests: u32,
    /// The guest API's socket, for the clouds served over one (Incus).
    #[cfg(feature = "incus")]
    pub socket: Option<CPath>,
}

impl<'c> Imds<'c> {
    pub fn new(cloud: Cloud, timeouts: &'c Timeouts, token_ttl: u32) -> Self {
        Imds {
            cloud,
            timeouts,
            token_ttl,
            token: heapless::Vec::new(),
            requests: 0,
            #[cfg(feature = "incus")]
            socket: None,
        }
    }

    pub fn cloud(&self) -> Cloud {
        self.cloud
    }

    /// Fetches the items not fetched yet, all at once.
    pub fn fetch(&mut self, metadata: &mut Metadata, items: &[Item]) -> Result<(), ImdsError> {
        let wanted: heapless::Vec<Item, 5> =
            Item::ALL.into_iter().filter(|&item| items.contains(&item) && !metadata.is_fetched(item)).collect();
        if wanted.is_empty() {
            return Ok(());
        }
        match self.cloud {
            #[cfg(feature = "aws")]
            Cloud::Aws => self.fetch_aws(metadata, &wanted),
            #[cfg(feature = "gcp")]
            Cloud::Gcp => self.fetch_gcp(metadata, &wanted),
            #[cfg(feature = "oci")]
            Cloud::Oci => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "azure")]
            Cloud::Azure => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "configdrive")]
            Cloud::Openstack => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "hetzner")]
            Cloud::Hetzner => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "digitalocean")]
            Cloud::Digitalocean => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "scaleway")]
            Cloud::Scaleway => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "incus")]
            Cloud::Incus => self.fetch_document(metadata, &wanted),
            #[cfg(feature = "vultr")]
            Cloud::Vultr => self.fetch_document(metadata, &wanted),
            other => Err(ImdsError::NoService { cloud: other.name() }),
        }
    }

    /// The one document OCI and Azure answer with, then each value out of it. OCI's
    /// version 2 wants a header; where it is refused, version 1 does without.
    #[cfg(any(
        feature = "oci",
        feature = "azure",
        feature = "configdrive",
        feature = "hetzner",
        feature = "digitalocean",
        feature = "scaleway",
        feature = "incus",
        feature = "vultr"
    ))]
    fn fetch_document(&mut self, metadata: &mut Metadata, wanted: &[Item]) -> Result<(), ImdsError> {
        let ([instance_id, hostname, local_hostname, ssh_keys, user_data], document) = metadata.parts();
        if !document.is_fetched() {
            let path = match self.cloud {
                #[cfg(feature = "azure")]
                Cloud::Azure => azure::INSTANCE_PATH,
                #[cfg(feature = "configdrive")]
                Cloud::Openstack => openstack::META_DATA_PATH,
                #[cfg(feature = "hetzner")]
                Cloud::Hetzner => hetzner::METADATA_PATH,
                #[cfg(feature = "digitalocean")]
                Cloud::Digitalocean => digitalocean::METADATA_PATH,
                #[cfg(feature = "scaleway")]
                Cloud::Scaleway => scaleway::CONF_PATH,
                #[cfg(feature = "incus")]
                Cloud::Incus => incus::META_DATA_PATH,
                #[cfg(feature = "vultr")]
                Cloud::Vultr => vultr::METADATA_PATH,
                _ => oci::V2_PATH,
            };
            let mut state = ValueState::NotFetched;
            let first = self.get_all(&mut [Target { what: "instance document", path, buf: document.buf, state: &mut state }]);
            let refused = matches!(first, Err(ImdsError::Refused { status: 401 | 403, .. })) || state == ValueState::Absent;
            if self.cloud == Cloud::Oci && refused {
                let v1 = Target { what: "instance document", path: oci::V1_PATH, buf: document.buf, state: &mut state };
                self.get_all(&mut [v1])?;
            } else {
                first?;
            }
            document.state = match state {
                ValueState::Present { .. } => state,
                _ => return Err(ImdsError::Refused { what: "instance document", status: 404 }),
            };
        }
        let body = document.get().unwrap_or(b"");
        let values: [(Item, &mut [u8], &mut ValueState); 5] = [
            (Item::InstanceId, instance_id.buf, &mut instance_id.state),
            (Item::Hostname, hostname.buf, &mut hostname.state),
            (Item::LocalHostname, local_hostname.buf, &mut local_hostname.state),
            (Item::UserData, user_data.buf, &mut user_data.state),
            (Item::SshKeys, ssh_keys.buf, &mut ssh_keys.state),
        ];
        for (item, buf, state) in values {
            if !wanted.contains(&item) {
                continue;
            }
            if let (Some(path), Item::UserData) = (self.user_data_path(), item) {
                // Served as a file of its own (404: none).
                let mut fetched = ValueState::NotFetched;
                self.get_all(&mut [Target { what: "@userdata", path, buf: &mut *buf, state: &mut fetched }])?;
                #[cfg(feature = "incus")]
                if self.cloud == Cloud::Incus && fetched == ValueState::Absent {
                    let legacy = Target { what: "@userdata", path: incus::LEGACY_USER_DATA_PATH, buf, state: &mut fetched };
                    self.get_all(&mut [legacy])?;
                }
                *state = fetched;
                continue;
            }
            let found = match self.cloud {
                #[cfg(feature = "azure")]
                Cloud::Azure => azure::extract(body, item, buf),
                #[cfg(feature = "configdrive")]
                Cloud::Openstack => openstack::extract(body, item, buf),
                #[cfg(feature = "hetzner")]
                Cloud::Hetzner => hetzner::extract(body, item, buf),
                #[cfg(feature = "digitalocean")]
                Cloud::Digitalocean => digitalocean::extract(body, item, buf),
                #[cfg(feature = "scaleway")]
                Cloud::Scaleway => scaleway::extract(body, item, buf),
                #[cfg(feature = "incus")]
                Cloud::Incus => incus::extract(body, item, buf),
                #[cfg(feature = "vultr")]
                Cloud::Vultr => vultr::extract(body, item, buf),
                _ => oci::extract(body, item, buf),
            };
            let found = found.map_err(|error| ImdsError::Document { what: item.key(), error })?;
            *state = found.map_or(ValueState::Absent, |len| ValueState::Present { start: 0, len });
        }
        Ok(())
    }

    /// Where the clouds that serve user-data beside their document serve it.
    fn user_data_path(&self) -> Option<&'static str> {
        match self.cloud {
            #[cfg(feature = "configdrive")]
            Cloud::Openstack => Some(openstack::USER_DATA_PATH),
            #[cfg(feature = "hetzner")]
            Cloud::Hetzner => Some(hetzner::USER_DATA_PATH),
            #[cfg(feature = "scaleway")]
            Cloud::Scaleway => Some(scaleway::USER_DATA_PATH),
            #[cfg(feature = "incus")]
            Cloud::Incus => Some(incus::USER_DATA_PATH),
            _ => None,
        }
    }

    /// Where a round's requests go, and the Host they name: the metadata address, but
    /// Scaleway's own (from a privileged port for its user-data) and Incus's socket.
    fn endpoint(&self, targets: &[Target<'_, '_>]) -> (Endpoint<'_>, &'static str) {
        let _ = targets;
        match self.cloud {
            #[cfg(feature = "scaleway")]
            Cloud::Scaleway => {
                let privileged = targets.iter().any(|target| target.path == scaleway::USER_DATA_PATH);
                (Endpoint::Tcp { address: scaleway::ADDRESS, port: 80, privileged }, scaleway::HOST)
            }
            #[cfg(feature = "incus")]
            Cloud::Incus => (Endpoint::Unix(self.socket.as_ref().map_or(c"/dev/incus/sock", CPath::as_cstr)), incus::HOST),
            _ => (Endpoint::Tcp { address: IMDS_ADDRESS, port: 80, privileged: false }, IMDS_HOST),
        }
    }

    /// GCP: every value in one round; the keys from the instance, its legacy attribute
    /// and the project (unless blocked), expired ones dropped; user-data decoded when its
    /// encoding says base64.
    #[cfg(feature = "gcp")]
    fn fetch_gcp(&mut self, metadata: &mut Metadata, wanted: &[Item]) -> Result<(), ImdsError> {
        let ([instance_id, hostname, local_hostname, ssh_keys, user_data], document) = metadata.parts();
        let mut encoding = [0u8; 256];
        let mut encoding_state = ValueState::NotFetched;
        let mut block = [0u8; 256];
        let mut block_state = ValueState::NotFetched;
        let mut key_states = [ValueState::NotFetched; 3];
        let mut targets: heapless::Vec<Target<'_, '_>, 10> = heapless::Vec::new();
        let values: [(Item, &mut [u8], &mut ValueState); 4] = [
            (Item::InstanceId, instance_id.buf, &mut instance_id.state),
            (Item::Hostname, hostname.buf, &mut hostname.state),
            (Item::LocalHostname, local_hostname.buf, &mut local_hostname.state),
            (Item::UserData, user_data.buf, &mut user_data.state),
        ];
        for (item, buf, state) in values {
            if let (true, Some(path)) = (wanted.contains(&item), gcp::path(item)) {
                let _ = targets.push(Target { what: item.key(), path, buf, state });
            }
        }
        if wanted.contains(&Item::UserData) {
            let _ = targets.push(Target { what: "@userdata", path: gcp::USER_DATA_ENCODING, buf: &mut encoding, state: &mut encoding_state });
        }
        let want_keys = wanted.contains(&Item::SshKeys);
        if want_keys {
            let sources = [gcp::INSTANCE_KEYS, gcp::LEGACY_KEYS, gcp::PROJECT_KEYS];
            let third = ssh_keys.buf.len() / 3;
            for ((path, buf), state) in sources.into_iter().zip(ssh_keys.buf.chunks_mut(third)).zip(key_states.iter_mut()) {
                let _ = targets.push(Target { what: "@ssh-keys", path, buf, state });
            }
            let _ = targets.push(Target { what: "@ssh-keys", path: gcp::BLOCK_PROJECT_KEYS, buf: &mut block, state: &mut block_state });
        }
        let round = self.get_all(&mut targets);
        drop(targets);
        if let (ValueState::Present { start, len }, ValueState::Present { start: at, len: n }) = (user_data.state, encoding_state) {
            if encoding[at..at + n].trim_ascii() == b"base64" {
                let decoded = provider::decode_base64_in_place(&mut user_data.buf[start..], len)
                    .map_err(|error| ImdsError::Document { what: "@userdata", error })?;
                user_data.state = ValueState::Present { start, len: decoded };
            }
        }
        if want_keys && key_states.iter().all(|state| *state != ValueState::NotFetched) {
            let blocked = matches!(block_state, ValueState::Present { start, len } if gcp::blocks_project_keys(&block[start..start + len]));
            let now = wisp_os_linux::time::realtime_secs();
            let third = ssh_keys.buf.len() / 3;
            let mut out = Out::new(document.buf);
            for (i, state) in key_states.iter().enumerate() {
                if let (ValueState::Present { start, len }, false) = (*state, blocked && i == 2) {
                    let value = &ssh_keys.buf[i * third + start..i * third + start + len];
                    gcp::append_keys(value, now, &mut out).map_err(|full| ImdsError::ValueTooLarge { what: "@ssh-keys", limit: full.limit })?;
                }
            }
            let len = out.len();
            let limit = ssh_keys.buf.len();
            let joined = ssh_keys.buf.get_mut(..len).ok_or(ImdsError::ValueTooLarge { what: "@ssh-keys", limit })?;
            joined.copy_from_slice(&document.buf[..len]);
            ssh_keys.set(Some(len));
        }
        round
    }

    #[cfg(feature = "aws")]
    fn fetch_aws(&mut self, metadata: &mut Metadata, wanted: &[Item]) -> Result<(), ImdsError> {
        // Round one: the values named by a path, and the key listing.
        let mut listing = [0u8; SMALL_RESPONSE];
        let mut listing_state = ValueState::NotFetched;
        let ([instance_id, hostname, local_hostname, ssh_keys, user_data], _) = metadata.parts();
        let values: [(Item, &mut [u8], &mut ValueState); 4] = [
            (Item::InstanceId, instance_id.buf, &mut instance_id.state),
            (Item::Hostname, hostname.buf, &mut hostname.state),
            (Item::LocalHostname, local_hostname.buf, &mut local_hostname.state),
            (Item::UserData, user_data.buf, &mut user_data.state),
        ];
        let mut targets: heapless::Vec<Target<'_, '_>, 5> = heapless::Vec::new();
        for (item, buf, state) in values {
            if let (true, Some(path)) = (wanted.contains(&item), aws::path(item)) {
                let _ = targets.push(Target { what: item.key(), path, buf, state });
            }
        }
        let want_keys = wanted.contains(&Item::SshKeys);
        if want_keys {
            let _ = targets.push(Target { what: "public-keys", path: aws::KEYS_PATH, buf: &mut listing, state: &mut listing_state });
        }
        // Every target of the round is filled in before the first failure is reported,
        // so that one bad value does not hide the others.
        let round = self.get_all(&mut targets);
        drop(targets);
        if want_keys && matches!(listing_state, ValueState::Present { .. } | ValueState::Absent) {
            self.fetch_keys(&listing, listing_state, ssh_keys)?;
        }
        round
    }

    /// Round two: each key of the listing, at once, joined one per line.
    #[cfg(feature = "aws")]
    fn fetch_keys(
        &mut self,
        listing: &[u8],
        listing_state: ValueState,
        keys: &mut Value,
    ) -> Result<(), ImdsError> {
        let ValueState::Present { start, len } = listing_state else {
            keys.state = ValueState::Absent;
            return Ok(());
        };
        let indices = aws::parse_key_listing(&listing[start..start + len]).map_err(ImdsError::KeyListing)?;
        let paths: heapless::Vec<heapless::String<64>, { aws::KEYS_LIMIT }> =
            indices.iter().map(|&index| aws::key_path(index)).collect();
        let mut states = [ValueState::NotFetched; aws::KEYS_LIMIT];
        let round;
        {
            let mut targets: heapless::Vec<Target<'_, '_>, { aws::KEYS_LIMIT }> = heapless::Vec::new();
            for ((path, buf), state) in paths.iter().zip(keys.buf.chunks_mut(KEY_RESPONSE)).zip(states.iter_mut()) {
                let _ = targets.push(Target { what: "openssh-key", path, buf, state });
            }
            // The keys that arrived are kept when one did not: the owner gets in with
            // those, and the failure still fails set_ssh_keys so the next boot retries.
            round = self.get_all(&mut targets);
        }
        // Join the bodies in place, in listing order, one key per line. Each body starts
        // after its response head, so the joined text never overtakes a body not yet moved.
        let mut joined = 0;
        for (i, state) in states[..indices.len()].iter().enumerate() {
            if let ValueState::Present { start, len } = *state {
                let from = i * KEY_RESPONSE + start;
                let key_len = keys.buf[from..from + len].trim_ascii_end().len();
                keys.buf.copy_within(from..from + key_len, joined);
                joined += key_len;
                keys.buf[joined] = b'\n';
                joined += 1;
            }
        }
        keys.state = ValueState::Present { start: 0, len: joined };
        round
    }

    /// GETs `path` into `buf`: the body, or `None` for 404.
    pub fn get_path<'b>(&mut self, path: &str, buf: &'b mut [u8]) -> Result<Option<&'b [u8]>, ImdsError> {
        let mut state = ValueState::NotFetched;
        self.get_all(&mut [Target { what: "path", path, buf: &mut *buf, state: &mut state }])?;
        Ok(match state {
            ValueState::Present { start, len } => Some(&buf[start..start + len]),
            _ => None,
        })
    }

    /// GETs every target at once, each into its own buffer; a 401 (the token expired)
    /// fetches a new token and repeats the round once.
    fn get_all(&mut self, targets: &mut [Target<'_, '_>]) -> Result<(), ImdsError> {
        for attempt in 0..2 {
            #[cfg(feature = "aws")]
            if self.cloud == Cloud::Aws && (self.token.is_empty() || attempt == 1) {
                self.fetch_token()?;
            }
            let mut requests = [[0u8; REQUEST_LIMIT]; PARALLEL_LIMIT];
            let mut lengths = [0usize; PARALLEL_LIMIT];
            let token = core::str::from_utf8(&self.token).unwrap_or("");
            let headers: &[(&str, &str)] = match self.cloud {
                #[cfg(feature = "aws")]
                Cloud::Aws => &[(aws::TOKEN_HEADER, token)],
                #[cfg(feature = "gcp")]
                Cloud::Gcp => &[gcp::FLAVOR],
                #[cfg(feature = "azure")]
                Cloud::Azure => &[azure::METADATA],
                #[cfg(feature = "oci")]
                Cloud::Oci => &[oci::AUTHORIZATION],
                #[cfg(feature = "vultr")]
                Cloud::Vultr => &[vultr::TOKEN],
                _ => &[],
            };
            let (endpoint, host) = self.endpoint(targets);
            for (target, (request, length)) in targets.iter().zip(requests.iter_mut().zip(lengths.iter_mut())) {
                // OCI's version 1 is the path that goes without the header.
                let headers = if target.path == oci::V1_PATH { &[] } else { headers };
                let get = Request { method: Method::Get, host, path: target.path, headers, body: b"" };
                *length = http::write_request(&get, request).map_err(ImdsError::Request)?;
            }
            let mut exchanges: heapless::Vec<Exchange<'_>, PARALLEL_LIMIT> = heapless::Vec::new();
            for (target, (request, &length)) in targets.iter_mut().zip(requests.iter().zip(lengths.iter())) {
                let _ = exchanges.push(Exchange::new(&request[..length], &mut *target.buf));
            }
            exchange_all_at(&mut exchanges, endpoint, self.timeouts);
            self.requests += exchanges.len() as u32;
            let results: heapless::Vec<_, PARALLEL_LIMIT> = exchanges.iter().map(|e| e.result()).collect();
            drop(exchanges);
            let mut expired = false;
            let mut first_error = None;
            for (target, result) in targets.iter_mut().zip(results) {
                let what = target.what;
                *target.state = match result {
                    Ok((200, body)) => ValueState::Present { start: body.start, len: body.len() },
                    Ok((404, _)) => ValueState::Absent,
                    Ok((401, _)) if attempt == 0 && self.cloud == Cloud::Aws => {
                        expired = true;
                        ValueState::NotFetched
                    }
                    Ok((status, _)) => {
                        first_error = first_error.or(Some(ImdsError::Refused { what, status }));
                        ValueState::NotFetched
                    }
                    Err(failure) => {
                        first_error = first_error.or(Some(ImdsError::Fetch { what, failure }));
                        ValueState::NotFetched
                    }
                };
            }
            if let Some(error) = first_error {
                return Err(error);
            }
            if !expired {
                break;
            }
        }
        Ok(())
    }

    /// IMDSv2's session token: one PUT, reused for every later request of this run.
    #[cfg(feature = "aws")]
    fn fetch_token(&mut self) -> Result<(), ImdsError> {
        let mut ttl = heapless::String::<10>::new();
        let _ = core::fmt::write(&mut ttl, format_args!("{}", self.token_ttl));
        let headers = [(aws::TOKEN_TTL_HEADER, ttl.as_str())];
        let put = Request { method: Method::Put, host: IMDS_HOST, path: aws::TOKEN_PATH, headers: &headers, body: b"" };
        let mut request = [0u8; REQUEST_LIMIT];
        let length = http::write_request(&put, &mut request).map_err(ImdsError::Request)?;
        let mut response = [0u8; SMALL_RESPONSE];
        let mut exchanges = [Exchange::new(&request[..length], &mut response)];
        exchange_all(&mut exchanges, IMDS_ADDRESS, 80, self.timeouts);
        self.requests += 1;
        let what = "token";
        let (status, body) = exchanges[0].reply().map_err(|failure| ImdsError::Fetch { what, failure })?;
        if status != 200 {
            return Err(ImdsError::Refused { what, status });
        }
        let token = body.trim_ascii_end();
        self.token.clear();
        self.token.extend_from_slice(token).map_err(|_| ImdsError::TokenTooLong { limit: TOKEN_LIMIT })?;
        Ok(())
    }
}

