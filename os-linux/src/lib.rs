//! wisp's system calls. Each function wraps one call (or one short, fixed sequence of
//! calls) through rustix, says which man page describes it, and holds no policy: what to
//! call, when, and what a failure means is decided by the caller.
#![no_std]

pub mod block;
pub mod nul_terminated;
pub mod fs;
pub mod memory;
pub mod mount;
pub mod net;
pub mod netlink;
pub mod packet;
pub mod process;
pub mod stdio;
pub mod system;
pub mod time;

pub use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
pub use rustix::io::Errno;
