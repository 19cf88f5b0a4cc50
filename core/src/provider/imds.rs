//! A conversation with a metadata service: each cloud's rounds (`Service::rounds`, in the
//! cloud's own module) ask for several values at once through `Imds::round`, which
//! writes the requests, carries the cloud's headers and session token, and says what
//! each answer means: 200 a value, 404 none, a 401 to a token a new token and the round
//! once more, any other status a refusal.

use core::fmt;

use super::metadata::{Metadata, Slot, TooLarge, ValueState};
use super::document_service::Document;
use super::key_listing::KeyListingError;
use super::{DocumentFailure, Item, IMDS_ADDRESS, IMDS_HOST};
use crate::config::Cloud;
use crate::host::clock::Clock;
use crate::host::http::{Endpoint, ErrnoWords, Exchange, Explain, Failure, Http, PARALLEL_LIMIT};
use crate::http::{self, Method, Request};
use crate::retry::Timeouts;
use crate::text::{Decimal, Plain};

/// Longest session token wisp keeps (AWS's are 56 bytes).
pub const TOKEN_LIMIT: usize = 256;
/// Longest request wisp writes to a metadata service.
pub const REQUEST_LIMIT: usize = 512;

/// What the rounds ask of the system: the network, and the clock keys expire by.
pub trait Host: Http + Clock {}
impl<T: Http + Clock> Host for T {}

/// Fetches the `wanted` items (none of them fetched yet) into the store.
pub type Rounds = fn(&mut Imds<'_>, &mut dyn Host, &mut Metadata<'_>, &[Item]) -> Result<(), ImdsError>;

/// How a cloud's metadata service is spoken to.
pub struct Service {
    pub endpoint: Endpoint,
    /// The `Host` header.
    pub host: &'static str,
    /// Sent with every request (but to the document's fallback).
    pub headers: &'static [(&'static str, &'static str)],
    /// IMDSv2: every request carries a session token, fetched first.
    pub session_token: Option<&'static SessionToken>,
    /// The clouds that answer with one document: where it is.
    pub document: Option<&'static Document>,
    /// `None`: wisp has no metadata service for this cloud (its paths can still be read).
    pub rounds: Option<Rounds>,
}

/// A service's session token (IMDSv2): the header that carries it, and how a new one
/// is fetched. The cloud's module names both, as it names its rounds.
pub struct SessionToken {
    pub header: &'static str,
    pub fetch: FetchToken,
}

/// Fetches a new session token into `Imds::token`; it may choose the service again.
pub type FetchToken = fn(&mut Imds<'_>, &mut dyn Http) -> Result<(), ImdsError>;

impl Service {
    /// The metadata address and nothing else: for the clouds with no service of their own.
    pub const PLAIN: Service = Service {
        endpoint: Endpoint::Tcp { address: IMDS_ADDRESS, port: 80, privileged: false },
        host: IMDS_HOST,
        headers: &[],
        session_token: None,
        document: None,
        rounds: None,
    };
}

/// What a request fetches, as messages name it: one byte, where a name would be sixteen
/// carried through every error of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Item(Item),
    /// IMDSv2's session token.
    Token,
    /// AWS's `public-keys/` listing.
    KeyListing,
    /// One key of AWS's listing.
    Key,
    /// The one document of the document clouds.
    Document,
    /// A path asked by `wisp imds`.
    Path,
}

