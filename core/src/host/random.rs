//! The system's randomness.

use super::HostError;

pub trait Random {
    /// Fills `buf` with random bytes fit for secrets (salts).
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), HostError>;
}
