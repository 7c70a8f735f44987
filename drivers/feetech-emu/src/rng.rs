//! A small seeded pseudo-random generator (SplitMix64) so fault injection is reproducible.

/// Deterministic generator: the same seed always gives the same sequence.
#[derive(Debug, Clone)]
pub(crate) struct SeededRng {
    state: u64,
}

impl SeededRng {
    /// Creates a generator from a seed.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform sample in `[0, 1)`.
    fn next_unit(&mut self) -> f64 {
        // The top 53 bits fill an f64 mantissa exactly.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with the given probability (values outside `[0, 1]` act as 0 or 1).
    pub(crate) fn chance(&mut self, probability: f64) -> bool {
        if probability <= 0.0 {
            return false;
        }
        self.next_unit() < probability
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_probability_is_respected() {
        let mut a = SeededRng::new(42);
        let mut b = SeededRng::new(42);
        let draws_a: Vec<bool> = (0..64).map(|_| a.chance(0.5)).collect();
        let draws_b: Vec<bool> = (0..64).map(|_| b.chance(0.5)).collect();
        assert_eq!(draws_a, draws_b);

        let mut rng = SeededRng::new(7);
        let hits = (0..10_000).filter(|_| rng.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "hits = {hits}");
        assert!(!(0..100).any(|_| rng.chance(0.0)));
        assert!((0..100).all(|_| rng.chance(1.0)));
    }
}
