//! [`RecentEvents`]: the events of the latest accepted lines, so the driver can mark
//! each line whose event an earlier line had (`seen` in the [`handoff`](super::handoff)):
//! in a file free of conflicts, a retry. When the marks are every repeat the
//! [`Ledger`](super::ledger::Ledger) counts, the unmarked lines are exactly the first
//! occurrences, and Spark ranks those alone (retries never cross its shuffle).
//!
//! Memory is bounded whatever the file: two generations of at most a generation's
//! events each, the older dropped when the newer fills, and an event seen again is
//! renewed into the newer. So an event is remembered for at least a generation of
//! later events. A retry later than that goes unmarked; the marks then fall short of the
//! ledger's repeats, and Spark ranks the exact way, over every line.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Events a generation holds: the last 131,072 to 262,144 events are remembered, in two
/// tables of 4.5 MB each. Marking 2M lines costs the pass about 0.1 s, and a generation
/// four times larger 0.17 s (docs/performance.md).
pub const GENERATION: usize = 1 << 17;

/// Event ids' hashes, which are uniform already: the table takes their low half as is.
#[derive(Default)]
struct LowHalf(u64);

impl Hasher for LowHalf {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u128` is called for an event; this keeps any other input sound.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u128(&mut self, event: u128) {
        self.0 = event as u64;
    }
}

type Events = HashSet<u128, BuildHasherDefault<LowHalf>>;

/// The events of the latest lines, in two generations.
pub struct RecentEvents {
    newer: Events,
    older: Events,
    generation: usize,
}

impl RecentEvents {
    /// Remembers at least the last `generation` events (at least one).
    pub fn new(generation: usize) -> RecentEvents {
        let generation = generation.max(1);
        RecentEvents {
            newer: Events::with_capacity_and_hasher(generation, Default::default()),
            older: Events::default(),
            generation,
        }
    }

    /// Whether an earlier line had `event` (as far as it is remembered); notes it for
    /// the lines after.
    pub fn seen(&mut self, event: u128) -> bool {
        let seen = !self.newer.insert(event) || self.older.contains(&event);
        if self.newer.len() >= self.generation {
            std::mem::swap(&mut self.newer, &mut self.older);
            self.newer.clear();
            self.newer.reserve(self.generation);
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_seen_again_for_at_least_a_generation() {
        let mut recent = RecentEvents::new(4);
        assert!(!recent.seen(1));
        assert!(recent.seen(1), "a second line of event 1");
        // Three events later (a generation holds four), 1 is still remembered, and
        // seeing it renews it.
        for event in [2, 3, 4] {
            assert!(!recent.seen(event));
        }
        assert!(recent.seen(1));
        // Two generations of other events later it is forgotten: a retry this late
        // goes unmarked, which the census tells by the ledger's count.
        for event in 10..18 {
            assert!(!recent.seen(event));
        }
        assert!(!recent.seen(1));
    }

    #[test]
    fn events_differing_in_the_high_half_are_two_events() {
        let mut recent = RecentEvents::new(GENERATION);
        assert!(!recent.seen(5));
        assert!(!recent.seen((7 << 64) | 5));
        assert!(recent.seen((7 << 64) | 5));
    }
}
