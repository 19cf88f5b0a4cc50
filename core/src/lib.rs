//! Every parser and every decision wisp makes, with no system calls, no allocator and no
//! `unsafe`. Inputs are byte slices the caller owns; outputs go into buffers the caller
//! owns. Every limit is explicit, and exceeding one is an error that names it.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

pub mod clock;
pub mod crc32;
#[cfg(test)]
mod fuzz;
pub mod out;

// The HTTP/1.0 client's wire format and its retry schedule.
pub mod http;
pub mod json;
pub mod retry;

// Configuration and the command line.
pub mod cli;
pub mod config;
pub mod detect;

// What the `main` phase writes: names, accounts, keys.
pub mod accounts;
pub mod authorized_keys;
pub mod hostname;
pub mod hosts_file;

// Metadata services, the phases that use them, and the scripts they run.
pub mod phase;
pub mod script;
pub mod seed;
pub mod text;
pub mod provider;

// User-data: encodings, compression, multipart documents.
pub mod base64;
pub mod gzip;

// Growing the root: where it is mounted, and its partition table.
pub mod mountinfo;
pub mod partition;
