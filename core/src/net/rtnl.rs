//! The conversation on the routing socket: reading the kernel's links, addresses and
//! main-table routes, and making changes one request at a time, each acknowledged before
//! the next (so that a refusal names the change refused), in the order a link needs them.

use core::fmt;

use super::address::{self, Address};
use super::bring_up::Changes;
use super::link::{self, Link, LinkChange};
use super::netlink::{self, Message};
use super::route::{self, Route, TABLE_MAIN};
use crate::host::explain::{errno_number, ErrnoWords, Explain};
use crate::text::Plain;
use crate::host::netlink::Netlink;
use crate::host::HostError;

/// Most links, addresses and main-table routes read back from the kernel.
pub const LINKS_LIMIT: usize = 32;
pub const ADDRESSES_LIMIT: usize = 64;
pub const ROUTES_LIMIT: usize = 64;
/// The limits above in words: a literal costs less than formatting them, and the
/// assertion keeps the two in step.
const TOO_MANY: &str = "more than 32 links, 64 addresses or 64 main-table routes";
const _: () = assert!(LINKS_LIMIT == 32 && ADDRESSES_LIMIT == 64 && ROUTES_LIMIT == 64);
/// A dump's datagrams are at most 32 KiB (the kernel's NLMSG_GOODSIZE is smaller): the
/// receive buffer a caller gives `Rtnl::new`.
pub const DATAGRAM_LIMIT: usize = 32768;

super::worded! {
    /// The request that failed, named by an enum rather than its text so that an
    /// `RtnlError` is 8 bytes and comes back in a register through each `?` (32 bytes
    /// with a `&str` went through memory).
    Request {
        Dump => "rtnetlink dump",
        LinkDown => "link down",
        Rename => "rename",
        SetMtu => "set MTU",
        LinkUp => "link up",
        AddAddress => "add address",
        RemoveAddress => "remove address",
        AddRoute => "add route",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtnlError {
    /// The socket call failed, or the kernel refused the request (its errno).
    Call { what: Request, error: HostError },
    Message { what: Request, error: netlink::Error },
    NoAcknowledgement { what: Request },
    /// A link, address or route in a dump that does not parse.
    Dump(netlink::Error),
    TooMany,
}

impl Explain for RtnlError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        if let RtnlError::Call { what, .. } | RtnlError::Message { what, .. } | RtnlError::NoAcknowledgement { what } = *self {
            write!(f, "{}: ", Plain(what.as_str()))?;
        }
        match *self {
            RtnlError::Call { error, .. } => words(error, f),
            RtnlError::Message { error, .. } | RtnlError::Dump(error) => write!(f, "{error}"),
            RtnlError::NoAcknowledgement { .. } => f.write_str("no acknowledgement"),
            RtnlError::TooMany => f.write_str(TOO_MANY),
        }
    }
}

impl fmt::Display for RtnlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.explain(f, errno_number)
    }
}

/// What the kernel has: links, addresses, and the main table's routes.
#[derive(Default)]
pub struct State {
    pub links: heapless::Vec<Link, LINKS_LIMIT>,
    pub addresses: heapless::Vec<Address, ADDRESSES_LIMIT>,
    pub routes: heapless::Vec<Route, ROUTES_LIMIT>,
}

impl State {
    /// A link, an address or a main-table route from a dump.
    // Out of line: inlined into `dump` through its callers' closures (48 bytes more).
    #[inline(never)]
    fn keep(&mut self, message: &Message<'_>) -> Result<(), RtnlError> {
        let full = match message.kind() {
            link::RTM_NEWLINK => Link::parse(message).map(|l| l.map(|l| self.links.push(l).is_err())),
            address::RTM_NEWADDR => Address::parse(message).map(|a| a.map(|a| self.addresses.push(a).is_err())),
            _ => Route::parse(message).map(|r| r.filter(|r| r.table == TABLE_MAIN).map(|r| self.routes.push(r).is_err())),
        };
        match full.map_err(RtnlError::Dump)? {
            Some(true) => Err(RtnlError::TooMany),
            _ => Ok(()),
        }
    }

    pub fn name_of(&self, index: u32) -> &[u8] {
        self.links.iter().find(|l| l.index == index).map_or(b"?", |l| l.name())
    }
}

/// Writes one request into the buffer, with the sequence number given.
pub type Build<'f> = dyn FnMut(&mut [u8], u32) -> Result<&[u8], netlink::Error> + 'f;

/// The routing socket, with its sequence numbers and one receive buffer.
pub struct Rtnl<'b, N: Netlink> {
    pub(crate) socket: N,
    sequence: u32,
    /// `DATAGRAM_LIMIT` bytes the caller owns (the host's room): in `Rtnl` itself they
    /// were 32 KiB of each frame holding one, probed whole on entry.
    buf: &'b mut [u8],
}

