//! The kernel's name for the machine.

use super::HostError;

pub trait HostName {
    /// sethostname(2).
    fn set_host_name(&mut self, name: &[u8]) -> Result<(), HostError>;
}