impl What {
    pub fn name(self) -> &'static str {
        match self {
            What::Item(item) => item.key(),
            What::Token => "token",
            What::KeyListing => "public-keys",
            What::Key => "openssh-key",
            What::Document => "instance document",
            What::Path => "path",
        }
    }

    /// The item a request was part of.
    const fn item(self) -> Option<Item> {
        match self {
            What::Item(item) => Some(item),
            What::KeyListing | What::Key => Some(Item::SshKeys),
            What::Token | What::Document | What::Path => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImdsError {
    Fetch { what: What, failure: Failure },
    /// A status that means the service refuses us, such as 403 when IMDS is disabled.
    Refused { what: What, status: u16 },
    Request(http::Error),
    /// The token is longer than `TOKEN_LIMIT`.
    TokenTooLong,
    KeyListing(KeyListingError),
    /// The document, or a value in it, is not what the cloud documents.
    Document { item: Item, error: DocumentFailure },
    ValueTooLarge { item: Item, limit: u32 },
    /// This wisp has no metadata service for the cloud.
    NoService { cloud: Cloud },
}

/// `TokenTooLong`'s message: a literal, not the limit formatted at each error; the
/// assertion keeps it saying `TOKEN_LIMIT`.
const TOKEN_TOO_LONG: &str = "metadata token longer than 256 bytes";
const _: () = assert!(TOKEN_LIMIT == 256);

impl ImdsError {
    /// The item whose fetch failed, when it was one item's.
    pub fn item(&self) -> Option<Item> {
        match *self {
            ImdsError::Fetch { what, .. } | ImdsError::Refused { what, .. } => what.item(),
            ImdsError::KeyListing(_) => Some(Item::SshKeys),
            ImdsError::Document { item, .. } | ImdsError::ValueTooLarge { item, .. } => Some(item),
            _ => None,
        }
    }
}

impl Explain for ImdsError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        // The messages about one value share their start, written once.
        let value = match *self {
            ImdsError::Fetch { what, .. } | ImdsError::Refused { what, .. } => Some(what.name()),
            ImdsError::Document { item, .. } => Some(item.key()),
            _ => None,
        };
        if let Some(value) = value {
            write!(f, "metadata {value}: ", value = Plain(value))?;
        }
        match self {
            ImdsError::Fetch { failure, .. } => failure.explain(f, words),
            ImdsError::Refused { status, .. } => write!(f, "refused with HTTP status {}", Decimal((*status).into())),
            ImdsError::Request(e) => write!(f, "cannot write the metadata request: {e}"),
            ImdsError::TokenTooLong => f.write_str(TOKEN_TOO_LONG),
            ImdsError::KeyListing(e) => {
                f.write_str("metadata ")?;
                fmt::Display::fmt(e, f)
            }
            ImdsError::Document { error, .. } => fmt::Display::fmt(error, f),
            ImdsError::ValueTooLarge { item, limit } => fmt::Display::fmt(&TooLarge { item: *item, limit: *limit }, f),
            ImdsError::NoService { cloud } => write!(f, "CLOUD={cloud} has no metadata service this wisp can read", cloud = Plain(cloud.name())),
        }
    }
}

/// Errnos as numbers; the host's words come through `Worded`.
impl fmt::Display for ImdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.explain(f, |e, f| write!(f, "{e}"))
    }
}

/// The error of an exchange that did not bring what was asked: the refusing status, or
/// why it failed. Made in one place for the rounds and the token.
#[inline(never)]
pub(crate) fn failed(what: What, exchange: &Exchange<'_>) -> ImdsError {
    match exchange.result() {
        Ok((status, _)) => ImdsError::Refused { what, status },
        Err(failure) => ImdsError::Fetch { what, failure },
    }
}

/// One GET of a round: what it is (for messages), where, and where its answer goes.
pub(crate) struct Target<'b, 's> {
    pub what: What,
    pub path: &'s str,
    pub buf: &'b mut [u8],
    pub state: &'b mut ValueState,
}

/// A round's targets. One capacity for every cloud's rounds, so that they share one
/// `push`.
pub(crate) type Targets<'t, 's> = heapless::Vec<Target<'t, 's>, PARALLEL_LIMIT>;

/// Adds a target to a round (the capacity is never reached: no round asks more than
/// `PARALLEL_LIMIT`). Out of line: written out at each of the rounds' sites it costs
/// more.
#[inline(never)]
pub(crate) fn add<'t, 's>(targets: &mut Targets<'t, 's>, what: What, path: &'s str, buf: &'t mut [u8], state: &'t mut ValueState) {
    let _ = targets.push(Target { what, path, buf, state });
}

/// The targets of a round for the `wanted` items the cloud serves at a path of their
/// own, in the order given.
pub(crate) fn item_targets<'t, 's: 't>(
    slots: impl IntoIterator<Item = &'t mut Slot<'s>>,
    wanted: &[Item],
    path: fn(Item) -> Option<&'static str>,
    targets: &mut Targets<'t, 'static>,
) {
    for Slot { item, buf, state } in slots {
        if let (true, Some(path)) = (wanted.contains(item), path(*item)) {
            add(targets, What::Item(*item), path, buf, state);
        }
    }
}

/// A conversation with the metadata service: its settings and its session token.
pub struct Imds<'c> {
    cloud: Cloud,
    pub(crate) service: &'static Service,
    pub(crate) timeouts: &'c Timeouts,
    pub(crate) token_ttl: u32,
    pub(crate) token: heapless::Vec<u8, TOKEN_LIMIT>,
    /// Requests sent so far, for the log.
    pub requests: u32,
}