impl<'b, N: Netlink> Rtnl<'b, N> {
    pub fn new(socket: N, buf: &'b mut [u8]) -> Rtnl<'b, N> {
        Rtnl { socket, sequence: 1, buf }
    }

    /// A kernel for tests, with a receive buffer of its own.
    #[cfg(test)]
    pub(crate) fn for_tests(socket: N) -> Rtnl<'static, N> {
        Rtnl::new(socket, std::vec![0; DATAGRAM_LIMIT].leak())
    }

    /// What the kernel has, read into `state` (a new one or one read before): a `State`
    /// is some 6 KB, which a return by value would copy.
    pub fn reread(&mut self, state: &mut State) -> Result<(), RtnlError> {
        state.addresses.clear();
        state.routes.clear();
        self.reread_links(state)?;
        for request in [address::dump_request, route::dump_request] {
            self.dump(request, &mut |message| state.keep(message))?;
        }
        Ok(())
    }

    /// The links alone read again into `state`.
    pub fn reread_links(&mut self, state: &mut State) -> Result<(), RtnlError> {
        state.links.clear();
        self.dump(link::dump_request, &mut |message| state.keep(message))
    }

    /// Sends a dump request and hands each message of the answer to `each`.
    fn dump(
        &mut self,
        request: fn(&mut [u8], u32) -> Result<&[u8], netlink::Error>,
        each: &mut dyn FnMut(&Message<'_>) -> Result<(), RtnlError>,
    ) -> Result<(), RtnlError> {
        let what = Request::Dump;
        let sequence = self.send(what, &mut |buf, seq| request(buf, seq))?;
        loop {
            let len = self.socket.recv(self.buf).map_err(|error| RtnlError::Call { what, error })?;
            for message in netlink::messages(&self.buf[..len]) {
                let message = message.map_err(|error| RtnlError::Message { what, error })?;
                if message.sequence() != sequence {
                    continue;
                }
                match message.kind() {
                    netlink::NLMSG_DONE => return Ok(()),
                    netlink::NLMSG_ERROR => return Err(refused(what, message.error_code().unwrap_or(0))),
                    _ => each(&message)?,
                }
            }
        }
    }

    /// One change to a link.
    pub fn link(&mut self, what: Request, change: LinkChange<'_>) -> Result<(), RtnlError> {
        self.change(what, &mut |buf, seq| change.emit(buf, seq))
    }

    /// Sends a change and waits for its acknowledgement.
    /// An address added (RTM_NEWADDR, with `flags`) or removed (RTM_DELADDR).
    pub fn address(&mut self, what: Request, address: &Address, kind: u16, flags: u16) -> Result<(), RtnlError> {
        self.change(what, &mut |buf, seq| address.emit(buf, kind, flags, seq))
    }

    pub fn change(&mut self, what: Request, request: &mut Build<'_>) -> Result<(), RtnlError> {
        let sequence = self.send(what, request)?;
        loop {
            let len = self.socket.recv(self.buf).map_err(|error| RtnlError::Call { what, error })?;
            for message in netlink::messages(&self.buf[..len]).flatten() {
                if message.sequence() == sequence {
                    return match message.error_code() {
                        Some(0) => Ok(()),
                        Some(code) => Err(refused(what, code)),
                        None => Err(RtnlError::NoAcknowledgement { what }),
                    };
                }
            }
        }
    }

    fn send(&mut self, what: Request, build: &mut Build<'_>) -> Result<u32, RtnlError> {
        self.sequence += 1;
        let sequence = self.sequence;
        let request = build(self.buf, sequence).map_err(|error| RtnlError::Message { what, error })?;
        self.socket.send(request).map_err(|error| RtnlError::Call { what, error })?;
        Ok(sequence)
    }

    /// Changes to `link`, in order: its name (while it is down), MTU, up, addresses,
    /// routes (a gateway's own route first).
    #[inline(never)]
    pub fn apply(&mut self, changes: &Changes, link: &Link, name: &[u8]) -> Result<(), RtnlError> {
        let create = netlink::F_CREATE | netlink::F_REPLACE;
        let index = changes.interface;
        if changes.rename {
            if link.is_up() {
                self.link(Request::LinkDown, LinkChange { index, up: Some(false), ..Default::default() })?;
            }
            self.link(Request::Rename, LinkChange { index, name: Some(name), ..Default::default() })?;
        }
        if let Some(mtu) = changes.mtu {
            self.link(Request::SetMtu, LinkChange { index, mtu: Some(mtu), ..Default::default() })?;
        }
        if changes.rename || !link.is_up() {
            self.link(Request::LinkUp, LinkChange { index, up: Some(true), ..Default::default() })?;
        }
        for address in &changes.addresses {
            self.address(Request::AddAddress, address, address::RTM_NEWADDR, create)?;
        }
        for route in &changes.routes {
            self.change(Request::AddRoute, &mut |buf, seq| route.emit(buf, route::RTM_NEWROUTE, create, seq))?;
        }
        Ok(())
    }
}

/// An NLMSG_ERROR's negative errno, as the host error it is.
fn refused(what: Request, code: i32) -> RtnlError {
    RtnlError::Call { what, error: HostError { errno: -code } }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryNetlink;
    use std::vec::Vec;

    fn eth0(flags: u32) -> Link {
        let mut name = [0u8; link::NAME_LIMIT];
        name[..4].copy_from_slice(b"eth0");
        Link { index: 2, hardware_type: link::ARPHRD_ETHER, flags, name, name_len: 4, mtu: 1500, mac: None, carrier: true }
    }

    /// Each request as (message kind, the link's IFF_UP change flag when a link change).
    fn kinds(sent: &[Vec<u8>]) -> Vec<u16> {
        sent.iter().map(|request| u16::from_ne_bytes([request[4], request[5]])).collect()
    }

    #[test]
    fn a_rename_takes_the_link_down_first_and_up_last() {
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let changes = Changes { interface: 2, rename: true, mtu: Some(9000), addresses: heapless::Vec::new(), routes: heapless::Vec::new() };
        kernel.apply(&changes, &eth0(link::IFF_UP), b"lan0").unwrap();
        let sent = &kernel.socket.sent;
        // down, rename, MTU, up: four link changes, each acknowledged before the next.
        assert_eq!(kinds(sent), [link::RTM_NEWLINK; 4]);
        let change_flags = |request: &Vec<u8>| u32::from_ne_bytes([request[28], request[29], request[30], request[31]]);
        let up_flags = |request: &Vec<u8>| u32::from_ne_bytes([request[24], request[25], request[26], request[27]]);
        assert_eq!((up_flags(&sent[0]) & link::IFF_UP, change_flags(&sent[0])), (0, link::IFF_UP));
        assert_eq!(change_flags(&sent[1]), 0);
        assert_eq!((up_flags(&sent[3]) & link::IFF_UP, change_flags(&sent[3])), (link::IFF_UP, link::IFF_UP));
        // Sequence numbers rise by one per request.
        let sequences: Vec<u32> = sent.iter().map(|r| u32::from_ne_bytes([r[8], r[9], r[10], r[11]])).collect();
        assert_eq!(sequences, [2, 3, 4, 5]);
    }

    #[test]
    fn a_link_already_up_and_named_is_not_raised_again() {
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let changes = Changes { interface: 2, rename: false, mtu: None, addresses: heapless::Vec::new(), routes: heapless::Vec::new() };
        kernel.apply(&changes, &eth0(link::IFF_UP), b"eth0").unwrap();
        assert!(kernel.socket.sent.is_empty());
        kernel.apply(&changes, &eth0(0), b"eth0").unwrap();
        assert_eq!(kinds(&kernel.socket.sent), [link::RTM_NEWLINK]);
    }

    #[test]
    fn each_error_says_its_request_and_comes_back_in_a_register() {
        assert_eq!(core::mem::size_of::<Result<(), RtnlError>>(), 8);
        let texts = ["rtnetlink dump", "link down", "rename", "set MTU", "link up", "add address", "remove address", "add route"];
        let requests = [Request::Dump, Request::LinkDown, Request::Rename, Request::SetMtu, Request::LinkUp, Request::AddAddress, Request::RemoveAddress, Request::AddRoute];
        for (request, text) in requests.into_iter().zip(texts) {
            assert_eq!(request.as_str(), text);
        }
        let cases = [
            (RtnlError::Call { what: Request::AddRoute, error: HostError { errno: 17 } }, "add route: errno 17"),
            (RtnlError::Message { what: Request::Rename, error: netlink::Error::NameTooLong }, "rename: netlink: an interface name is at most 15 bytes"),
            (RtnlError::Message { what: Request::Dump, error: netlink::Error::BufferTooSmall { limit: 32768 } }, "rtnetlink dump: netlink: request longer than 32768 bytes"),
            (RtnlError::NoAcknowledgement { what: Request::RemoveAddress }, "remove address: no acknowledgement"),
            (RtnlError::Dump(netlink::Error::Truncated), "netlink: truncated message"),
            (RtnlError::TooMany, "more than 32 links, 64 addresses or 64 main-table routes"),
        ];
        for (error, text) in cases {
            assert_eq!(std::format!("{error}"), text);
        }
    }

    #[test]
    fn a_refused_change_stops_the_rest_and_names_itself() {
        let mut kernel = Rtnl::for_tests(MemoryNetlink { refuse_request: Some((2, 22)), ..MemoryNetlink::default() });
        let changes = Changes { interface: 2, rename: true, mtu: Some(9000), addresses: heapless::Vec::new(), routes: heapless::Vec::new() };
        let e = kernel.apply(&changes, &eth0(0), b"lan0").unwrap_err();
        assert_eq!(e, RtnlError::Call { what: Request::SetMtu, error: HostError { errno: 22 } });
        assert_eq!(std::format!("{e}"), "set MTU: errno 22");
        assert_eq!(kernel.socket.sent.len(), 2);
    }

    /// The kernel's answers, one datagram per `recv`; out of datagrams, EAGAIN.
    struct Datagrams(std::collections::VecDeque<Vec<u8>>);

    impl Netlink for Datagrams {
        fn send(&mut self, _request: &[u8]) -> Result<(), HostError> {
            Ok(())
        }

        fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
            let datagram = self.0.pop_front().ok_or(HostError { errno: 11 })?;
            buf[..datagram.len()].copy_from_slice(&datagram);
            Ok(datagram.len())
        }
    }

