//! The hash tables of §2 and §3 ([`EventTable`] for the event log's buckets,
//! [`KeyTable`] for the ranking), open addressing with linear probing in one
//! flat array each, so that a lookup touches one cache line (hashbrown keeps its control
//! bytes apart from its slots: two lines). The key table can be *touched* ahead of use:
//! the ranking loads the slots of a group of events first, letting the CPU overlap those
//! cache misses, then does the real work on warm lines (an event log bucket's table fits
//! in cache, so it needs no warming). Keys are already-uniform hashes (xxh3).

/// Every distinct event seen: its 128-bit id hash, its 64-bit fingerprint and what the
/// caller keeps of its first occurrence, `F` (nothing for the plan, which needs only
/// verdicts: `()` takes no room; the console keeps the first line, to say "retry of line
/// N").
///
/// Empty slots hold all ones, not zeros, so a new table is written through at once: a
/// zeroed allocation maps the shared zero page, and the first write to each page then
/// faults again and flushes every core's TLB.
pub struct EventTable<F: Copy + Default = ()> {
    /// `[id low, id high, fingerprint]` and the first occurrence's `F`; an all-ones id
    /// marks an empty slot.
    slots: Vec<([u64; 3], F)>,
    len: usize,
}

const EMPTY_ID: [u64; 2] = [u64::MAX; 2];

/// Slots are kept at most this full (in 1/16ths): short probes, even for absent ids.
const MAX_LOAD_16THS: usize = 11;

/// Slots to hold `items` at the maximum load.
fn capacity_for(items: usize) -> usize {
    (items * 16 / MAX_LOAD_16THS).max(16)
}

/// Maps a uniform 64-bit hash onto `0..len` (Lemire's multiply-shift).
fn home(hash: u64, len: usize) -> usize {
    ((u128::from(hash) * len as u128) >> 64) as usize
}

/// What an id was when it was offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen<F = ()> {
    /// First time: now recorded.
    New,
    /// Seen before with this fingerprint, and what was kept of that first time.
    Before(u64, F),
}

impl<F: Copy + Default> Default for EventTable<F> {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl<F: Copy + Default> EventTable<F> {
    fn empty() -> ([u64; 3], F) {
        ([u64::MAX; 3], F::default())
    }

    pub fn with_capacity(events: usize) -> Self {
        EventTable {
            slots: vec![Self::empty(); capacity_for(events)],
            len: 0,
        }
    }

    /// Empties the table, sized for `events` (reusing its memory when that fits).
    pub fn reset(&mut self, events: usize) {
        let want = capacity_for(events);
        if self.slots.len() < want || self.slots.len() > want * 4 {
            self.slots = vec![Self::empty(); want];
        } else {
            self.slots.fill(Self::empty());
        }
        self.len = 0;
    }

    /// The id as stored: the all-ones id (odds 2⁻¹²⁸) is folded onto another.
    fn stored(id: u128) -> [u64; 2] {
        match [id as u64, (id >> 64) as u64] {
            EMPTY_ID => [u64::MAX, u64::MAX - 1],
            id => id,
        }
    }

    /// Records `id` with `fingerprint` and `first` unless it is already there.
    pub fn offer(&mut self, id: u128, fingerprint: u64, first: F) -> Seen<F> {
        if (self.len + 1) * 16 > self.slots.len() * MAX_LOAD_16THS {
            self.grow();
        }
        let id = Self::stored(id);
        let len = self.slots.len();
        let mut at = home(id[0], len);
        loop {
            let (slot, kept) = &mut self.slots[at];
            if slot[..2] == id {
                return Seen::Before(slot[2], *kept);
            }
            if slot[..2] == EMPTY_ID {
                *slot = [id[0], id[1], fingerprint];
                *kept = first;
                self.len += 1;
                return Seen::New;
            }
            at += 1;
            if at == len {
                at = 0;
            }
        }
    }