impl<'c> Imds<'c> {
    pub fn new(cloud: Cloud, service: &'static Service, timeouts: &'c Timeouts, token_ttl: u32) -> Self {
        Imds { cloud, service, timeouts, token_ttl, token: heapless::Vec::new(), requests: 0 }
    }

    pub fn cloud(&self) -> Cloud {
        self.cloud
    }

    pub(crate) fn service(&self) -> &'static Service {
        self.service
    }

    /// Fetches the items not fetched yet, all at once.
    pub fn fetch(&mut self, host: &mut dyn Host, metadata: &mut Metadata<'_>, items: &[Item]) -> Result<(), ImdsError> {
        let mut wanted: heapless::Vec<Item, 5> = heapless::Vec::new();
        for item in Item::ALL {
            if items.contains(&item) && !metadata.is_fetched(item) {
                // Item::ALL has five.
                let _ = wanted.push(item);
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        match self.service.rounds {
            Some(rounds) => rounds(self, host, metadata, &wanted),
            None => Err(ImdsError::NoService { cloud: self.cloud }),
        }
    }

    /// GETs `path` into `buf`: the body, or `None` for 404.
    pub fn get_path<'b>(&mut self, host: &mut dyn Http, path: &str, buf: &'b mut [u8]) -> Result<Option<&'b [u8]>, ImdsError> {
        let state = self.get_one(host, What::Path, path, buf)?;
        Ok(state.range().map(|range| &buf[range]))
    }

    /// One GET into a value of its own: its state afterwards, `Absent` for a 404.
    pub(crate) fn get_one(&mut self, host: &mut dyn Http, what: What, path: &str, buf: &mut [u8]) -> Result<ValueState, ImdsError> {
        let mut state = ValueState::NotFetched;
        self.round(host, &mut [Target { what, path, buf, state: &mut state }])?;
        Ok(state)
    }

    /// GETs every target at once, each into its own buffer. Every target of the round is
    /// filled in before the first failure is reported, so that one bad value does not
    /// hide the others. A 401 (the session token expired) fetches a new token and
    /// repeats the round once.
    pub(crate) fn round(&mut self, host: &mut dyn Http, targets: &mut [Target<'_, '_>]) -> Result<(), ImdsError> {
        for attempt in 0..2 {
            if let Some(session_token) = self.service.session_token {
                if self.token.is_empty() || attempt == 1 {
                    (session_token.fetch)(self, host)?;
                }
            }
            // After the token: it may have moved the service to another address.
            let service = self.service;
            let mut requests = [[0u8; REQUEST_LIMIT]; PARALLEL_LIMIT];
            let token = core::str::from_utf8(&self.token).unwrap_or("");
            let token_header;
            let headers: &[(&str, &str)] = match service.session_token {
                Some(session_token) => {
                    token_header = [(session_token.header, token)];
                    &token_header
                }
                None => service.headers,
            };
            let (mut bare_path, mut endpoint) = (None, service.endpoint);
            if let Some(document) = service.document {
                bare_path = document.fallback;
                if let (Endpoint::Tcp { privileged, .. }, true) = (&mut endpoint, document.privileged_user_data) {
                    *privileged = targets.iter().any(|target| Some(target.path) == document.user_data);
                }
            }
            // Each target's request, its buffer to the exchange, its state kept for the answer.
            let mut exchanges: heapless::Vec<Exchange<'_>, PARALLEL_LIMIT> = heapless::Vec::new();
            let mut states: heapless::Vec<(What, &mut ValueState), PARALLEL_LIMIT> = heapless::Vec::new();
            for (Target { what, path, buf, state }, request) in targets.iter_mut().zip(requests.iter_mut()) {
                let headers = if Some(*path) == bare_path { &[] } else { headers };
                let get = Request { method: Method::Get, host: service.host, path, headers, body: b"" };
                let length = http::write_request(&get, request).map_err(ImdsError::Request)?;
                let _ = exchanges.push(Exchange::new(&request[..length], buf));
                let _ = states.push((*what, state));
            }
            host.exchange_all(endpoint, &mut exchanges, self.timeouts);
            self.requests += exchanges.len() as u32;
            let mut expired = false;
            // The first failure's place, its error made once after the loop: an error
            // carried through the loop would be copied at each exchange.
            let mut first_failed = None;
            for (index, (exchange, (_, state))) in exchanges.iter().zip(states.iter_mut()).enumerate() {
                **state = match exchange.result() {
                    Ok((200, body)) => ValueState::Present { start: body.start, len: body.len() },
                    Ok((404, _)) => ValueState::Absent,
                    Ok((401, _)) if attempt == 0 && service.session_token.is_some() => {
                        expired = true;
                        ValueState::NotFetched
                    }
                    Ok(_) | Err(_) => {
                        first_failed = first_failed.or(Some(index));
                        ValueState::NotFetched
                    }
                };
            }
            if let Some(index) = first_failed {
                return Err(failed(states[index].0, &exchanges[index]));
            }
            if !expired {
                break;
            }
        }
        Ok(())
    }
}

