//! EFFECTS. The lake as hive folders (CONTRACT.md §6), the hive half of
//! [`crate::land::root::PublishRoot`]: `event_date=D` folders under a local publish root.
//! A landing's generation is staged beside it, merge mode's untouched files hard-linked in
//! ([`publish`]), and swapped in by rename ([`swap`], [`folder`]); the generation it
//! replaced is kept in the trash ([`trash`]) for [`restore`]. What status and the console
//! show is read in [`describe`] and [`generations`] (a past landing's two folders of each
//! date), the columns a landing added from the files' footers in [`columns`].

pub mod columns;
pub mod describe;
pub mod folder;
pub mod generations;
pub mod publish;
pub mod restore;
pub mod swap;
pub mod trash;
