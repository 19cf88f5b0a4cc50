//! HTTP/1.0 as wisp speaks it to metadata services: a request writer and a response
//! parser over buffers the caller owns. The parser is re-run on everything received so
//! far after each read and answers `Partial` until the response is complete.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::{Decimal, Plain};
use crate::text::eq_ignoring_case;

/// Most response headers wisp accepts.
pub const HEADERS_LIMIT: usize = 32;
// `TooManyHeaders` names the limit as a literal, not a number carried and formatted.
const _: () = assert!(HEADERS_LIMIT == 32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Put,
    Post,
}

impl Method {
    fn as_str(self) -> &'static str {
        crate::text::nth_word("GET PUT POST", self as usize)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub method: Method,
    /// The Host header, e.g. "169.254.169.254".
    pub host: &'a str,
    /// Origin form: "/latest/api/token", "/metadata/instance?api-version=2021-02-01".
    pub path: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status<T> {
    Partial,
    Complete(T),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'b> {
    pub status: u16,
    /// The status line and headers, up to and including the blank line.
    pub head: &'b [u8],
    pub body: &'b [u8],
}

impl<'b> Response<'b> {
    /// The value of the first header named `name` (compared without case), trimmed.
    pub fn header(&self, name: &str) -> Option<&'b [u8]> {
        let mut lines = self.head.split(|&b| b == b'\n').skip(1);
        lines.find_map(|line| {
            let colon = line.iter().position(|&b| b == b':')?;
            if !eq_ignoring_case(&line[..colon], name.as_bytes()) {
                return None;
            }
            Some(line[colon + 1..].trim_ascii())
        })
    }
}

/// Why a request or response was refused. Sizes are u32 and texts are named by small
/// enums so that the error is 12 bytes: every `?` between a response and the message
/// moves it (the buffers are far below 4 GiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The request does not fit in the caller's buffer, whose size is the limit.
    RequestTooLarge { limit: u32 },
    /// A CR, LF or NUL in a header, host or path, or a path that is not origin form.
    InvalidRequest { field: RequestField },
    /// The status line and headers do not fit in the response buffer.
    HeadTooLarge { limit: u32 },
    /// More than `HEADERS_LIMIT` headers.
    TooManyHeaders,
    /// The body cannot fit in what the buffer leaves after the head.
    BodyTooLarge { limit: u32 },
    /// Not an HTTP response: what is wrong with its head.
    Malformed { what: Malformation },
    /// A missing, repeated or non-numeric Content-Length where one is required or given.
    BadContentLength,
    /// Chunked or another transfer coding, which an HTTP/1.0 client must not receive.
    UnsupportedTransferEncoding,
    /// More bytes after the body announced by Content-Length.
    TrailingData,
    /// The peer closed before the head was complete.
    TruncatedHead { received: u32 },
    /// The peer closed before the body announced by Content-Length arrived.
    TruncatedBody { received: u32, expected: u32 },
}

/// The part of a request that holds characters a request may not carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestField {
    Path,
    Host,
    Headers,
}

impl RequestField {
    fn as_str(self) -> &'static str {
        crate::text::nth_word("path host headers", self as usize)
    }
}

/// What is wrong with a head that is not HTTP: a bad version, status code, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformation {
    Version,
    Status,
    LineEnding,
    HeaderName,
    HeaderValue,
}

impl Malformation {
    const fn as_str(self) -> &'static str {
        match self {
            Malformation::Version => "HTTP version",
            Malformation::Status => "status code",
            Malformation::LineEnding => "line ending",
            Malformation::HeaderName => "header name",
            Malformation::HeaderValue => "header value",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The size limits share one wording, so one formatting site; the rest return.
        let (what, limit) = match *self {
            Error::RequestTooLarge { limit } => ("request", limit),
            Error::HeadTooLarge { limit } => ("response head", limit),
            Error::BodyTooLarge { limit } => ("response body", limit),
            Error::InvalidRequest { field } => return write!(f, "invalid characters in the request's {field}", field = Plain(field.as_str())),
            Error::TooManyHeaders => return f.write_str("response has more than 32 headers"),
            Error::Malformed { what } => return write!(f, "not an HTTP response (bad {what})", what = Plain(what.as_str())),
            Error::BadContentLength => return f.write_str("invalid Content-Length"),
            Error::UnsupportedTransferEncoding => return f.write_str("Transfer-Encoding not allowed in an HTTP/1.0 response"),
            Error::TrailingData => return f.write_str("data after the end of the response body"),
            Error::TruncatedBody { received, expected } => {
                return write!(f, "connection closed after {received} of {expected} body bytes", received = Decimal(received.into()), expected = Decimal(expected.into()))
            }
            Error::TruncatedHead { received } => {
                return write!(f, "connection closed after {received} bytes, inside the response head", received = Decimal(received.into()))
            }
        };
        write!(f, "{what} larger than {limit} bytes", what = Plain(what), limit = Decimal(limit.into()))
    }
}