    fn grow(&mut self) {
        let doubled = vec![Self::empty(); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.len = 0;
        for (slot, kept) in old.into_iter().filter(|s| s.0[..2] != EMPTY_ID) {
            let id = u128::from(slot[0]) | (u128::from(slot[1]) << 64);
            self.offer(id, slot[2], kept);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Key hash → index of the key's entry elsewhere. A slot packs the hash's high 32 bits
/// (a tag that rules out nearly every other key without looking further) and the index;
/// all ones is empty (see [`EventTable`] for why not zero), so an index is below
/// `u32::MAX`.
pub struct KeyTable {
    slots: Vec<u64>,
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl Default for KeyTable {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl KeyTable {
    pub fn with_capacity(keys: usize) -> Self {
        KeyTable {
            slots: vec![EMPTY; capacity_for(keys)],
            len: 0,
        }
    }

    /// Loads the hash's home slot, for warming the cache; the value means nothing.
    pub fn touch(&self, hash: u64) -> u64 {
        self.slots[home(hash, self.slots.len())]
    }

    /// The index whose entry `is_it` accepts, among those filed under `hash`.
    pub fn find(&self, hash: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<u32> {
        let tag = hash >> 32;
        let len = self.slots.len();
        let mut at = home(hash, len);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return None;
            }
            let index = slot as u32;
            if slot >> 32 == tag && is_it(index) {
                return Some(index);
            }
            at += 1;
            if at == len {
                at = 0;
            }
        }
    }

    /// Files `index` under `hash` (the caller knows the key is not there yet);
    /// `hash_of` gives the hash of an index already filed, for growing.
    pub fn insert(&mut self, hash: u64, index: u32, hash_of: impl Fn(u32) -> u64) {
        if (self.len + 1) * 16 > self.slots.len() * MAX_LOAD_16THS {
            let doubled = vec![EMPTY; self.slots.len() * 2];
            let old = std::mem::replace(&mut self.slots, doubled);
            self.len = 0;
            for slot in old.into_iter().filter(|&s| s != EMPTY) {
                let index = slot as u32;
                self.place(hash_of(index), index);
            }
        }
        self.place(hash, index);
    }

    fn place(&mut self, hash: u64, index: u32) {
        let len = self.slots.len();
        let mut at = home(hash, len);
        while self.slots[at] != EMPTY {
            at += 1;
            if at == len {
                at = 0;
            }
        }
        self.slots[at] = ((hash >> 32) << 32) | u64::from(index);
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Against a HashMap, through growth, with ids that collide in their home slot.
        #[test]
        fn the_event_table_is_a_map_from_id_to_its_first_fingerprint_and_line(
            offers in prop::collection::vec((0u128..64, any::<u64>()), 0..400),
            spread in any::<bool>(),
        ) {
            let mut table = EventTable::<u64>::default();
            let mut model: HashMap<u128, (u64, u64)> = HashMap::new();
            for (line, (id, fingerprint)) in offers.into_iter().enumerate() {
                // Small ids share home slots; spread ones use the whole hash.
                let id = if spread { id.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) } else { id };
                let line = line as u64 + 1;
                let want = match model.get(&id) {
                    Some(&(f, first)) => Seen::Before(f, first),
                    None => { model.insert(id, (fingerprint, line)); Seen::New }
                };
                prop_assert_eq!(table.offer(id, fingerprint, line), want);
            }
            prop_assert_eq!(table.len(), model.len());
        }

        #[test]
        fn the_key_table_finds_every_index_filed_and_only_those(
            hashes in prop::collection::vec(prop_oneof![0u64..8, any::<u64>()], 0..300),
        ) {
            let mut table = KeyTable::default();
            let mut filed: Vec<u64> = Vec::new();
            for hash in hashes {
                table.touch(hash);
                let found = table.find(hash, |i| filed[i as usize] == hash);
                let want = filed.iter().position(|&h| h == hash).map(|i| i as u32);
                prop_assert_eq!(found, want);
                if found.is_none() {
                    table.insert(hash, filed.len() as u32, |i| filed[i as usize]);
                    filed.push(hash);
                }
            }
            prop_assert_eq!(table.len(), filed.len());
        }
    }

    #[test]
    fn the_empty_marker_is_an_id_like_any_other() {
        let mut table = EventTable::<()>::with_capacity(4);
        for id in [0, u128::MAX, u128::MAX - 1] {
            assert_eq!(table.offer(id, 7, ()), Seen::New);
            assert_eq!(table.offer(id, 8, ()), Seen::Before(7, ()));
        }
        assert_eq!(table.len(), 3);
        let mut keys = KeyTable::with_capacity(4);
        keys.insert(u64::MAX, 0, |_| u64::MAX);
        assert_eq!(keys.find(u64::MAX, |i| i == 0), Some(0));
    }
}
