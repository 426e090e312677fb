//! What an engine's read gives the console's Ranked and Raw tabs beyond the plan: every
//! key's events as lines ([`EventsByKey`]) and §2's repeats with the line each repeats
//! ([`Collapsed`]). Data only: the local engine's plan keeps them as it reads, and
//! [`crate::engine::Engine::events_by_key`] reads them for any engine.

/// Every retry and conflict with the line of the event it repeats: what the console
/// shows ("retry of line N"), and the plan does not keep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collapsed {
    /// `(line, first line)` of every identical retry, by line once resolved.
    pub retries: Vec<(u64, u64)>,
    /// `(line, first line)` of every conflict, by line once resolved.
    pub conflicts: Vec<(u64, u64)>,
}

/// Every key of an input in published order, with its events' lines: what the console's
/// Ranked tab shows, at 8 bytes an event and about 20 a key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventsByKey {
    /// Each key as shown, back to back; key `k` ends at `name_ends[k]`.
    pub names: String,
    pub name_ends: Vec<usize>,
    /// Key `k`'s events are `entries[starts[k]..starts[k + 1]]`.
    pub starts: Vec<u64>,
    /// A line and its flags ([`Self::KEPT`], [`Self::REPEAT`], [`Self::CONFLICT`]): each
    /// key's ranked events by line (its winner among them), then its retries and
    /// conflicts by line.
    pub entries: Vec<u64>,
    /// Per key: [`Self::TIE`], [`Self::HAS_CONFLICT`].
    pub flags: Vec<u8>,
    /// §2's retries and conflicts, with the line each repeats.
    pub repeats: Collapsed,
}

impl EventsByKey {
    /// An entry's flag: the key's winner, rank 1.
    pub const KEPT: u64 = 1 << 63;
    /// An entry's flag: an identical retry, not ranked.
    pub const REPEAT: u64 = 1 << 62;
    /// An entry's flag (with [`Self::REPEAT`]): a conflict, not ranked.
    pub const CONFLICT: u64 = 1 << 61;
    /// An entry's line.
    pub const LINE: u64 = (1 << 56) - 1;
    /// A key's flag: its rank 1 and rank 2 tie on instant and tiebreak.
    pub const TIE: u8 = 1;
    /// A key's flag: a line reuses one of its events' ids with other values.
    pub const HAS_CONFLICT: u8 = 2;
}
