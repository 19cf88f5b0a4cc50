//! Amazon EC2's instance metadata service, version 2: a session token from a PUT, then
//! GETs that carry it. Round one asks for every value and the key listing at once, round
//! two for each key the listing names. The service is at 169.254.169.254 while the
//! instance has a route there, else at `[fd00:ec2::254]` (an IPv6-only subnet).

use super::imds::{add, failed, item_targets, Host, Imds, ImdsError, Service, SessionToken, Targets, What};
use super::key_listing::parse_key_listing;
use super::metadata::{Metadata, Slot, ValueState, KEY_RESPONSE, SMALL_RESPONSE};
use super::Item;
use crate::host::http::{Endpoint, Exchange, Http, Ipv6Service};
use crate::http::{self, Method, Request};

pub const SERVICE: Service = Service {
    session_token: Some(&SessionToken { header: TOKEN_HEADER, fetch: fetch_token }),
    rounds: Some(rounds),
    ..Service::PLAIN
};

/// The same service at its IPv6 address, which Nitro instances serve when the instance's
/// IPv6 metadata endpoint is enabled.
pub const IPV6_SERVICE: Service = Service {
    endpoint: Endpoint::Tcp6 { address: Ipv6Service::AwsMetadata, port: 80 },
    host: "[fd00:ec2::254]",
    ..SERVICE
};

/// IPv4's service while the system has a route to it, else the IPv6 address: an instance
/// with no IPv4 route is on an IPv6-only subnet (and with no IPv6 route either, the
/// failure says "network unreachable" as it would have). cloud-init asks both addresses
/// and keeps the first to answer; a route lookup decides the same without a request that
/// cannot arrive.
pub fn reachable_service(host: &mut dyn Http) -> &'static Service {
    match host.has_route(SERVICE.endpoint) {
        true => &SERVICE,
        false => &IPV6_SERVICE,
    }
}

pub const TOKEN_PATH: &str = "/latest/api/token";
pub const TOKEN_TTL_HEADER: &str = "X-aws-ec2-metadata-token-ttl-seconds";
pub const TOKEN_HEADER: &str = "X-aws-ec2-metadata-token";
pub const KEYS_PATH: &str = "/latest/meta-data/public-keys/";

pub use super::metadata::KEYS_LIMIT;

/// The path of an item served as one document. `SshKeys` is a listing followed by one
/// request per key (`key_path`), so it has no single path.
pub const fn path(item: Item) -> Option<&'static str> {
    match item {
        Item::InstanceId => Some("/latest/meta-data/instance-id"),
        Item::Hostname => Some("/latest/meta-data/hostname"),
        Item::LocalHostname => Some("/latest/meta-data/local-hostname"),
        Item::UserData => Some("/latest/user-data"),
        Item::SshKeys => None,
    }
}

/// `/latest/meta-data/public-keys/<index>/openssh-key`.
pub fn key_path(index: u16) -> heapless::String<64> {
    let mut path = heapless::String::new();
    // Cannot fail: the longest result is 52 bytes.
    let _ = path.push_str(KEYS_PATH);
    let _ = path.push_str(decimal(index.into(), &mut [0; 20]));
    let _ = path.push_str("/openssh-key");
    path
}

/// `n` in decimal, in `buf`: the digits `text::Decimal` writes, without the formatting
/// machinery.
fn decimal(n: u32, buf: &mut [u8; 20]) -> &str {
    core::str::from_utf8(crate::text::decimal_digits(n.into(), buf)).unwrap_or("")
}

/// Round one: the values named by a path, and the key listing; round two the keys.
fn rounds(imds: &mut Imds<'_>, host: &mut dyn Host, metadata: &mut Metadata<'_>, wanted: &[Item]) -> Result<(), ImdsError> {
    let mut listing = [0u8; SMALL_RESPONSE];
    let mut listing_state = ValueState::NotFetched;
    let ([mut instance_id, mut hostname, mut local_hostname, keys, mut user_data], _) = metadata.slots();
    let mut targets = Targets::new();
    item_targets([&mut instance_id, &mut hostname, &mut local_hostname, &mut user_data], wanted, path, &mut targets);
    let want_keys = wanted.contains(&Item::SshKeys);
    if want_keys {
        add(&mut targets, What::KeyListing, KEYS_PATH, &mut listing, &mut listing_state);
    }
    let round = imds.round(host, &mut targets);
    drop(targets);
    if want_keys {
        match listing_state {
            ValueState::Present { start, len } => fetch_keys(imds, host, &listing[start..start + len], keys)?,
            ValueState::Absent => *keys.state = ValueState::Absent,
            ValueState::NotFetched => {}
        }
    }
    round
}

