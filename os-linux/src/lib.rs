//! wisp's system calls. Each function wraps one call (or one short, fixed sequence of
//! calls) through rustix, says which man page describes it, and holds no policy: what to
//! call, when, and what a failure means is decided by the caller.
#![no_std]

pub mod append_only;
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
pub mod take_once;
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

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::decimal_digits;
    use crate::nul_terminated::PathError;

    #[test]
    fn digits_of_the_smallest_and_largest_numbers() {
        assert_eq!(decimal_digits(0, &mut [0; 20]), b"0");
        assert_eq!(decimal_digits(4095, &mut [0; 20]), b"4095");
        assert_eq!(decimal_digits(u64::MAX, &mut [0; 20]), b"18446744073709551615");
        assert_eq!(PathError::TooLong { limit: 4096 }.to_string(), "path longer than 4096 bytes");
    }
}
