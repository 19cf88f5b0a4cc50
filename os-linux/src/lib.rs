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

/// `n`'s decimal digits, written at the end of `buf` (a u64 has at most 20): for the few
/// numbers os-linux writes itself (a limit in an error, a descriptor in a path), without
/// `{}`, which would bring core's integer padding into the binary.
fn decimal_digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[start..]
}
