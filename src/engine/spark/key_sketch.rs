//! [`KeySketch`]: about how many distinct keys an input has, in 4 KiB whatever its size
//! (HyperLogLog over the 64-bit key hash the local engine files keys under). The Spark
//! engine picks its ranking query by the events a key has on average
//! ([`winners::top_keys_query`](super::winners::top_keys_query)); an estimate a few percent
//! off picks the same query, and either query is exact.
//!
//! Written here rather than taken from a crate: the sketch is these few lines over a hash
//! the pass computes anyway, and the crates bring their own hashing and serialisation.

/// Registers: 2^12, a standard error of about 1.6%.
const BITS: u32 = 12;
const REGISTERS: usize = 1 << BITS;

/// A HyperLogLog sketch of key hashes.
#[derive(Clone)]
pub struct KeySketch {
    /// Per register, the most leading zeros (plus one) seen after its index bits.
    registers: Box<[u8; REGISTERS]>,
}

impl std::fmt::Debug for KeySketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeySketch {{ about {:.0} keys }}", self.estimate())
    }
}

impl Default for KeySketch {
    fn default() -> Self {
        KeySketch {
            registers: Box::new([0; REGISTERS]),
        }
    }
}

impl KeySketch {
    /// Notes a key by its hash (well mixed: every bit counts).
    pub fn add(&mut self, hash: u64) {
        let index = (hash >> (64 - BITS)) as usize;
        // The bits after the index, with a sentinel so an all-zero rest is bounded.
        let rest = (hash << BITS) | (1 << (BITS - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        let register = &mut self.registers[index];
        *register = (*register).max(rank);
    }

    /// Adds what `other` saw (a chunk's sketch into the input's).
    pub fn merge(&mut self, other: &KeySketch) {
        for (mine, theirs) in self.registers.iter_mut().zip(other.registers.iter()) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// About how many distinct keys were added: the harmonic-mean estimate, with linear
    /// counting while registers are still empty (small inputs).
    pub fn estimate(&self) -> f64 {
        let m = REGISTERS as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self.registers.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
        let raw = alpha * m * m / sum;
        let empty = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && empty > 0 {
            m * (m / empty as f64).ln()
        } else {
            raw
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::batch::key_hash;

    fn sketch_of(keys: impl Iterator<Item = u64>) -> KeySketch {
        let mut sketch = KeySketch::default();
        for key in keys {
            sketch.add(key_hash(&key.to_le_bytes()));
        }
        sketch
    }

    #[test]
    fn estimates_distinct_keys_within_a_few_percent() {
        for distinct in [0u64, 1, 100, 10_000, 580_000, 2_000_000] {
            let estimate = sketch_of(0..distinct).estimate();
            let off = (estimate - distinct as f64).abs() / (distinct.max(1) as f64);
            assert!(off < 0.05, "{distinct} keys estimated as {estimate:.0}");
        }
    }

    #[test]
    fn repeats_and_merging_count_a_key_once() {
        // 50,000 keys, each added 20 times across two sketches merged.
        let mut first = sketch_of((0..20).flat_map(|_| 0..25_000u64));
        let second = sketch_of((0..20).flat_map(|_| 12_500..50_000u64));
        first.merge(&second);
        let estimate = first.estimate();
        assert!(
            (estimate - 50_000.0).abs() < 2_500.0,
            "50,000 keys estimated as {estimate:.0}"
        );
    }
}