/// Writes `request` into `out` and returns its length. PUT and POST always carry a
/// Content-Length, so that a body-less PUT is not read as "body until close".
pub fn write_request(request: &Request<'_>, out: &mut [u8]) -> Result<usize, Error> {
    if !request.path.starts_with('/') || request.path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(Error::InvalidRequest { field: RequestField::Path });
    }
    if !is_header_text(request.host) {
        return Err(Error::InvalidRequest { field: RequestField::Host });
    }
    for &(name, value) in request.headers {
        if name.is_empty() || !name.bytes().all(is_token_byte) || !is_header_text(value) {
            return Err(Error::InvalidRequest { field: RequestField::Headers });
        }
    }
    let mut writer = Out::new(out);
    match put_request(request, &mut writer) {
        Ok(()) => Ok(writer.len()),
        Err(full) => Err(Error::RequestTooLarge { limit: full.limit as u32 }),
    }
}

/// The request as `write_request` checked it.
fn put_request(request: &Request<'_>, writer: &mut Out<'_>) -> Result<(), Full> {
    writer.put_all(&[request.method.as_str().as_bytes(), b" ", request.path.as_bytes(), b" HTTP/1.0\r\nHost: ", request.host.as_bytes(), b"\r\n"])?;
    for &(name, value) in request.headers {
        writer.put_all(&[name.as_bytes(), b": ", value.as_bytes(), b"\r\n"])?;
    }
    if !request.body.is_empty() || request.method != Method::Get {
        writer.put(b"Content-Length: ")?;
        writer.put_decimal(request.body.len() as u64)?;
        writer.put(b"\r\n")?;
    }
    writer.put_all(&[b"\r\n", request.body])
}

fn is_header_text(text: &str) -> bool {
    text.bytes().all(|b| b == b'\t' || (b >= b' ' && b != 0x7f))
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Parses everything received so far: `buf` is the filled part of a buffer of
/// `capacity` bytes, and `eof` says the peer has closed. A response that cannot fit is
/// refused as soon as its head says so, not after the buffer fills.
pub fn parse_response(buf: &[u8], capacity: usize, eof: bool) -> Result<Status<Response<'_>>, Error> {
    let head = match parse_head(buf) {
        Ok(head) => head,
        Err(Short::Partial) if eof => return Err(Error::TruncatedHead { received: buf.len() as u32 }),
        Err(Short::Partial) if buf.len() >= capacity => return Err(Error::HeadTooLarge { limit: capacity as u32 }),
        Err(Short::Partial) => return Ok(Status::Partial),
        Err(Short::Malformed(what)) => return Err(Error::Malformed { what }),
        Err(Short::TooManyHeaders) => return Err(Error::TooManyHeaders),
    };
    // RFC 9110 status codes run from 100 to 599.
    if !(100..=599).contains(&head.status) {
        return Err(Error::Malformed { what: Malformation::Status });
    }
    frame_body(buf, head.len, head.status, head.content_length?, capacity, eof)
}

/// The body after a head of `head_len` bytes, framed by its `Content-Length` (or by the
/// end of the connection without one) within `capacity`.
fn frame_body(
    buf: &[u8],
    head_len: usize,
    status: u16,
    content_length: Option<usize>,
    capacity: usize,
    eof: bool,
) -> Result<Status<Response<'_>>, Error> {
    let room = capacity.saturating_sub(head_len);
    let received = &buf[head_len..];
    let body = match content_length {
        Some(length) if length > room => return Err(Error::BodyTooLarge { limit: room as u32 }),
        Some(length) if received.len() > length => return Err(Error::TrailingData),
        Some(length) if received.len() == length => received,
        Some(length) if eof => return Err(Error::TruncatedBody { received: received.len() as u32, expected: length as u32 }),
        Some(_) => return Ok(Status::Partial),
        // Without a length the body ends when the connection does: a full buffer that
        // is still open would have to be cut, and is refused by the caller's next read.
        None if eof => received,
        None => return Ok(Status::Partial),
    };
    Ok(Status::Complete(Response { status, head: &buf[..head_len], body }))
}

