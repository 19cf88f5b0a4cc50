#![no_std]
#![no_main]

// Without this the binary has no entry point: origin provides `_start` and the panic handler.
extern crate origin;

#[unsafe(no_mangle)]
fn origin_main(_argc: usize, _argv: *mut *mut u8, _envp: *mut *mut u8) -> i32 {
    let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(1) };
    let _ = rustix::io::write(fd, b"wisp\n");
    0
}
