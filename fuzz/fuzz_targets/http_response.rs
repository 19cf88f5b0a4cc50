#![no_main]
//! An HTTP answer from a metadata service: parsed as it arrives, in two reads.
use libfuzzer_sys::fuzz_target;
use wisp_core::http::{parse_response, receive, Status};
use wisp_fuzz::{split, within};

struct Chunks<'a>(&'a [u8], usize);
impl embedded_io::ErrorType for Chunks<'_> {
    type Error = core::convert::Infallible;
}
impl embedded_io::Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = buf.len().min(self.0.len()).min(self.1.max(1));
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let (first, _) = split(data);
    let capacity = 4096;
    for eof in [false, true] {
        if let Ok(Status::Complete(response)) = parse_response(data, capacity, eof) {
            assert!((100..=999).contains(&response.status));
            assert!(within(response.head, data) && within(response.body, data));
            assert!(response.head.len() + response.body.len() <= data.len());
            assert!(response.head.ends_with(b"\n"));
        }
    }
    let mut buf = [0u8; 1024];
    if let Ok(response) = receive(&mut Chunks(data, first.len()), &mut buf) {
        assert!(response.head.len() + response.body.len() <= 1024);
        // Whatever arrived in pieces reads as it does whole.
        if let Ok(Status::Complete(whole)) = parse_response(&data[..data.len().min(1024)], 1024, true) {
            assert_eq!((whole.status, whole.body), (response.status, response.body));
        }
    }
});
