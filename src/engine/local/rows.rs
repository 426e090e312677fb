//! [`Rows`]: each key's best record during the tally, encoded, in fixed blocks, and the
//! [`Slot`] that says where one sits.

use crate::contract::row;
use crate::engine::local::rowset::Spot;

/// Where a record sits in [`Rows`]: block, offset and room. Its length is its encoding's
/// ([`Rows::record`]), so a slot is 12 bytes of a ranking entry's 64.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    block: u32,
    offset: u32,
    room: u32,
}

/// Each key's best record, encoded, in blocks that never move or grow: filling them
/// touches each page of memory once (fresh pages are slow to fault in on these
/// machines). A new best overwrites its key's slot when it fits, which it nearly always
/// does, since a slot has room for 16 more bytes than its first record.
#[derive(Default)]
pub(super) struct Rows {
    blocks: Vec<Vec<u8>>,
}

const ROW_BLOCK: usize = 4 << 20;
const ROW_SLACK: usize = 16;

impl Slot {
    /// No record: a plan's key that needs none ([`Rows::room`] on it panics).
    pub const NONE: Slot = Slot {
        block: u32::MAX,
        offset: 0,
        room: 0,
    };

    /// Bytes reserved for the record (an upper bound of its length).
    pub fn room(&self) -> u32 {
        self.room
    }

    /// Where this slot is in [`Rows::into_blocks`].
    pub fn spot(&self) -> Spot {
        Spot {
            block: self.block,
            offset: self.offset,
            room: self.room,
        }
    }
}

impl Rows {
    /// The bytes reserved at `slot`: its record, then slack.
    pub fn room(&self, slot: Slot) -> &[u8] {
        let start = slot.offset as usize;
        &self.blocks[slot.block as usize][start..start + slot.room as usize]
    }

    /// The record of `fields` fields in `slot`.
    pub fn record(&self, slot: Slot, fields: usize) -> &[u8] {
        let room = self.room(slot);
        &room[..row::record_len(room, fields)]
    }

    pub fn insert(&mut self, row: &[u8]) -> Slot {
        let room = row.len() + ROW_SLACK;
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.capacity() - b.len() >= room);
        if !fits {
            self.blocks.push(Vec::with_capacity(room.max(ROW_BLOCK)));
        }
        let block = self.blocks.len() - 1;
        let bytes = &mut self.blocks[block];
        let offset = bytes.len();
        bytes.extend_from_slice(row);
        bytes.resize(offset + room, 0);
        Slot {
            block: block as u32,
            offset: offset as u32,
            room: room as u32,
        }
    }

    /// The blocks, for [`Slot::spot`]s to point into.
    pub fn into_blocks(self) -> Vec<Vec<u8>> {
        self.blocks
    }

    /// `row` in place of `slot`'s record: the same slot when it has room.
    pub fn replace(&mut self, slot: Slot, row: &[u8]) -> Slot {
        if row.len() > slot.room as usize {
            return self.insert(row);
        }
        let start = slot.offset as usize;
        self.blocks[slot.block as usize][start..start + row.len()].copy_from_slice(row);
        slot
    }
}
