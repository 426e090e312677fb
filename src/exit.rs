//! Exit codes, in one place (CONTRACT.md §8).

/// Published or skipped.
pub const SUCCESS: u8 = 0;
/// Any other error.
pub const ERROR: u8 = 1;
/// Usage or invalid config.
pub const USAGE: u8 = 2;
/// Refused.
pub const REFUSED: u8 = 3;
/// Another run holds the lock.
pub const BUSY: u8 = 4;