/// What a complete head says: its length, the status, and the body's length when a
/// header gives it (or what is wrong with the headers that would).
struct Head {
    len: usize,
    status: u16,
    content_length: Result<Option<usize>, Error>,
}

/// Why a head was not read: it has not all arrived, it is not HTTP (what is wrong), or
/// it has more than `HEADERS_LIMIT` headers. Small, so that a read byte is returned in
/// registers.
enum Short {
    Partial,
    Malformed(Malformation),
    TooManyHeaders,
}

/// The bytes of a head as they are read.
struct Reader<'b> {
    buf: &'b [u8],
    at: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<u8, Short> {
        let b = *self.buf.get(self.at).ok_or(Short::Partial)?;
        self.at += 1;
        Ok(b)
    }

    /// The LF after a CR just read, or `bad`.
    fn line_feed(&mut self, bad: Malformation) -> Result<(), Short> {
        match self.next()? {
            b'\n' => Ok(()),
            _ => Err(Short::Malformed(bad)),
        }
    }
}

/// The status line and headers, with the grammar httparse 1.10 reads by default (which
/// wisp used before): empty lines before the status line skipped, lines ending in CRLF
/// or LF, `HTTP/1.0` or `HTTP/1.1`, three digits and an optional reason, at most
/// `HEADERS_LIMIT` headers of token names and values of visible text, spaces and tabs.
fn parse_head(buf: &[u8]) -> Result<Head, Short> {
    let mut reader = Reader { buf, at: 0 };
    let mut first = loop {
        match reader.next()? {
            b'\r' => reader.line_feed(Malformation::LineEnding)?,
            b'\n' => {}
            b => break b,
        }
    };
    for &expected in b"HTTP/1." {
        if first != expected {
            return Err(Short::Malformed(Malformation::Version));
        }
        first = reader.next()?;
    }
    if !matches!(first, b'0' | b'1') || reader.next()? != b' ' {
        return Err(Short::Malformed(Malformation::Version));
    }
    let mut status = 0;
    for _ in 0..3 {
        let digit = reader.next()?;
        if !digit.is_ascii_digit() {
            return Err(Short::Malformed(Malformation::Status));
        }
        status = status * 10 + u16::from(digit - b'0');
    }
    match reader.next()? {
        b' ' => loop {
            match reader.next()? {
                b'\r' => break reader.line_feed(Malformation::Status)?,
                b'\n' => break,
                b'\t' | b' '..=0x7e | 0x80.. => {}
                _ => return Err(Short::Malformed(Malformation::Status)),
            }
        },
        b'\r' => reader.line_feed(Malformation::Status)?,
        b'\n' => {}
        _ => return Err(Short::Malformed(Malformation::Status)),
    }
    let mut headers = 0;
    let mut content_length = Ok(None);
    loop {
        let name_start = reader.at;
        let colon = loop {
            match reader.next()? {
                b':' if reader.at - 1 > name_start => break reader.at - 1,
                b'\r' if reader.at - 1 == name_start => {
                    reader.line_feed(Malformation::LineEnding)?;
                    return Ok(Head { len: reader.at, status, content_length });
                }
                b'\n' if reader.at - 1 == name_start => return Ok(Head { len: reader.at, status, content_length }),
                b if is_token_byte(b) => {}
                _ => return Err(Short::Malformed(Malformation::HeaderName)),
            }
        };
        let end = loop {
            match reader.next()? {
                b'\r' => {
                    reader.line_feed(Malformation::HeaderValue)?;
                    break reader.at - 2;
                }
                b'\n' => break reader.at - 1,
                b'\t' | b' '..=0x7e | 0x80.. => {}
                _ => return Err(Short::Malformed(Malformation::HeaderValue)),
            }
        };
        headers += 1;
        if headers > HEADERS_LIMIT {
            return Err(Short::TooManyHeaders);
        }
        // The first header that makes the body unreadable is the one reported.
        if let Ok(known) = content_length {
            let (name, value) = (&buf[name_start..colon], buf[colon + 1..end].trim_ascii());
            content_length = if eq_ignoring_case(name, b"transfer-encoding") {
                Err(Error::UnsupportedTransferEncoding)
            } else if eq_ignoring_case(name, b"content-length") {
                match parse_length(value) {
                    Some(length) if known.is_none_or(|earlier| earlier == length) => Ok(Some(length)),
                    _ => Err(Error::BadContentLength),
                }
            } else {
                Ok(known)
            };
        }
    }
}

