//! Proofs of the landing contract's promises (issue 6): crashes at every step and at
//! random moments, concurrent runs, faults, privacy, hostile input. Every test asserts
//! on files, bytes and rows; none on timing. The four-reader check lives in
//! `tests/proof/readers.sh`.

mod common;
mod failpoints;
