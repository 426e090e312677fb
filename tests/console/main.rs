//! Flows through the operator console, driven by intents (and keys, and the shipped binary
//! in tmux) against a copy of the samples, asserting on the files the core wrote, not only
//! on the screen: select, plan, confirm with `y`, cancel with `n` / `Esc`, a refusal, the
//! typed `shrink`, a restore, cancelling a plan, the Changes tab against `wharf diff`, the
//! History diff, the Products screen, a set's and a compressed input's lines by part in
//! the Raw and Ranked tabs, and the inbox watcher picking up a renamed file.

#[path = "../kit/mod.rs"]
mod kit;

mod browsing;
mod changes;
mod harness;
mod history;
mod landing;
mod products;
mod runlog;
mod sets;
mod tmux;
mod watcher;

// The samples fixture, as `crate::fixture` (the name the crate's own snapshot tests use).
use kit::fixture;
