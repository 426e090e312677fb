//! [`KeyIndex`]: where the ranking finds each key's entry. Int keys that lie close together
//! (order ids from a sequence, the usual case) are looked up by value in a [`Dense`] array,
//! others by hash in a [`KeyTable`].
//!
//! Why: ids from a sequence arrive roughly in order, so the keys in play at one time sit
//! side by side in a dense array, a few cache lines and pages, where a hash table scatters
//! them over every line and page of the table (the figures are in docs/performance.md).
//! The dense array needs no tag and no probe: its slot for a key is the key's own, and its
//! slots in order are the keys in order. Keys too far apart for the array to stay small
//! (more than [`SPREAD`] slots a key) move it to a hash table, once and for good.

use super::tables::KeyTable;
use crate::contract::row;
use crate::plan::batch::ShortKey;

/// Slots the dense array may hold for each key it may have to hold (expected or
/// filed): at 4 bytes a slot, at most 32 bytes a key, where the hash table takes ~12.
const SPREAD: u128 = 8;

/// Room the dense array may always take, whatever the keys: 1 MiB.
const FLOOR_SLOTS: u128 = 1 << 18;

/// Key → index of the key's entry.
pub(super) enum KeyIndex {
    /// Int keys, by value, while they stay close together.
    Dense(Dense),
    /// Any keys, by hash.
    Hashed(KeyTable),
}

/// Int keys `base..base + slots.len()`, each slot the key's index or [`EMPTY`].
pub(super) struct Dense {
    base: i64,
    slots: Vec<u32>,
    /// Keys filed.
    len: usize,
    /// Keys expected: the first array is sized for them, and room is kept for them.
    expected: usize,
}

/// An empty slot: all ones, so that a new array is written through at once (see
/// [`KeyTable`] for the faults a zeroed one costs).
const EMPTY: u32 = u32::MAX;

impl KeyIndex {
    /// An index for about `keys` keys: dense when keys are ints.
    pub fn new(int_keys: bool, keys: usize) -> Self {
        if int_keys {
            KeyIndex::Dense(Dense {
                base: 0,
                slots: Vec::new(),
                len: 0,
                expected: keys,
            })
        } else {
            KeyIndex::Hashed(KeyTable::with_capacity(keys))
        }
    }

    /// Loads the key's slot, for warming the cache; the value means nothing.
    pub fn touch(&self, hash: u64, key: &ShortKey) -> u64 {
        match self {
            KeyIndex::Dense(dense) => dense.at(key).map_or(0, |at| u64::from(dense.slots[at])),
            KeyIndex::Hashed(table) => table.touch(hash),
        }
    }

    /// The index whose entry `is_it` accepts, among those filed under the key (an int key
    /// has one candidate, and `is_it` must accept it; a hashed one may have several).
    pub fn find(
        &self,
        hash: u64,
        key: &ShortKey,
        mut is_it: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        match self {
            KeyIndex::Dense(dense) => {
                let index = dense.slots[dense.at(key)?];
                (index != EMPTY && is_it(index)).then_some(index)
            }
            KeyIndex::Hashed(table) => table.find(hash, is_it),
        }
    }

    /// Files `index` under the key (the caller knows it is not there yet). `hash_of` gives
    /// the hash of an index already filed: a hash table grows with it, and a dense array
    /// that would spread too thin becomes a hash table with it.
    pub fn insert(&mut self, hash: u64, key: &ShortKey, index: u32, hash_of: impl Fn(u32) -> u64) {
        if let KeyIndex::Dense(dense) = self {
            if let Some(value) = int_of(key)
                && dense.make_room(value)
            {
                dense.file(value, index);
                return;
            }
            *self = KeyIndex::Hashed(dense.to_table(&hash_of));
        }
        if let KeyIndex::Hashed(table) = self {
            table.insert(hash, index, hash_of);
        }
    }

    /// Every index filed, by ascending key, when the keys are filed by value (a hash
    /// table's order means nothing).
    pub fn in_key_order(&self) -> Option<Vec<u32>> {
        match self {
            KeyIndex::Dense(dense) => {
                let mut order = Vec::with_capacity(dense.len);
                order.extend(dense.slots.iter().copied().filter(|&i| i != EMPTY));
                Some(order)
            }
            KeyIndex::Hashed(_) => None,
        }
    }
}

/// The key's value when it is an int.
fn int_of(key: &ShortKey) -> Option<i64> {
    key.whole().filter(|k| k.len() == 9).and_then(row::int)
}

impl Dense {
    /// The slot of `key`, when it is an int within the array.
    fn at(&self, key: &ShortKey) -> Option<usize> {
        let value = int_of(key)?;
        let at = usize::try_from(i128::from(value) - i128::from(self.base)).ok()?;
        (at < self.slots.len()).then_some(at)
    }

    fn file(&mut self, value: i64, index: u32) {
        let at = (i128::from(value) - i128::from(self.base)) as usize;
        debug_assert_eq!(self.slots[at], EMPTY, "the key was not filed yet");
        self.slots[at] = index;
        self.len += 1;
    }