/// One GET of `host` `path` at `address:port` (a user-data include, a seed's URL), the
/// body moved to the start of `out`: its length, `None` for a 404.
pub fn get(http: &mut dyn Http, address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, GetError> {
    let get = Request { method: Method::Get, host, path, headers: &[], body: b"" };
    let mut request = [0u8; 1024];
    let len = http::write_request(&get, &mut request).map_err(GetError::Request)?;
    let mut exchanges = [Exchange::new(&request[..len], out)];
    http.exchange_all(Endpoint::Tcp { address, port, privileged: false }, &mut exchanges, timeouts);
    match exchanges[0].result() {
        Ok((200, body)) => {
            let len = body.len();
            out.copy_within(body, 0);
            Ok(Some(len))
        }
        Ok((404, _)) => Ok(None),
        Ok((status, _)) => Err(GetError::Status(status)),
        Err(failure) => Err(GetError::Fetch(failure)),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetError {
    Request(http::Error),
    Fetch(Failure),
    Status(u16),
}

impl Explain for GetError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        match self {
            GetError::Request(e) => fmt::Display::fmt(e, f),
            GetError::Fetch(failure) => failure.explain(f, words),
            GetError::Status(status) => write!(f, "HTTP status {}", Decimal((*status).into())),
        }
    }
}

/// A fetch of `items` with a fresh store against a canned network: the result and each
/// item's value, in `Item::ALL`'s order.
#[cfg(test)]
pub(crate) fn fetch_from(
    cloud: Cloud,
    service: &'static Service,
    network: &mut crate::host::memory::MemoryNetwork,
    items: &[Item],
) -> (Result<(), ImdsError>, std::vec::Vec<Option<std::vec::Vec<u8>>>) {
    let timeouts = Timeouts::default();
    let mut space = std::vec![0u8; super::metadata::METADATA_SIZE];
    let mut metadata = Metadata::new(&mut space);
    let mut imds = Imds::new(cloud, service, &timeouts, 300);
    let result = imds.fetch(network, &mut metadata, items);
    assert_eq!(imds.requests as usize, network.seen().len());
    (result, Item::ALL.iter().map(|&item| metadata.get(item).map(<[u8]>::to_vec)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::http::Cause;
    use crate::host::memory::MemoryNetwork;
    use crate::host::HostError;

    #[test]
    fn a_cloud_without_a_service_says_so_and_sends_nothing() {
        let mut network = MemoryNetwork::new();
        let (result, _) = fetch_from(Cloud::Nocloud, &Service::PLAIN, &mut network, &[Item::InstanceId]);
        assert_eq!(result, Err(ImdsError::NoService { cloud: Cloud::Nocloud }));
        assert_eq!(result.unwrap_err().to_string(), "CLOUD=nocloud has no metadata service this wisp can read");
        assert!(network.rounds.is_empty());
    }

    #[test]
    fn a_path_is_read_as_served_and_a_404_is_none() {
        let timeouts = Timeouts::default();
        let mut imds = Imds::new(Cloud::Nocloud, &Service::PLAIN, &timeouts, 300);
        let mut network = MemoryNetwork::new().serve("GET /latest/meta-data/placement/region", 200, b"eu-west-1");
        let mut buf = [0u8; 256];
        assert_eq!(imds.get_path(&mut network, "/latest/meta-data/placement/region", &mut buf), Ok(Some(&b"eu-west-1"[..])));
        assert_eq!(imds.get_path(&mut network, "/nothing", &mut buf), Ok(None));
        assert_eq!(network.seen()[0].headers, std::vec::Vec::<std::string::String>::new());
    }

    #[test]
    fn a_transport_failure_names_what_failed_with_the_hosts_words() {
        let timeouts = Timeouts::default();
        let mut imds = Imds::new(Cloud::Nocloud, &Service::PLAIN, &timeouts, 300);
        let mut network = MemoryNetwork::new().fail("GET /x", Cause::Connect(HostError { errno: 111 }));
        let error = imds.get_path(&mut network, "/x", &mut [0u8; 256]).unwrap_err();
        let words: ErrnoWords = |e, f| if e.errno == 111 { f.write_str("connection refused") } else { write!(f, "{e}") };
        assert_eq!(
            std::format!("{}", crate::host::explain::Worded(&error, words)),
            "metadata path: cannot connect: connection refused; gave up after 3 attempts in the 30000 ms deadline (WISP_HTTP_TOTAL_MS)"
        );
    }

    /// The token of a cloud other than AWS: it comes from the service's own fetch and
    /// goes in the service's own header, so the mechanism holds nothing of AWS's.
    static OTHER_TOKEN: SessionToken = SessionToken { header: "X-Other-Token", fetch: other_token };
    static OTHER_SERVICE: Service = Service { session_token: Some(&OTHER_TOKEN), ..Service::PLAIN };

    fn other_token(imds: &mut Imds<'_>, _: &mut dyn Http) -> Result<(), ImdsError> {
        imds.requests += 1;
        imds.token.clear();
        imds.token.extend_from_slice(if imds.requests == 1 { b"first" } else { b"second" }).map_err(|_| ImdsError::TokenTooLong)
    }

    #[test]
    fn a_session_token_is_the_services_own_and_a_401_fetches_it_again() {
        let timeouts = Timeouts::default();
        let mut imds = Imds::new(Cloud::Nocloud, &OTHER_SERVICE, &timeouts, 300);
        let mut network = MemoryNetwork::new().serve("GET /x", 401, b"").serve("GET /x", 200, b"value");
        let mut buf = [0u8; 256];
        assert_eq!(imds.get_path(&mut network, "/x", &mut buf), Ok(Some(&b"value"[..])));
        let headers: std::vec::Vec<_> = network.seen().iter().map(|request| request.headers.clone()).collect();
        assert_eq!(headers, [["X-Other-Token: first"], ["X-Other-Token: second"]]);
    }

    #[test]
    fn a_status_other_than_200_404_or_401_is_a_refusal() {
        let timeouts = Timeouts::default();
        let mut imds = Imds::new(Cloud::Nocloud, &Service::PLAIN, &timeouts, 300);
        let mut network = MemoryNetwork::new().serve("GET /x", 403, b"forbidden");
        let error = imds.get_path(&mut network, "/x", &mut [0u8; 256]).unwrap_err();
        assert_eq!(error, ImdsError::Refused { what: What::Path, status: 403 });
        assert_eq!(error.to_string(), "metadata path: refused with HTTP status 403");
        // 401 is a refusal too where the service has no session token.
        let mut network = MemoryNetwork::new().serve("GET /x", 401, b"");
        assert_eq!(imds.get_path(&mut network, "/x", &mut [0u8; 256]), Err(ImdsError::Refused { what: What::Path, status: 401 }));
        assert_eq!(network.rounds.len(), 1);
    }

    #[test]
    fn an_error_about_one_value_names_it_first() {
        use crate::provider::{DocumentError, DocumentFailure};
        let message = |error: ImdsError| error.to_string();
        assert_eq!(message(ImdsError::Refused { what: What::Item(Item::InstanceId), status: 403 }), "metadata @instance-id: refused with HTTP status 403");
        assert_eq!(message(ImdsError::KeyListing(KeyListingError::BadLine { line: 3 })), "metadata public-keys listing: line 3 is not <index>=<name>");
        assert_eq!(message(ImdsError::TokenTooLong), "metadata token longer than 256 bytes");
        assert_eq!(message(ImdsError::Request(http::Error::InvalidRequest { field: http::RequestField::Path })), "cannot write the metadata request: invalid characters in the request's path");
        let error = DocumentFailure::from(DocumentError::Base64(crate::base64::Error::Truncated));
        assert_eq!(message(ImdsError::Document { item: Item::UserData, error }), std::format!("metadata @userdata: {error}"));
        assert!(message(ImdsError::Document { item: Item::UserData, error }).starts_with("metadata @userdata: user-data: "));
    }
}
