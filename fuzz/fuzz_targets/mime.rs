#![no_main]
//! A MIME multipart user-data document, walked as wisp walks it.
use libfuzzer_sys::fuzz_target;
use wisp_core::mime::Entity;
use wisp_fuzz::within;

fn walk(entity: Entity<'_>, whole: &[u8], depth: usize) {
    let _ = entity.media_type();
    if let Some(name) = entity.parameter("Content-Disposition", "filename") {
        assert!(within(name, whole));
    }
    if depth > 4 || !entity.is_multipart() {
        return;
    }
    if let Ok(parts) = entity.parts() {
        for part in parts {
            walk(part, whole, depth + 1);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = wisp_core::mime::is_mime(data);
    walk(Entity::parse(data), data, 0);
});