/// Round two: each key of the listing, at once, joined one per line.
fn fetch_keys(imds: &mut Imds<'_>, host: &mut dyn Http, listing: &[u8], keys: Slot<'_>) -> Result<(), ImdsError> {
    let indices = parse_key_listing(listing).map_err(ImdsError::KeyListing)?;
    let mut paths: heapless::Vec<heapless::String<64>, KEYS_LIMIT> = heapless::Vec::new();
    for &index in &indices {
        // As many as the indices, which the listing holds to KEYS_LIMIT.
        let _ = paths.push(key_path(index));
    }
    let mut states = [ValueState::NotFetched; KEYS_LIMIT];
    let round;
    {
        let mut targets = Targets::new();
        for ((path, buf), state) in paths.iter().zip(keys.buf.chunks_mut(KEY_RESPONSE)).zip(states.iter_mut()) {
            add(&mut targets, What::Key, path, buf, state);
        }
        // The keys that arrived are kept when one did not: the owner gets in with
        // those, and the failure still fails set_ssh_keys so the next boot retries.
        round = imds.round(host, &mut targets);
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
    *keys.state = ValueState::Present { start: 0, len: joined };
    round
}

/// IMDSv2's session token: one PUT, reused for every later request of this run.
/// The service is chosen again with each token, so a later token follows the network.
fn fetch_token(imds: &mut Imds<'_>, host: &mut dyn Http) -> Result<(), ImdsError> {
    imds.service = reachable_service(host);
    let mut digits = [0; 20];
    let headers = [(TOKEN_TTL_HEADER, decimal(imds.token_ttl, &mut digits))];
    let put = Request { method: Method::Put, host: imds.service.host, path: TOKEN_PATH, headers: &headers, body: b"" };
    let mut request = [0u8; super::imds::REQUEST_LIMIT];
    let length = http::write_request(&put, &mut request).map_err(ImdsError::Request)?;
    let mut response = [0u8; SMALL_RESPONSE];
    let mut exchanges = [Exchange::new(&request[..length], &mut response)];
    host.exchange_all(imds.service.endpoint, &mut exchanges, imds.timeouts);
    imds.requests += 1;
    let Ok((200, body)) = exchanges[0].result() else { return Err(failed(What::Token, &exchanges[0])) };
    let token = response[body].trim_ascii_end();
    imds.token.clear();
    imds.token.extend_from_slice(token).map_err(|_| ImdsError::TokenTooLong)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(key_path(0).as_str(), "/latest/meta-data/public-keys/0/openssh-key");
        assert_eq!(key_path(9999).as_str(), "/latest/meta-data/public-keys/9999/openssh-key");
        assert_eq!(key_path(10).as_str(), "/latest/meta-data/public-keys/10/openssh-key");
        assert_eq!(decimal(u32::MAX, &mut [0; 20]), "4294967295");
        assert_eq!(decimal(0, &mut [0; 20]), "0");
        assert_eq!(path(Item::UserData), Some("/latest/user-data"));
        assert_eq!(Item::from_key(b"@ssh-keys"), Some(Item::SshKeys));
        assert_eq!(Item::from_key(b"ssh-keys"), None);
    }

    use crate::config::Cloud;
    use crate::host::http::{Cause, Endpoint};
    use crate::host::memory::MemoryNetwork;
    use crate::host::HostError;
    use crate::provider::metadata::{Metadata, METADATA_SIZE};
    use crate::provider::imds::TOKEN_LIMIT;
    use crate::provider::key_listing::KeyListingError;
    use crate::retry::Timeouts;

    const TOKEN_PUT: &str = "PUT /latest/api/token";
    const ID: &str = "GET /latest/meta-data/instance-id";
    const HOSTNAME: &str = "GET /latest/meta-data/hostname";
    const LOCAL: &str = "GET /latest/meta-data/local-hostname";
    const USER_DATA: &str = "GET /latest/user-data";
    const LISTING: &str = "GET /latest/meta-data/public-keys/";
    const KEY0: &str = "GET /latest/meta-data/public-keys/0/openssh-key";
    const KEY1: &str = "GET /latest/meta-data/public-keys/1/openssh-key";

    fn instance() -> MemoryNetwork {
        MemoryNetwork::new()
            .serve(TOKEN_PUT, 200, b"TOKEN-1\n")
            .serve(ID, 200, b"i-0123")
            .serve(HOSTNAME, 200, b"ip-10-0-0-1.ec2.internal")
            .serve(LOCAL, 200, b"ip-10-0-0-1")
            .serve(USER_DATA, 200, b"#!/bin/sh\necho hi\n")
            .serve(LISTING, 200, b"0=alpha\n1=beta")
            .serve(KEY0, 200, b"ssh-ed25519 AAAA alpha\n")
            .serve(KEY1, 200, b"ssh-rsa BBBB beta")
    }

    /// Runs `fetch` of `items` against `network` with a fresh store; the store's values
    /// and the result.
    fn fetch(network: &mut MemoryNetwork, items: &[Item]) -> (Result<(), ImdsError>, Vec<Option<Vec<u8>>>) {
        let timeouts = Timeouts::default();
        let mut space = vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut imds = Imds::new(Cloud::Aws, &SERVICE, &timeouts, 300);
        let result = imds.fetch(network, &mut metadata, items);
        assert_eq!(imds.requests as usize, network.seen().len());
        (result, Item::ALL.iter().map(|&item| metadata.get(item).map(<[u8]>::to_vec)).collect())
    }

    fn lines(rounds: &[&[&str]]) -> Vec<Vec<String>> {
        rounds.iter().map(|round| round.iter().map(|line| line.to_string()).collect()).collect()
    }

    #[test]
    fn a_token_then_every_value_and_the_listing_at_once_then_the_keys() {
        let mut network = instance();
        let (result, values) = fetch(&mut network, &Item::ALL);
        assert_eq!(result, Ok(()));
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT], &[ID, HOSTNAME, LOCAL, USER_DATA, LISTING], &[KEY0, KEY1]]));
        let seen = network.seen();
        assert_eq!(seen[0].headers, ["X-aws-ec2-metadata-token-ttl-seconds: 300", "Content-Length: 0"]);
        for request in &seen[1..] {
            assert_eq!(request.headers, ["X-aws-ec2-metadata-token: TOKEN-1"], "{}", request.line);
            assert_eq!(request.host, "169.254.169.254");
            assert_eq!(request.endpoint, Endpoint::Tcp { address: [169, 254, 169, 254], port: 80, privileged: false });
        }
        assert_eq!(values[0].as_deref(), Some(&b"i-0123"[..]));
        assert_eq!(values[2].as_deref(), Some(&b"ip-10-0-0-1"[..]));
        // The keys one per line, in listing order, whatever their own line ends.
        assert_eq!(values[3].as_deref(), Some(&b"ssh-ed25519 AAAA alpha\nssh-rsa BBBB beta\n"[..]));
        assert_eq!(values[4].as_deref(), Some(&b"#!/bin/sh\necho hi\n"[..]));
    }

    #[test]
    fn only_the_wanted_items_are_asked_and_a_404_is_no_value() {
        let mut network = instance().serve(USER_DATA, 404, b"");
        network.answers.remove(USER_DATA);
        let (result, values) = fetch(&mut network, &[Item::UserData, Item::InstanceId]);
        assert_eq!(result, Ok(()));
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT], &[ID, USER_DATA]]));
        assert_eq!(values[4], None);
    }

    #[test]
    fn an_expired_token_is_fetched_again_and_the_round_repeated_once() {
        let mut network = instance().serve(ID, 401, b"").serve(ID, 200, b"i-0123");
        network.answers.get_mut(ID).unwrap().pop_front();
        network.answers.insert(TOKEN_PUT.into(), [
            crate::host::memory::Answer::Reply(200, b"OLD".to_vec()),
            crate::host::memory::Answer::Reply(200, b"NEW".to_vec()),
        ].into());
        let (result, values) = fetch(&mut network, &[Item::InstanceId, Item::Hostname]);
        assert_eq!(result, Ok(()));
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT], &[ID, HOSTNAME], &[TOKEN_PUT], &[ID, HOSTNAME]]));
        let seen = network.seen();
        assert_eq!(seen[1].headers, ["X-aws-ec2-metadata-token: OLD"]);
        assert_eq!(seen[4].headers, ["X-aws-ec2-metadata-token: NEW"]);
        assert_eq!(values[0].as_deref(), Some(&b"i-0123"[..]));
    }

    #[test]
    fn a_401_after_a_new_token_is_a_refusal() {
        let mut network = instance().serve(ID, 401, b"");
        network.answers.get_mut(ID).unwrap().pop_front();
        let (result, _) = fetch(&mut network, &[Item::InstanceId]);
        assert_eq!(result, Err(ImdsError::Refused { what: What::Item(Item::InstanceId), status: 401 }));
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT], &[ID], &[TOKEN_PUT], &[ID]]));
    }

    #[test]
    fn a_refused_token_ends_the_fetch_before_any_value() {
        let mut network = instance().serve(TOKEN_PUT, 403, b"");
        network.answers.get_mut(TOKEN_PUT).unwrap().pop_front();
        let (result, values) = fetch(&mut network, &Item::ALL);
        let error = result.unwrap_err();
        assert_eq!(error, ImdsError::Refused { what: What::Token, status: 403 });
        assert_eq!(error.item(), None);
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT]]));
        assert!(values.iter().all(Option::is_none));
    }

    #[test]
    fn a_token_too_long_is_an_error_naming_the_limit() {
        let mut network = instance();
        network.answers.insert(TOKEN_PUT.into(), [crate::host::memory::Answer::Reply(200, vec![b'x'; TOKEN_LIMIT + 1])].into());
        assert_eq!(fetch(&mut network, &[Item::InstanceId]).0, Err(ImdsError::TokenTooLong));
    }

    #[test]
    fn no_listing_means_no_keys_and_no_second_round() {
        let mut network = instance();
        network.answers.remove(LISTING);
        let (result, values) = fetch(&mut network, &[Item::SshKeys]);
        assert_eq!(result, Ok(()));
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT], &[LISTING]]));
        assert_eq!(values[3], None);
    }

    #[test]
    fn a_key_that_fails_keeps_the_others_and_names_the_keys() {
        let refused = Cause::Connect(HostError { errno: 111 });
        let mut network = instance().fail(KEY1, refused);
        network.answers.get_mut(KEY1).unwrap().pop_front();
        let (result, values) = fetch(&mut network, &Item::ALL);
        let error = result.unwrap_err();
        assert!(matches!(error, ImdsError::Fetch { what: What::Key, failure } if failure.cause == refused), "{error:?}");
        assert_eq!(error.item(), Some(Item::SshKeys));
        assert_eq!(error.to_string(), "metadata openssh-key: cannot connect: errno 111; gave up after 3 attempts in the 30000 ms deadline (WISP_HTTP_TOTAL_MS)");
        assert_eq!(values[3].as_deref(), Some(&b"ssh-ed25519 AAAA alpha\n"[..]));
        // The round's other values arrived all the same.
        assert_eq!(values[0].as_deref(), Some(&b"i-0123"[..]));
    }

    #[test]
    fn a_bad_listing_is_an_error_of_the_keys() {
        let mut network = instance();
        network.answers.insert(LISTING.into(), [crate::host::memory::Answer::Reply(200, b"0=a\nnonsense".to_vec())].into());
        let (result, values) = fetch(&mut network, &[Item::SshKeys, Item::InstanceId]);
        assert_eq!(result, Err(ImdsError::KeyListing(KeyListingError::BadLine { line: 2 })));
        assert_eq!(values[0].as_deref(), Some(&b"i-0123"[..]));
    }

    #[test]
    fn a_value_larger_than_its_buffer_fails_that_value() {
        let mut network = instance();
        network.answers.insert(ID.into(), [crate::host::memory::Answer::Reply(200, vec![b'i'; 5000])].into());
        let (result, _) = fetch(&mut network, &[Item::InstanceId]);
        let error = result.unwrap_err();
        assert!(matches!(error, ImdsError::Fetch { what: What::Item(Item::InstanceId), failure } if matches!(failure.cause, Cause::Http(_))), "{error:?}");
        assert_eq!(error.item(), Some(Item::InstanceId));
    }

    #[test]
    fn what_was_fetched_is_not_asked_again() {
        let timeouts = Timeouts::default();
        let mut space = vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut imds = Imds::new(Cloud::Aws, &SERVICE, &timeouts, 300);
        let mut network = instance();
        imds.fetch(&mut network, &mut metadata, &[Item::InstanceId]).unwrap();
        imds.fetch(&mut network, &mut metadata, &[Item::InstanceId, Item::Hostname]).unwrap();
        // The token is kept for the run; only the hostname is new.
        assert_eq!(network.lines(), lines(&[&[TOKEN_PUT], &[ID], &[HOSTNAME]]));
        assert_eq!(imds.requests, 3);
    }

    /// A network with routes to some endpoints only, as the kernel's route lookup answers.
    struct Routed {
        network: MemoryNetwork,
        routes: fn(Endpoint) -> bool,
        asked: Vec<Endpoint>,
    }

    impl Http for Routed {
        fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
            self.network.exchange_all(endpoint, exchanges, timeouts)
        }

        fn has_route(&mut self, endpoint: Endpoint) -> bool {
            self.asked.push(endpoint);
            (self.routes)(endpoint)
        }
    }

    impl crate::host::clock::Clock for Routed {
        fn realtime_secs(&mut self) -> u64 {
            0
        }
    }

    fn fetch_routed(routes: fn(Endpoint) -> bool) -> (Routed, Result<(), ImdsError>, Vec<Option<Vec<u8>>>) {
        let timeouts = Timeouts::default();
        let mut space = vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut imds = Imds::new(Cloud::Aws, &SERVICE, &timeouts, 300);
        let mut host = Routed { network: instance(), routes, asked: Vec::new() };
        let result = imds.fetch(&mut host, &mut metadata, &[Item::InstanceId, Item::SshKeys]);
        let values = Item::ALL.iter().map(|&item| metadata.get(item).map(<[u8]>::to_vec)).collect();
        (host, result, values)
    }

    const IPV4: Endpoint = Endpoint::Tcp { address: [169, 254, 169, 254], port: 80, privileged: false };
    const IPV6: Endpoint = Endpoint::Tcp6 { address: Ipv6Service::AwsMetadata, port: 80 };

    #[test]
    fn an_instance_with_no_ipv4_route_asks_the_ipv6_address_for_everything() {
        let (host, result, values) = fetch_routed(|endpoint| endpoint != IPV4);
        assert_eq!(result, Ok(()));
        assert_eq!(host.asked, [IPV4]);
        assert_eq!(host.network.lines(), lines(&[&[TOKEN_PUT], &[ID, LISTING], &[KEY0, KEY1]]));
        for request in host.network.seen() {
            assert_eq!(request.endpoint, IPV6, "{}", request.line);
            assert_eq!(request.host, "[fd00:ec2::254]", "{}", request.line);
        }
        assert_eq!(values[0].as_deref(), Some(&b"i-0123"[..]));
        assert_eq!(Ipv6Service::AwsMetadata.octets(), "fd00:ec2::254".parse::<std::net::Ipv6Addr>().unwrap().octets());
    }

    #[test]
    fn an_ipv4_route_keeps_the_ipv4_address_even_with_ipv6() {
        let (host, result, _) = fetch_routed(|_| true);
        assert_eq!(result, Ok(()));
        assert!(host.network.seen().iter().all(|request| request.endpoint == IPV4 && request.host == "169.254.169.254"));
    }

    #[test]
    fn with_no_route_at_all_the_failure_is_the_one_of_the_ipv6_address() {
        let unreachable = Cause::Connect(HostError { errno: 101 });
        let mut network = instance().fail(TOKEN_PUT, unreachable);
        network.answers.get_mut(TOKEN_PUT).unwrap().pop_front();
        let mut host = Routed { network, routes: |_| false, asked: Vec::new() };
        let timeouts = Timeouts::default();
        let mut imds = Imds::new(Cloud::Aws, &SERVICE, &timeouts, 300);
        let mut space = vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let error = imds.fetch(&mut host, &mut metadata, &[Item::InstanceId]).unwrap_err();
        // What an instance with no network at all said before the IPv6 address existed.
        assert_eq!(error.to_string(), "metadata token: cannot connect: errno 101; gave up after 3 attempts in the 30000 ms deadline (WISP_HTTP_TOTAL_MS)");
        assert_eq!(host.network.lines(), lines(&[&[TOKEN_PUT]]));
        assert_eq!(host.network.seen()[0].endpoint, IPV6);
    }

    #[test]
    fn each_new_token_follows_the_route_of_its_moment() {
        // The first token went to IPv4; once the IPv4 route is gone, an expired token is
        // fetched again from the IPv6 address, and the round repeated there.
        let timeouts = Timeouts::default();
        let mut space = vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut imds = Imds::new(Cloud::Aws, &SERVICE, &timeouts, 300);
        let mut host = Routed { network: instance(), routes: |_| true, asked: Vec::new() };
        imds.fetch(&mut host, &mut metadata, &[Item::InstanceId]).unwrap();
        host.routes = |endpoint| endpoint != IPV4;
        host.network = host.network.serve(HOSTNAME, 401, b"").serve(HOSTNAME, 200, b"h");
        host.network.answers.get_mut(HOSTNAME).unwrap().pop_front();
        imds.fetch(&mut host, &mut metadata, &[Item::Hostname]).unwrap();
        let endpoints: Vec<Endpoint> = host.network.seen().iter().map(|request| request.endpoint).collect();
        assert_eq!(endpoints, [IPV4, IPV4, IPV4, IPV6, IPV6]);
        assert_eq!(metadata.get(Item::Hostname), Some(&b"h"[..]));
    }
}
