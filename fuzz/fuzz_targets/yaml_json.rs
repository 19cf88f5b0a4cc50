#![no_main]
//! A cloud-config YAML document, and its round trip: the JSON wisp writes for it parses
//! as JSON, and read back as YAML (JSON is YAML) writes the same JSON again.
use libfuzzer_sys::fuzz_target;
use wisp_core::yaml::{write_json, Arena, Node};

fn to_json(source: &[u8]) -> Option<String> {
    let mut nodes = vec![Node::EMPTY; 1024];
    let mut text = vec![0u8; 16 * 1024];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let root = arena.parse(source).ok()?;
    let mut out = String::new();
    write_json(arena.value(root), &mut out).expect("writing JSON cannot fail");
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some(json) = to_json(data) else { return };
    // NaN and the infinities are Python's extensions, not JSON.
    if json.contains("NaN") || json.contains("Infinity") {
        return;
    }
    wisp_core::json::JsonText::parse(json.as_bytes()).unwrap_or_else(|e| panic!("{json:?}: {e:?}"));
    if json.len() < 8 * 1024 {
        let again = to_json(json.as_bytes()).unwrap_or_else(|| panic!("{json:?} does not read back as YAML"));
        assert_eq!(json, again);
    }
});
