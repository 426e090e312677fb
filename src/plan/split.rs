//! PURE. How a run of rows sorted by key is cut into files (CONTRACT.md §6, §10.4): a
//! [`Split`] is consecutive files of `per` rows, the last holding the rest. The one rule
//! of both engines: the local engine cuts its row ranges by it, the Spark engine renders
//! [`Split::file_of`] as SQL over each row's place in key order.

use std::ops::Range;

/// `files` files of `per` rows each, the last holding the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub per: u64,
    pub files: u64,
}

impl Split {
    /// Replace mode: a date's `rows` into `files_per_date` files of equal size (fewer when
    /// the rows are fewer; one, empty, when there are none).
    pub fn into_files(rows: u64, files_per_date: u64) -> Split {
        let files = files_per_date.clamp(1, rows.max(1));
        Split::by_size(rows, rows.div_ceil(files)).at_least_one()
    }

    /// Merge mode: the `rows` a merge rewrites in one key range into as few files of about
    /// equal size as keep each within `target_file_rows` (none when there are no rows).
    pub fn by_target(rows: u64, target_file_rows: u64) -> Split {
        let pieces = rows.div_ceil(target_file_rows.max(1)).max(1);
        Split::by_size(rows, rows.div_ceil(pieces))
    }

    fn by_size(rows: u64, per: u64) -> Split {
        let per = per.max(1);
        Split {
            per,
            files: rows.div_ceil(per),
        }
    }

    fn at_least_one(self) -> Split {
        Split {
            files: self.files.max(1),
            ..self
        }
    }

    /// The file that holds the row at `index` (from 0, in key order).
    pub fn file_of(&self, index: u64) -> u64 {
        index / self.per
    }

    /// Each file's rows of a run of `rows` rows (one empty range for an empty file).
    pub fn ranges(&self, rows: u64) -> impl Iterator<Item = Range<usize>> + '_ {
        (0..self.files).map(move |n| {
            let start = (n * self.per).min(rows) as usize;
            let end = ((n + 1) * self.per).min(rows) as usize;
            start..end
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(split: Split, rows: u64) -> Vec<usize> {
        split.ranges(rows).map(|r| r.len()).collect()
    }

    #[test]
    fn replace_mode_splits_evenly_into_at_most_its_files_and_writes_one_when_empty() {
        assert_eq!(sizes(Split::into_files(10, 3), 10), [4, 4, 2]);
        assert_eq!(sizes(Split::into_files(2, 4), 2), [1, 1]);
        assert_eq!(sizes(Split::into_files(0, 4), 0), [0]);
        assert_eq!(Split::into_files(10, 3).file_of(8), 2);
    }

    #[test]
    fn merge_mode_keeps_each_file_within_its_target_and_writes_none_when_empty() {
        assert_eq!(sizes(Split::by_target(10, 4), 10), [4, 4, 2]);
        assert_eq!(sizes(Split::by_target(9, 4), 9), [3, 3, 3]);
        assert_eq!(sizes(Split::by_target(4, 4), 4), [4]);
        assert_eq!(sizes(Split::by_target(0, 4), 0), Vec::<usize>::new());
        for rows in 0..50u64 {
            let split = Split::by_target(rows, 7);
            let ranges: Vec<_> = split.ranges(rows).collect();
            assert!(ranges.iter().all(|r| r.len() <= 7 && !r.is_empty()));
            assert_eq!(ranges.iter().map(|r| r.len() as u64).sum::<u64>(), rows);
            for (n, range) in ranges.iter().enumerate() {
                assert!(range.clone().all(|i| split.file_of(i as u64) == n as u64));
            }
        }
    }
}