    /// Grows the array to hold `value`, doubling towards it; `false` when that would take
    /// more than [`SPREAD`] slots a key.
    fn make_room(&mut self, value: i64) -> bool {
        let value = i128::from(value);
        if self.slots.is_empty() {
            // Three slots a key expected: the bytes a hash table takes for them (~12),
            // and room for ids one in three of which are used, without growing.
            let len = (self.expected as u128 * 3).clamp(1024, FLOOR_SLOTS.max(self.limit()));
            // Keys from a sequence rise as they arrive: most of the room goes above.
            self.base =
                (value - len as i128 / 16).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            self.slots = vec![EMPTY; len as usize];
            return true;
        }
        let (start, end) = (
            i128::from(self.base),
            i128::from(self.base) + self.slots.len() as i128,
        );
        if (start..end).contains(&value) {
            return true;
        }
        let old = self.slots.len() as i128;
        let (new_start, new_end) = if value < start {
            ((end - 2 * old).min(value), end)
        } else {
            (start, (start + 2 * old).max(value + 1))
        };
        let new_start = new_start.max(i128::from(i64::MIN));
        let span = (new_end - new_start) as u128;
        if span > self.limit() {
            return false;
        }
        let mut slots = vec![EMPTY; span as usize];
        let shift = (start - new_start) as usize;
        slots[shift..shift + self.slots.len()].copy_from_slice(&self.slots);
        self.slots = slots;
        self.base = new_start as i64;
        true
    }

    /// The most slots the array may take.
    fn limit(&self) -> u128 {
        (self.expected.max(self.len + 1) as u128 * SPREAD).max(FLOOR_SLOTS)
    }

    /// The same keys in a hash table.
    fn to_table(&self, hash_of: &impl Fn(u32) -> u64) -> KeyTable {
        let mut table = KeyTable::with_capacity(self.expected.max(self.len * 2));
        for &index in self.slots.iter().filter(|&&i| i != EMPTY) {
            table.insert(hash_of(index), index, hash_of);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::batch::key_hash;
    use proptest::prelude::*;

    fn int_key(n: i64) -> Vec<u8> {
        let mut key = Vec::new();
        row::push_int(&mut key, n);
        key
    }

    proptest! {
        /// Whatever the keys (close, far apart, at the ends of i64, strings), every key
        /// filed is found at its index and no other key is found: the same as a plain map.
        #[test]
        fn finds_what_a_map_finds(
            keys in prop::collection::vec(
                prop_oneof![
                    0i64..3000,
                    1_000_000i64..1_000_100,
                    Just(i64::MIN),
                    Just(i64::MAX),
                    any::<i64>(),
                ],
                0..400,
            ),
            expected in 0usize..2000,
            probes in prop::collection::vec(any::<i64>(), 0..50),
        ) {
            let mut index = KeyIndex::new(true, expected);
            let mut filed: std::collections::HashMap<i64, u32> = Default::default();
            let mut encoded: Vec<Vec<u8>> = Vec::new();
            for &k in &keys {
                let key = int_key(k);
                let short = ShortKey::of(&key);
                let found = index.find(key_hash(&key), &short, |i| encoded[i as usize] == key);
                prop_assert_eq!(found, filed.get(&k).copied());
                if found.is_none() {
                    let next = encoded.len() as u32;
                    encoded.push(key.clone());
                    filed.insert(k, next);
                    index.insert(key_hash(&key), &short, next, |i| key_hash(&encoded[i as usize]));
                }
            }
            if let Some(order) = index.in_key_order() {
                let mut want: Vec<(i64, u32)> = filed.iter().map(|(&k, &i)| (k, i)).collect();
                want.sort();
                prop_assert_eq!(order, want.into_iter().map(|(_, i)| i).collect::<Vec<_>>());
            }
            for &k in keys.iter().chain(&probes) {
                let key = int_key(k);
                let found = index.find(key_hash(&key), &ShortKey::of(&key), |i| encoded[i as usize] == key);
                prop_assert_eq!(found, filed.get(&k).copied());
            }
        }
    }

    #[test]
    fn close_keys_stay_dense_and_far_ones_move_to_a_table() {
        let mut index = KeyIndex::new(true, 100);
        let hash_of = |_: u32| 0;
        for (i, k) in (10_000_000i64..10_003_000).step_by(3).enumerate() {
            let key = int_key(k);
            index.insert(key_hash(&key), &ShortKey::of(&key), i as u32, hash_of);
        }
        assert!(matches!(index, KeyIndex::Dense(_)), "1,000 keys 3 apart");
        let far = int_key(i64::MAX);
        index.insert(key_hash(&far), &ShortKey::of(&far), 1000, |i| {
            let k = 10_000_000 + 3 * i64::from(i);
            key_hash(&int_key(if i == 1000 { i64::MAX } else { k }))
        });
        assert!(matches!(index, KeyIndex::Hashed(_)), "one key 2⁶³ away");
        let near = int_key(10_000_300);
        assert_eq!(
            index.find(key_hash(&near), &ShortKey::of(&near), |_| true),
            Some(100)
        );
    }
}
