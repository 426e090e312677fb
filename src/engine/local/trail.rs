//! [`Trail`]: what a census can keep, at 8 bytes an accepted event, for the console's
//! Ranked tab: each event's key (the ranking's own number for it) and line, in line
//! order. [`Trail::arrange`] turns it, once the input is read and §2 resolved, into
//! [`EventsByKey`]: every key in published order with its events' lines, its winner (the
//! plan's own, so the tab's rank 1 is the plan's by construction) and whether its top two
//! tie by arrival. The ranks below 1 are not kept: they need each event's precedence, 20
//! bytes more an event, and the tab ranks the few keys on screen from their lines.

use crate::plan::keyed::{Collapsed, EventsByKey};

/// Lines a trail entry holds: a longer input keeps no trail (the tab then reads the
/// input itself).
const LINE_BITS: u32 = 31;
const LINE: u64 = (1 << LINE_BITS) - 1;
/// In a trail entry, above the line: a retry (sorted after its key's ranked events).
const TRAIL_REPEAT: u64 = 1 << LINE_BITS;

/// Every accepted event's key number and line, in line order.
#[derive(Debug, Default)]
pub struct Trail {
    entries: Vec<u64>,
    /// A line past [`LINE`]: the trail is dropped.
    overflowed: bool,
}

impl Trail {
    /// Records the accepted event on `line`, of the key the ranking numbers `key`.
    pub fn push(&mut self, key: u32, line: u64) {
        if line > LINE {
            self.overflowed = true;
            self.entries = Vec::new();
        }
        if !self.overflowed {
            self.entries.push(u64::from(key) << 32 | line);
        }
    }

    /// Makes room for `events` entries ahead, up to 512 MiB of address space (room never
    /// used costs no memory; a larger input grows the rest).
    pub fn reserve(&mut self, events: usize) {
        self.entries.reserve(events.min(1 << 26));
    }

    /// Whether the input was too long to keep a trail for.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The events grouped by the `keys` in published order; `repeats`: what §2 found (no
    /// conflicts: an input with any is ranked again without them, and keeps no trail).
    pub fn arrange(self, keys: KeysInOrder, repeats: Collapsed) -> Option<EventsByKey> {
        if self.overflowed || !repeats.conflicts.is_empty() {
            return None;
        }
        let KeysInOrder {
            order,
            winners,
            names,
        } = keys;
        let mut entries = self.entries;
        let mut position = vec![0u32; order.len()];
        for (p, &n) in order.iter().enumerate() {
            position[n as usize] = p as u32;
        }
        // Entries are in line order, as the retries are: one walk flags them.
        let mut retries = repeats.retries.iter().map(|&(line, _)| line).peekable();
        for entry in &mut entries {
            let line = *entry & LINE;
            while retries.next_if(|&r| r < line).is_some() {}
            let repeat = if retries.next_if_eq(&line).is_some() {
                TRAIL_REPEAT
            } else {
                0
            };
            *entry = u64::from(position[(*entry >> 32) as usize]) << 32 | repeat | line;
        }
        drop(position);
        // Key order; in each key its ranked events by line, then its retries by line.
        entries.sort_unstable();
        let mut starts = Vec::with_capacity(order.len() + 1);
        let mut flags = vec![0u8; order.len()];
        let mut at = 0;
        for (p, &n) in order.iter().enumerate() {
            starts.push(at as u64);
            let best = winners[n as usize] & !KeysInOrder::TIED;
            while let Some(entry) = entries.get_mut(at).filter(|e| **e >> 32 == p as u64) {
                let line = *entry & LINE;
                *entry = if *entry & TRAIL_REPEAT != 0 {
                    line | EventsByKey::REPEAT
                } else if line == best {
                    line | EventsByKey::KEPT
                } else {
                    line
                };
                at += 1;
            }
            if winners[n as usize] & KeysInOrder::TIED != 0 {
                flags[p] |= EventsByKey::TIE;
            }
        }
        starts.push(at as u64);
        drop((order, winners));
        let (names, name_ends) = names.into_text();
        Some(EventsByKey {
            names,
            name_ends,
            starts,
            entries,
            flags,
            repeats,
        })
    }
}

