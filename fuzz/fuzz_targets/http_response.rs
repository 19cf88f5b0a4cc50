#![no_main]
//! An HTTP answer from a metadata service: parsed as it arrives, in two reads.
use libfuzzer_sys::fuzz_target;
use wisp_core::http::{parse_response, Status};
use wisp_fuzz::{split, within};

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
    // As the exchange receives it: the first read alone (more may come), then all of it
    // at the end of the stream. What the first read completes, the whole agrees with.
    let capacity = 1024;
    let whole = &data[..data.len().min(capacity)];
    let first = &whole[..first.len().min(whole.len())];
    if let Ok(Status::Complete(early)) = parse_response(first, capacity, false) {
        assert!(early.head.len() + early.body.len() <= capacity);
        if let Ok(Status::Complete(late)) = parse_response(whole, capacity, true) {
            assert_eq!((late.status, late.head), (early.status, early.head));
        }
    }
});
