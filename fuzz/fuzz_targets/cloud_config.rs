#![no_main]
//! #cloud-config: every key's shape validated; what validates can be applied without a
//! panic (users, write_files, commands, power_state), and its JSON parses.
use libfuzzer_sys::fuzz_target;
use wisp_core::cloud_config::{for_each_user, items, power_state, shell_script, write_file, CloudConfig, ConfigError};
use wisp_core::yaml::{Arena, Node};

fuzz_target!(|data: &[u8]| {
    let mut nodes = vec![Node::EMPTY; 1024];
    let mut text = vec![0u8; 16 * 1024];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let Ok(root) = arena.parse(data) else { return };
    let mut config = CloudConfig::default();
    if config.add(arena.value(root)).is_err() || config.validate().is_err() {
        return;
    }
    let mut json = String::new();
    config.write_json(&mut json).unwrap();
    if let Err(e) = wisp_core::json::JsonText::parse(json.as_bytes()) {
        assert!(json.contains("NaN") || json.contains("Infinity"), "{json:?}: {e:?}");
    }
    if let Some(users) = config.value("users") {
        for_each_user(users, |_, _| Ok::<(), ConfigError>(())).expect("validated users iterate");
    }
    if let Some(files) = config.value("write_files") {
        // Each entry is checked on its own (a wrong one is left out with a warning): an
        // entry that parses has a path that stays where it says.
        for entry in items("write_files", files).expect("validated") {
            if let Ok(file) = write_file(entry) {
                assert!(file.path.starts_with('/') && !file.path.split('/').any(|p| p == ".."));
            }
        }
    }
    let mut script = vec![0u8; 64 * 1024];
    for key in ["bootcmd", "runcmd"] {
        if let Some(commands) = config.value(key) {
            let _ = shell_script(key, commands, &mut script);
        }
    }
    if let Some(state) = config.value("power_state") {
        power_state(state).expect("validated power_state");
    }
    let _ = (config.wants_default_user(), config.has_user_rules(true));
});
