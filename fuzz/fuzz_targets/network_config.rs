#![no_main]
//! cloud-init's network-config, versions 1 and 2, as a seed's YAML document, and the
//! /etc/network/interfaces wisp renders from it.
use libfuzzer_sys::fuzz_target;
use wisp_core::net::network_config::parse;
use wisp_core::yaml::{Arena, Node};

fn check(data: &[u8]) {
    let mut nodes = vec![Node::EMPTY; 512];
    let mut text = vec![0u8; 8192];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let Ok(root) = arena.parse(data) else { return };
    if let Ok(config) = parse(arena.value(root)) {
        wisp_fuzz::check_network_config(&config);
    };
}

fuzz_target!(|data: &[u8]| check(data));
