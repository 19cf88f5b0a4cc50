//! Deterministic garbage for the tests that feed every parser bad input: a fixed
//! sequence, so a failure reproduces.

use core::ops::Range;

pub struct Garbage(u32);

impl Garbage {
    pub fn new(seed: u32) -> Garbage {
        Garbage(seed)
    }

    /// A number below `n` (a linear congruential generator is plenty for this).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (self.0 >> 8) as usize % n.max(1)
    }

    /// Up to `most` pieces, each picked from `pieces`, joined.
    pub fn text(&mut self, pieces: &[&[u8]], most: usize) -> Vec<u8> {
        let count = self.below(most + 1);
        (0..count).flat_map(|_| pieces[self.below(pieces.len())].iter().copied()).collect()
    }

    /// `base` with `changes` bytes inside `range` set to arbitrary values.
    pub fn mutated(&mut self, base: &[u8], range: Range<usize>, changes: usize) -> Vec<u8> {
        let mut data = base.to_vec();
        for _ in 0..changes {
            let at = range.start + self.below(range.len());
            data[at] = self.below(256) as u8;
        }
        data
    }
}
