//! Host identity.

use rustix::io::Errno;

/// sethostname(2): the kernel's hostname for this UTS namespace.
pub fn set_hostname(name: &[u8]) -> Result<(), Errno> {
    rustix::system::sethostname(name)
}

/// getrandom(2): fills `buf` from the kernel's random pool (salts for password hashes).
pub fn random_bytes(buf: &mut [u8]) -> Result<(), Errno> {
    let mut filled = 0;
    while filled < buf.len() {
        filled += rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty())?;
    }
    Ok(())
}
