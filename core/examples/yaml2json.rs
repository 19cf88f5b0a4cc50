//! Reads a YAML file and prints it as JSON, the way `wisp userdata show` does, or the
//! error (exit 1): for comparing wisp's reading with PyYAML's while developing.

use wisp_core::yaml::{write_json, Arena, Node};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: yaml2json FILE");
        std::process::exit(2);
    };
    let source = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let mut nodes = vec![Node::EMPTY; 1 << 20];
    let mut text = vec![0u8; 64 << 20];
    let mut arena = Arena::new(&mut nodes, &mut text);
    match arena.parse(&source) {
        Ok(root) => {
            let mut json = String::new();
            write_json(arena.value(root), &mut json).expect("writing to a String");
            println!("{json}");
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
