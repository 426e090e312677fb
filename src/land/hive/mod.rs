//! EFFECTS. The lake as hive folders (CONTRACT.md §6): `event_date=D` folders under a
//! local publish root, each generation staged beside it and swapped in by rename
//! ([`swap`]), the generation it replaced kept in the trash ([`trash`]) for `wharf restore`,
//! and a past landing's generations found for the History view's diff ([`generations`]).

pub mod columns;
pub mod describe;
pub mod folder;
pub mod generations;
pub mod publish;
pub mod restore;
pub mod swap;
pub mod trash;
