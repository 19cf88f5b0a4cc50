//! Host identity.

use rustix::io::Errno;

/// sethostname(2): the kernel's hostname for this UTS namespace.
pub fn set_hostname(name: &[u8]) -> Result<(), Errno> {
    rustix::system::sethostname(name)
}
