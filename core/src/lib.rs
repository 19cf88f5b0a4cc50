//! Every parser and every decision wisp makes, with no system calls, no allocator and no
//! `unsafe`. Inputs are byte slices the caller owns; outputs go into buffers the caller
//! owns. Every limit is explicit, and exceeding one is an error that names it.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

// What core asks of the system (one trait per concern), and shared pieces: readers and
// writers of bytes, clocks, checksums.
pub mod host;
pub mod clock;
pub mod crc32;
#[cfg(test)]
mod fuzz;
pub mod json;
pub mod message_line;
pub mod metadata_item;
pub mod out;
pub mod text;

// The HTTP/1.0 client's wire format and its retry schedule.
pub mod http;
pub mod http_exchange;
pub mod retry;

// Configuration, the command line, and which cloud this is.
pub mod cli;
pub mod config;
pub mod config_variables;
pub mod config_file;
pub mod detect;
pub mod cloud_choice;
pub mod features;
pub mod boot_cache;

// What the `main` phase writes: names, accounts, passwords, keys, the time zone.
pub mod accounts;
pub mod authorized_keys;
pub mod hostname;
pub mod host_keys;
pub mod hosts_file;
pub mod passwords;
pub mod set_hostname;
pub mod sha256;
pub mod sha512_crypt;
pub mod shadow;
pub mod sshd;
pub mod sshd_config;
pub mod ssh_host_keys;
pub mod system_files;
pub mod timezone;
pub mod users;
pub mod apk_repositories;
pub mod ntp;

// Where metadata comes from (services, seed filesystems), the phases that use it, the
// scripts they run, and the record of them that cloud-init's tools read.
pub mod cloud_init_status;
pub mod completion;
pub mod status;
pub mod imds_keys;
pub mod markers;
pub mod instance;
pub mod phase;
pub mod phase_run;
pub mod phases;
pub mod phases_start;
pub mod session;
pub mod provider;
pub mod script;
pub mod script_exit;
pub mod script_directories;
pub mod write_files;
pub mod packages;
pub mod default_interfaces;
pub mod enable_sshd;
pub mod seed;
pub mod state_files;

// Preparing an image for capture.
pub mod clean;

// User-data: encodings, compression and multipart documents.
pub mod base64;
pub mod gzip;
pub mod inflate;
pub mod cloud_config;
pub mod cloud_config_commands;
pub mod mime;
pub mod userdata;
pub mod userdata_scripts;
pub mod save_userdata;
pub mod userdata_decode;
pub mod yaml;

// Growing the root: where it is mounted, and its partition table; other mounts.
pub mod fstab;
pub mod mount_options;
pub mod mountinfo;
pub mod partition;

// config: cloud-config's system keys (issue #12's third round).
pub mod mounts;
pub mod power_state;
pub mod userdata_show;

// The network: rtnetlink, DHCPv4, and the bring-up's decisions.
pub mod net;