fn parse_length(digits: &[u8]) -> Option<usize> {
    usize::try_from(crate::text::decimal(digits, 15)?).ok()
}

/// `http://A.B.C.D[:port]/path`: where an HTTP seed is. Names would need a resolver,
/// which wisp does not have; https would need TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Url<'a> {
    pub address: [u8; 4],
    pub port: u16,
    /// The host and port as written, for the Host header.
    pub host: &'a str,
    /// Starts with '/'.
    pub path: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlError {
    Https,
    NotHttp,
    /// The host is a name, not an IPv4 address.
    HostName,
    BadPort,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::Https => "https URLs are not supported (wisp has no TLS)",
            UrlError::NotHttp => "not an http:// URL",
            UrlError::HostName => "the host must be an IPv4 address (wisp has no DNS resolver)",
            UrlError::BadPort => "invalid port",
        })
    }
}

pub fn parse_url(url: &str) -> Result<Url<'_>, UrlError> {
    if url.starts_with("https://") {
        return Err(UrlError::Https);
    }
    let rest = url.strip_prefix("http://").ok_or(UrlError::NotHttp)?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |slash| (&rest[..slash], &rest[slash..]));
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, crate::text::decimal(port.as_bytes(), 5).and_then(|p| u16::try_from(p).ok()).filter(|&p| p > 0).ok_or(UrlError::BadPort)?),
        None => (authority, 80),
    };
    let mut address = [0u8; 4];
    let mut parts = host.split('.');
    for slot in address.iter_mut() {
        let part = parts.next().ok_or(UrlError::HostName)?;
        *slot = crate::text::decimal(part.as_bytes(), 3).and_then(|n| u8::try_from(n).ok()).ok_or(UrlError::HostName)?;
    }
    if parts.next().is_some() {
        return Err(UrlError::HostName);
    }
    Ok(Url { address, port, host: authority, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(request: &Request<'_>) -> Vec<u8> {
        let mut out = [0u8; 512];
        let len = write_request(request, &mut out).unwrap();
        out[..len].to_vec()
    }

    const HOST: &str = "169.254.169.254";

    #[test]
    fn a_refused_request_names_its_field() {
        let fields = [RequestField::Path, RequestField::Host, RequestField::Headers].map(|field| Error::InvalidRequest { field }.to_string());
        assert_eq!(fields, ["path", "host", "headers"].map(|name| std::format!("invalid characters in the request's {name}")));
    }

    #[test]
    fn get_with_header() {
        let headers = [("X-aws-ec2-metadata-token", "AQAE==")];
        let get = Request { method: Method::Get, host: HOST, path: "/latest/meta-data/instance-id", headers: &headers, body: b"" };
        assert_eq!(
            write(&get),
            b"GET /latest/meta-data/instance-id HTTP/1.0\r\nHost: 169.254.169.254\r\nX-aws-ec2-metadata-token: AQAE==\r\n\r\n"
        );
    }

    #[test]
    fn put_and_post_carry_content_length() {
        let headers = [("X-aws-ec2-metadata-token-ttl-seconds", "5")];
        let put = Request { method: Method::Put, host: HOST, path: "/latest/api/token", headers: &headers, body: b"" };
        assert_eq!(
            write(&put),
            b"PUT /latest/api/token HTTP/1.0\r\nHost: 169.254.169.254\r\nX-aws-ec2-metadata-token-ttl-seconds: 5\r\nContent-Length: 0\r\n\r\n"
        );
        let headers = [("Content-Type", "application/json")];
        let body = br#"{"state":"Ready"}"#;
        let post = Request { method: Method::Post, host: "168.63.129.16", path: "/provisioning/health", headers: &headers, body };
        assert_eq!(
            write(&post),
            b"POST /provisioning/health HTTP/1.0\r\nHost: 168.63.129.16\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"state\":\"Ready\"}"
        );
    }

    #[test]
    fn request_limit_at_the_boundary() {
        let get = Request { method: Method::Get, host: "h", path: "/", headers: &[], body: b"" };
        let exact = b"GET / HTTP/1.0\r\nHost: h\r\n\r\n".len();
        let mut out = vec![0u8; exact];
        assert_eq!(write_request(&get, &mut out), Ok(exact));
        let mut out = vec![0u8; exact - 1];
        assert_eq!(write_request(&get, &mut out), Err(Error::RequestTooLarge { limit: exact as u32 - 1 }));
    }

    #[test]
    fn request_injection_refused() {
        let mut out = [0u8; 256];
        let bad_value = [("X-Token", "a\r\nEvil: 1")];
        let bad_name = [("X Token", "a")];
        let cases = [
            (Request { method: Method::Get, host: HOST, path: "/a b", headers: &[], body: b"" }, RequestField::Path),
            (Request { method: Method::Get, host: HOST, path: "relative", headers: &[], body: b"" }, RequestField::Path),
            (Request { method: Method::Get, host: "h\n", path: "/", headers: &[], body: b"" }, RequestField::Host),
            (Request { method: Method::Get, host: HOST, path: "/", headers: &bad_value, body: b"" }, RequestField::Headers),
            (Request { method: Method::Get, host: HOST, path: "/", headers: &bad_name, body: b"" }, RequestField::Headers),
        ];
        for (request, field) in cases {
            assert_eq!(write_request(&request, &mut out), Err(Error::InvalidRequest { field }));
        }
    }

    const OK: &[u8] = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 19\r\n\r\ni-0123456789abcdef0";

    #[test]
    fn every_prefix_is_partial_until_complete() {
        for cut in 0..OK.len() {
            assert_eq!(parse_response(&OK[..cut], 1024, false), Ok(Status::Partial), "cut at {cut}");
        }
        let Ok(Status::Complete(response)) = parse_response(OK, 1024, false) else { panic!() };
        assert_eq!(response.status, 200);
        assert_eq!(response.body, b"i-0123456789abcdef0");
        assert_eq!(response.header("content-type"), Some(&b"text/plain"[..]));
        assert_eq!(response.header("CONTENT-LENGTH"), Some(&b"19"[..]));
        assert_eq!(response.header("Metadata-Flavor"), None);
    }

    #[test]
    fn close_delimited_and_http_1_1() {
        let text = b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\nnot here";
        assert_eq!(parse_response(text, 1024, false), Ok(Status::Partial));
        let Ok(Status::Complete(response)) = parse_response(text, 1024, true) else { panic!() };
        assert_eq!((response.status, response.body), (404, &b"not here"[..]));
        let empty = b"HTTP/1.0 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";
        let Ok(Status::Complete(response)) = parse_response(empty, 1024, false) else { panic!() };
        assert_eq!((response.status, response.body), (401, &b""[..]));
    }

    #[test]
    fn truncation() {
        assert_eq!(
            parse_response(&OK[..OK.len() - 4], 1024, true),
            Err(Error::TruncatedBody { received: 15, expected: 19 })
        );
        assert_eq!(parse_response(b"HTTP/1.0 200 OK\r\nCont", 1024, true), Err(Error::TruncatedHead { received: 21 }));
        assert_eq!(parse_response(b"", 1024, true), Err(Error::TruncatedHead { received: 0 }));
    }

    #[test]
    fn limits_at_the_boundary() {
        let head_len = OK.len() - 19;
        // The body fits exactly, or is one byte over.
        assert!(matches!(parse_response(OK, OK.len(), false), Ok(Status::Complete(_))));
        assert_eq!(parse_response(&OK[..head_len], OK.len() - 1, false), Err(Error::BodyTooLarge { limit: 18 }));
        // A head that fills the buffer without ending.
        assert_eq!(parse_response(&OK[..head_len - 1], head_len - 1, false), Err(Error::HeadTooLarge { limit: head_len as u32 - 1 }));
        let mut many = b"HTTP/1.0 200 OK\r\n".to_vec();
        for i in 0..HEADERS_LIMIT {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        let mut fits = many.clone();
        fits.extend_from_slice(b"\r\n");
        assert!(matches!(parse_response(&fits, 4096, true), Ok(Status::Complete(_))));
        many.extend_from_slice(b"X-last: v\r\n\r\n");
        assert_eq!(parse_response(&many, 4096, true), Err(Error::TooManyHeaders));
        assert_eq!(Error::TooManyHeaders.to_string(), "response has more than 32 headers");
    }

    #[test]
    fn refusals() {
        let cases: [(&[u8], Error); 6] = [
            (b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Error::UnsupportedTransferEncoding),
            (b"HTTP/1.0 200 OK\r\nContent-Length: 1x\r\n\r\n", Error::BadContentLength),
            (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab", Error::BadContentLength),
            (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nabc", Error::TrailingData),
            (b"SSH-2.0-OpenSSH_9.6\r\n", Error::Malformed { what: Malformation::Version }),
            (b"HTTP/1.0 2x0 OK\r\n\r\n", Error::Malformed { what: Malformation::Status }),
        ];
        for (text, error) in cases {
            assert_eq!(parse_response(text, 1024, true), Err(error), "{:?}", String::from_utf8_lossy(text));
        }
        // Repeating the same length is harmless.
        let same = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab";
        assert!(matches!(parse_response(same, 1024, true), Ok(Status::Complete(_))));
    }

    #[test]
    fn status_outside_100_to_599_is_not_http() {
        // Found by fuzz/fuzz_targets/http_response.rs.
        let found = b"HTTP/1.0 002 \xac\xff\xff\xfe\xff\xff\xff*ent-Tye: etpxt/plaength: 09\r\n\r\ni-0126456789a\x01\0\0\0f0";
        let bad_status = Err(Error::Malformed { what: Malformation::Status });
        assert_eq!(parse_response(found, 128, true), bad_status);
        assert_eq!(parse_response(b"HTTP/1.0 600 X\r\nContent-Length: 0\r\n\r\n", 128, true), bad_status);
        assert_eq!(parse_response(b"HTTP/1.0 099 X\r\nContent-Length: 0\r\n\r\n", 128, true), bad_status);
        assert!(matches!(parse_response(b"HTTP/1.0 599 X\r\nContent-Length: 0\r\n\r\n", 128, true), Ok(Status::Complete(_))));
    }

    #[test]
    fn garbage_never_panics() {
        crate::fuzz::seed("http_response", OK);
        let mut garbage = crate::fuzz::Garbage::new(0x1234_5678);
        let pieces: [&[u8]; 8] = [OK, b"\r\n", b":", b" ", b"HTTP/1.0 ", b"200", b"Content-Length: 9", b"\xff"];
        for round in 0..300 {
            let bytes = garbage.text(&pieces, 6);
            let mutated = garbage.mutated(OK, 0..OK.len(), 3);
            for input in [&bytes, &mutated] {
                if let Ok(Status::Complete(response)) = parse_response(input, 128, round % 2 == 0) {
                    assert!((100..=999).contains(&response.status));
                    assert_eq!(response.head.as_ptr(), input.as_ptr());
                    assert!(response.head.len() + response.body.len() <= input.len() && response.body.len() <= 128);
                }
            }
        }
    }

    /// The parser wisp had before its own: httparse's head, then the same body framing.
    fn parse_response_with_httparse(buf: &[u8], capacity: usize, eof: bool) -> Result<Status<Response<'_>>, Error> {
        let mut headers = [httparse::EMPTY_HEADER; HEADERS_LIMIT];
        let mut response = httparse::Response::new(&mut headers);
        let head_len = match response.parse(buf) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if eof => return Err(Error::TruncatedHead { received: buf.len() as u32 }),
            Ok(httparse::Status::Partial) if buf.len() >= capacity => return Err(Error::HeadTooLarge { limit: capacity as u32 }),
            Ok(httparse::Status::Partial) => return Ok(Status::Partial),
            Err(httparse::Error::TooManyHeaders) => return Err(Error::TooManyHeaders),
            Err(e) => {
                let what = match e {
                    httparse::Error::HeaderName => Malformation::HeaderName,
                    httparse::Error::HeaderValue => Malformation::HeaderValue,
                    httparse::Error::NewLine => Malformation::LineEnding,
                    httparse::Error::Status => Malformation::Status,
                    httparse::Error::Version => Malformation::Version,
                    other => panic!("{other:?} in a response"),
                };
                return Err(Error::Malformed { what });
            }
        };
        let status = response.code.filter(|code| (100..=599).contains(code)).ok_or(Error::Malformed { what: Malformation::Status })?;
        let mut content_length = None;
        for header in response.headers.iter() {
            if eq_ignoring_case(header.name.as_bytes(), b"transfer-encoding") {
                return Err(Error::UnsupportedTransferEncoding);
            }
            if eq_ignoring_case(header.name.as_bytes(), b"content-length") {
                let length = parse_length(header.value.trim_ascii()).ok_or(Error::BadContentLength)?;
                if content_length.is_some_and(|earlier| earlier != length) {
                    return Err(Error::BadContentLength);
                }
                content_length = Some(length);
            }
        }
        frame_body(buf, head_len, status, content_length, capacity, eof)
    }

    #[test]
    fn the_head_is_read_as_httparse_read_it() {
        let bases: [&[u8]; 6] = [
            OK,
            b"\r\n\nHTTP/1.1 404 Not Found\nConnection:close\n\tX: y\r\n\r\nbody",
            b"HTTP/1.0 200\r\nContent-Length:  2 \t\r\nX-Empty:\r\nY:\t\r\n\r\nab",
            b"HTTP/1.0 401 \xff\xfeobs\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\ncontent-length: 2\r\nTransfer-Encoding: x\r\n\r\na",
            b"HTTP/1.0 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\n\r\n",
        ];
        let pieces: [&[u8]; 14] =
            [b"HTTP/1.", b"0", b"1", b" ", b"200", b"\r\n", b"\n", b"\r", b":", b"\t", b"Content-Length: 3", b"\x7f", b"\xff", b"abc"];
        let mut garbage = crate::fuzz::Garbage::new(0x5eed_1234);
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for base in bases {
            inputs.extend((0..=base.len()).map(|cut| base[..cut].to_vec()));
            for _ in 0..400 {
                let changes = 1 + garbage.below(3);
                inputs.push(garbage.mutated(base, 0..base.len(), changes));
            }
        }
        for _ in 0..3000 {
            inputs.push(garbage.text(&pieces, 12));
        }
        let mut many = b"HTTP/1.0 200 OK\r\n".to_vec();
        for i in 0..HEADERS_LIMIT + 1 {
            inputs.push(many.clone());
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
            inputs.push([&many[..], b"\r\n"].concat());
        }
        for input in &inputs {
            for capacity in [input.len(), input.len() + 1, 1024] {
                for eof in [false, true] {
                    assert_eq!(
                        parse_response(input, capacity, eof),
                        parse_response_with_httparse(input, capacity, eof),
                        "{:?} capacity {capacity} eof {eof}",
                        String::from_utf8_lossy(input)
                    );
                }
            }
        }
    }

    #[test]
    fn urls() {
        let url = parse_url("http://10.0.2.2:8000/seed/").unwrap();
        assert_eq!(url, Url { address: [10, 0, 2, 2], port: 8000, host: "10.0.2.2:8000", path: "/seed/" });
        assert_eq!(parse_url("http://192.168.1.1").unwrap().path, "/");
        assert_eq!(parse_url("http://192.168.1.1").unwrap().port, 80);
        assert_eq!(parse_url("https://10.0.0.1/"), Err(UrlError::Https));
        assert_eq!(parse_url("ftp://10.0.0.1/"), Err(UrlError::NotHttp));
        assert_eq!(parse_url("http://seed.example/"), Err(UrlError::HostName));
        assert_eq!(parse_url("http://10.0.0.256/"), Err(UrlError::HostName));
        assert_eq!(parse_url("http://10.0.0.1.5/"), Err(UrlError::HostName));
        assert_eq!(parse_url("http://10.0.0.1:0/"), Err(UrlError::BadPort));
        assert_eq!(parse_url("http://10.0.0.1:99999/"), Err(UrlError::BadPort));
    }
}
