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

/// A seed for a target that splits its input in two at the point its first byte picks
/// (wisp-fuzz's `split`): `first` and `second` joined behind that byte.
pub fn seed_pair(target: &str, first: &[u8], second: &[u8]) {
    let total = first.len() + second.len();
    let at = (0..=255u8).find(|&at| at as usize * total / 256 >= first.len()).unwrap_or(255);
    let mut input = vec![at];
    input.extend_from_slice(first);
    input.extend_from_slice(second);
    seed(target, &input);
}

/// Saves `input` as a seed for the cargo-fuzz target `target` when `WISP_FUZZ_SEEDS`
/// names a directory (ci/fuzz sets it): the fuzzers start from the tests' own vectors.
pub fn seed(target: &str, input: &[u8]) {
    let Some(directory) = std::env::var_os("WISP_FUZZ_SEEDS") else { return };
    let directory = std::path::Path::new(&directory).join(target);
    std::fs::create_dir_all(&directory).expect("the seed directory");
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    std::fs::write(directory.join(format!("{hash:016x}")), input).expect("a seed file");
}
