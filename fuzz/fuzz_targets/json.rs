#![no_main]
//! A JSON document (Azure, OpenStack, configdrive, GCP answers).
use libfuzzer_sys::fuzz_target;
use wisp_core::json::JsonText;

fn walk(document: &[u8], value: JsonText<'_>, depth: usize) {
    let mut out = [0u8; 256];
    if let Ok(len) = value.unescape_into(document, &mut out) {
        // Bytes are copied as sent (JSON text that is not UTF-8 is not refused here: each
        // value's own check is, as for host names and keys).
        assert!(len <= out.len());
    }
    if depth > 16 {
        return;
    }
    if let Ok(mut members) = value.members() {
        while let Some((_, member)) = members.next_member() {
            walk(document, member, depth + 1);
        }
    }
    if let Ok(mut elements) = value.elements() {
        while let Some(element) = elements.next_element() {
            walk(document, element, depth + 1);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = JsonText::parse(data) {
        let _ = doc.path(&["compute", "osProfile", "computerName"]);
        assert_eq!(JsonText::find(data, &["compute", "vmId"]), doc.path(&["compute", "vmId"]));
        walk(data, doc, 0);
    }
});