    /// A capture's messages given sequence number `sequence` (what Rtnl's request had).
    fn answering(capture: &[u8], sequence: u32) -> Vec<u8> {
        let mut datagram = capture.to_vec();
        let mut at = 0;
        while at + 16 <= datagram.len() {
            datagram[at + 8..at + 12].copy_from_slice(&sequence.to_ne_bytes());
            at += (u32::from_ne_bytes(datagram[at..at + 4].try_into().unwrap()) as usize).next_multiple_of(4);
        }
        datagram
    }

    fn done(sequence: u32) -> Vec<u8> {
        let mut message = 20u32.to_ne_bytes().to_vec();
        message.extend_from_slice(&netlink::NLMSG_DONE.to_ne_bytes());
        message.extend_from_slice(&2u16.to_ne_bytes());
        message.extend_from_slice(&sequence.to_ne_bytes());
        message.extend_from_slice(&[0; 8]);
        message
    }

    #[test]
    fn a_dump_over_several_datagrams_reads_each_until_done() {
        static NEWLINK: &[u8] = include_bytes!("captures/newlink-veth.bin");
        static DUMP_ADDR: &[u8] = include_bytes!("captures/dump-addr.bin");
        static DUMP_ROUTE: &[u8] = include_bytes!("captures/dump-route.bin");
        // Requests 2, 3 and 4 (Rtnl's first is 2): the links and their DONE apart, the
        // addresses cut after the first with an answer to another request between, the
        // routes and their DONE in one.
        let addr = answering(DUMP_ADDR, 3);
        let datagrams = [
            answering(NEWLINK, 2),
            done(2),
            addr[..76].to_vec(),
            done(9),
            [&addr[76..], &done(3)[..]].concat(),
            [answering(DUMP_ROUTE, 4), done(4)].concat(),
        ];
        // The netlink fuzz target reads its input this way too: each datagram after its
        // length (16 bits, little-endian).
        let framed: Vec<u8> = datagrams.iter().flat_map(|d| [&(d.len() as u16).to_le_bytes()[..], d].concat()).collect();
        crate::fuzz::seed("netlink", &framed);
        let mut kernel = Rtnl::for_tests(Datagrams(datagrams.into_iter().collect()));
        let mut state = State::default();
        kernel.reread(&mut state).unwrap();
        assert_eq!(state.links.iter().map(|l| (l.index, l.name())).collect::<Vec<_>>(), [(5, &b"eth7"[..])]);
        assert_eq!(state.addresses.len(), 4);
        assert!(!state.routes.is_empty() && state.routes.iter().all(|r| r.table == TABLE_MAIN));
        assert!(kernel.socket.0.is_empty());
        // A dump the kernel never ends is an error, not a wait for ever.
        assert_eq!(kernel.reread(&mut State::default()).err(), Some(RtnlError::Call { what: Request::Dump, error: HostError { errno: 11 } }));
    }

    #[test]
    fn a_dump_reads_until_done() {
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let mut state = State::default();
        kernel.reread(&mut state).unwrap();
        assert!(state.links.is_empty() && state.addresses.is_empty() && state.routes.is_empty());
        assert_eq!(kinds(&kernel.socket.sent), [link::RTM_GETLINK, address::RTM_GETADDR, route::RTM_GETROUTE]);
    }
}
