//! Moving a cursor through a list: the movement intents every list shares.

use crate::console::msg::Intent;

/// Moves `cursor` in a list of `len` for a movement intent; `false` if `intent` is not
/// one.
pub fn move_cursor(cursor: &mut usize, len: usize, intent: Intent, page: usize) -> bool {
    let last = len.saturating_sub(1);
    *cursor = match intent {
        Intent::Up => cursor.saturating_sub(1),
        Intent::Down => (*cursor + 1).min(last),
        Intent::Top => 0,
        Intent::Bottom => last,
        Intent::PageUp => cursor.saturating_sub(page),
        Intent::PageDown => (*cursor + page).min(last),
        _ => return false,
    };
    true
}
