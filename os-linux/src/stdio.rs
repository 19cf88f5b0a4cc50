//! The standard streams, written without buffering: wisp writes whole lines.

use rustix::fd::BorrowedFd;
use rustix::io::Errno;

pub fn stdout() -> BorrowedFd<'static> {
    // SAFETY: fd 1 is the process's standard output for its whole life; wisp never closes
    // it. If the parent left it closed, writes fail with EBADF, which callers ignore.
    unsafe { BorrowedFd::borrow_raw(1) }
}

pub fn stderr() -> BorrowedFd<'static> {
    // SAFETY: as for `stdout`, with fd 2.
    unsafe { BorrowedFd::borrow_raw(2) }
}

/// write(2) until every byte is written (or an error other than EINTR).
pub fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