/// What the ranking knows of its keys once the input is read, for [`Trail::arrange`].
#[derive(Debug, Default)]
pub struct KeysInOrder {
    /// `order[p]`: the ranking's number of the key published `p`th.
    pub order: Vec<u32>,
    /// By key number: its winner's line, with [`Self::TIED`] when its runner-up ties it.
    pub winners: Vec<u64>,
    /// The keys in published order.
    pub names: KeyNames,
}

impl KeysInOrder {
    pub const TIED: u64 = 1 << 63;
}

/// Keys in published order: int keys as their values, shown as text only once the
/// census's larger tables are gone (8 bytes a key where their text takes ~15).
#[derive(Debug)]
pub enum KeyNames {
    Ints(Vec<i64>),
    /// Each key as shown, back to back; key `p` ends at `ends[p]`.
    Text {
        names: String,
        ends: Vec<usize>,
    },
}

impl Default for KeyNames {
    fn default() -> Self {
        KeyNames::Ints(Vec::new())
    }
}

impl KeyNames {
    /// The keys as shown, back to back, and where each ends.
    fn into_text(self) -> (String, Vec<usize>) {
        match self {
            KeyNames::Text { names, ends } => (names, ends),
            KeyNames::Ints(ints) => {
                use std::fmt::Write;
                let digits = |n: i64| n.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1);
                let len = ints
                    .iter()
                    .map(|&n| digits(n) as usize + usize::from(n < 0))
                    .sum();
                let mut names = String::with_capacity(len);
                let mut ends = Vec::with_capacity(ints.len());
                for n in ints {
                    let _ = write!(names, "{n}");
                    ends.push(names.len());
                }
                (names, ends)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_group_by_key_in_published_order_with_retries_last() {
        let mut trail = Trail::default();
        // Key numbers in order of first sight: 0 = "b", 1 = "a".
        for (key, line) in [(0, 1), (1, 2), (0, 3), (1, 4), (0, 5)] {
            trail.push(key, line);
        }
        let repeats = Collapsed {
            retries: vec![(3, 1)],
            conflicts: Vec::new(),
        };
        let keys = KeysInOrder {
            order: vec![1, 0],
            winners: vec![5, 2 | KeysInOrder::TIED],
            names: KeyNames::Text {
                names: "ab".into(),
                ends: vec![1, 2],
            },
        };
        let events = trail
            .arrange(keys, repeats)
            .expect("no overflow, no conflict");
        assert_eq!(events.names, "ab");
        assert_eq!(events.name_ends, vec![1, 2]);
        assert_eq!(events.starts, vec![0, 2, 5]);
        let (kept, repeat) = (EventsByKey::KEPT, EventsByKey::REPEAT);
        assert_eq!(events.entries, vec![2 | kept, 4, 1, 5 | kept, 3 | repeat]);
        assert_eq!(events.flags, vec![EventsByKey::TIE, 0]);
    }

    #[test]
    fn int_keys_are_shown_as_their_values() {
        let ints = KeyNames::Ints(vec![i64::MIN, -10, -1, 0, 9, 10, 99, 100, i64::MAX]);
        let (names, ends) = ints.into_text();
        let shown = format!("{}-10-10910991009223372036854775807", i64::MIN);
        assert_eq!(names, shown);
        assert_eq!(names.capacity(), names.len(), "its length is counted ahead");
        assert_eq!(ends.len(), 9);
        assert_eq!(&names[ends[0]..ends[1]], "-10");
    }

    #[test]
    fn a_line_past_the_trail_width_drops_it() {
        let mut trail = Trail::default();
        trail.push(0, 1);
        trail.push(0, 1 << 31);
        trail.push(0, (1 << 31) + 1);
        assert!(trail.overflowed());
        let keys = KeysInOrder {
            order: vec![0],
            winners: vec![1],
            names: KeyNames::Ints(vec![-7]),
        };
        let arranged = trail.arrange(keys, Collapsed::default());
        assert_eq!(arranged, None);
    }
}
