//! RFC 3339 timestamps parsed to exact UTC instants (CONTRACT.md §1), and the UTC
//! calendar dates that name partitions (§4).
//!
//! [`Instant`] is seconds since the Unix epoch plus nanoseconds, so two timestamps are
//! compared as the instants they denote, never as strings: `10:15:00+05:30` is earlier
//! than `05:00:00Z`. [`Date`] is a day number since 1970-01-01 with `YYYY-MM-DD` display.

use std::fmt;

const SECONDS_PER_DAY: i64 = 86_400;

/// One exact UTC instant, nanosecond precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    secs: i64,
    nanos: u32,
}

/// Why a timestamp string is not an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampError {
    /// A well-shaped date and time with no `Z` or `±HH:MM` after it.
    WithoutOffset,
    /// Anything else that is not a real RFC 3339 instant.
    Invalid,
}

impl Instant {
    /// The instant `secs` seconds and `nanos` nanoseconds after the epoch.
    pub fn from_parts(secs: i64, nanos: u32) -> Self {
        Self { secs, nanos }
    }

    /// Microseconds since the epoch, truncated toward the past (the published column).
    pub fn micros(self) -> i64 {
        self.secs * 1_000_000 + i64::from(self.nanos / 1_000)
    }

    /// The instant of `micros` microseconds since the epoch.
    pub fn from_micros(micros: i64) -> Self {
        let secs = micros.div_euclid(1_000_000);
        let nanos = (micros.rem_euclid(1_000_000) * 1_000) as u32;
        Self { secs, nanos }
    }

    /// The UTC calendar date this instant falls on.
    pub fn utc_date(self) -> Date {
        Date(self.secs.div_euclid(SECONDS_PER_DAY) as i32)
    }

    /// The UTC hour of its day, `0..24`.
    pub fn hour_of_day(self) -> usize {
        (self.secs.rem_euclid(SECONDS_PER_DAY) / 3600) as usize
    }

    /// Seconds since the epoch.
    pub fn secs(self) -> i64 {
        self.secs
    }

    /// Nanoseconds past `secs`.
    pub fn nanos(self) -> u32 {
        self.nanos
    }
}

impl fmt::Display for Instant {
    /// `YYYY-MM-DDTHH:MM:SS.fffffffffZ`, always UTC.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let date = self.utc_date();
        let of_day = self.secs.rem_euclid(SECONDS_PER_DAY);
        let (h, m, s) = (of_day / 3600, of_day / 60 % 60, of_day % 60);
        write!(f, "{date}T{h:02}:{m:02}:{s:02}.{:09}Z", self.nanos)
    }
}

/// A UTC calendar date: days since 1970-01-01.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub i32);

impl Date {
    /// Parses `YYYY-MM-DD`, rejecting dates that do not exist.
    pub fn parse(text: &str) -> Option<Date> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let year = digits(b, 0, 4)?;
        let month = digits(b, 5, 2)?;
        let day = digits(b, 8, 2)?;
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Date(days_from_civil(year, month, day) as i32))
    }

    /// The first instant of this date.
    pub fn start(self) -> Instant {
        Instant::from_parts(i64::from(self.0) * SECONDS_PER_DAY, 0)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = civil_from_days(i64::from(self.0));
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

impl serde::Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Parses one RFC 3339 timestamp under the contract's rules.
///
/// `YYYY-MM-DD`, `T`/`t`/space, `HH:MM:SS`, optional `.` and 1+ digits (past the ninth
/// truncated), then `Z`/`z`/`±HH:MM`. A leap second is accepted only at 23:59:60 UTC and
/// counts as 23:59:59.999999999 UTC.
pub fn parse(text: &str) -> Result<Instant, TimestampError> {
    parse_bytes(text.as_bytes())
}

/// [`parse`] on the bytes of a string (anything but ASCII is invalid anyway).
pub fn parse_bytes(b: &[u8]) -> Result<Instant, TimestampError> {
    parse_bytes_cached(b, &mut DayCache::default())
}

/// The last date [`parse_bytes_cached`] read (`YYYY-MM-DD`) and its day number: the lines
/// of a file share a few dates, and reading one (digits, calendar, day count) is a third
/// of a parse.
#[derive(Clone, Copy, Debug, Default)]
pub struct DayCache {
    date: Option<[u8; 10]>,
    days: i64,
}

/// [`parse_bytes`], reusing the day number of the date `cache` last saw: the same result.
pub fn parse_bytes_cached(b: &[u8], cache: &mut DayCache) -> Result<Instant, TimestampError> {
    use TimestampError::{Invalid, WithoutOffset};
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(Invalid);
    }
    let date: [u8; 10] = b[..10].try_into().map_err(|_| Invalid)?;
    // The day number, or `None` for a date that does not exist (reported after the
    // offset, as a parse without the cache does).
    let days = if cache.date == Some(date) {
        Some(cache.days)
    } else {
        let year = digits(b, 0, 4).ok_or(Invalid)?;
        let month = digits(b, 5, 2).ok_or(Invalid)?;
        let day = digits(b, 8, 2).ok_or(Invalid)?;
        let exists = (1..=12).contains(&month) && day != 0 && day <= days_in_month(year, month);
        let days = exists.then(|| days_from_civil(year, month, day));
        if let Some(days) = days {
            *cache = DayCache {
                date: Some(date),
                days,
            };
        }
        days
    };
    let hour = digits(b, 11, 2).ok_or(Invalid)?;
    let minute = digits(b, 14, 2).ok_or(Invalid)?;
    let second = digits(b, 17, 2).ok_or(Invalid)?;

    let mut pos = 19;
    let mut nanos: u32 = 0;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        while pos < b.len() && b[pos].is_ascii_digit() {
            if pos - start < 9 {
                nanos = nanos * 10 + u32::from(b[pos] - b'0');
            }
            pos += 1;
        }
        if pos == start {
            return Err(Invalid);
        }
        for _ in (pos - start).min(9)..9 {
            nanos *= 10;
        }
    }
    let offset_secs = match b.get(pos) {
        None => return Err(WithoutOffset),
        Some(b'Z' | b'z') if pos + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if pos + 6 == b.len() && b[pos + 3] == b':' => {
            let oh = digits(b, pos + 1, 2).ok_or(Invalid)?;
            let om = digits(b, pos + 4, 2).ok_or(Invalid)?;
            if oh > 23 || om > 59 {
                return Err(Invalid);
            }
            let magnitude = (oh * 3600 + om * 60) as i64;
            if *sign == b'-' { -magnitude } else { magnitude }
        }
        Some(_) => return Err(Invalid),
    };

    let Some(days) = days else {
        return Err(Invalid);
    };
    if hour > 23 || minute > 59 || second > 60 {
        return Err(Invalid);
    }
    let local_day_start = days * SECONDS_PER_DAY;
    let local = local_day_start + (hour * 3600 + minute * 60) as i64;
    if second == 60 {
        // Only 23:59:60 UTC is a leap second; it counts as the last nanosecond of 23:59:59.
        let utc_second_59 = local + 59 - offset_secs;
        if utc_second_59.rem_euclid(SECONDS_PER_DAY) != SECONDS_PER_DAY - 1 {
            return Err(Invalid);
        }
        return within_years(Instant::from_parts(utc_second_59, 999_999_999));
    }
    within_years(Instant::from_parts(
        local + second as i64 - offset_secs,
        nanos,
    ))
}

/// The first second of 0001-01-01 and the first of 10000-01-01, UTC.
const FIRST_SEC: i64 = -62_135_596_800;
const PAST_LAST_SEC: i64 = 253_402_300_800;

/// `instant` if its UTC date has four digits (0001–9999): a date outside cannot be an
/// `event_date` folder readers parse as a date (`event_date=10000-01-01` turns the
/// partition column into a string for the whole lake).
fn within_years(instant: Instant) -> Result<Instant, TimestampError> {
    if (FIRST_SEC..PAST_LAST_SEC).contains(&instant.secs()) {
        Ok(instant)
    } else {
        Err(TimestampError::Invalid)
    }
}

/// `len` ASCII digits of `b` starting at `at`, as a number.
fn digits(b: &[u8], at: usize, len: usize) -> Option<u32> {
    let slice = b.get(at..at + len)?;
    slice.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

fn is_leap_year(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Instant {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    #[test]
    fn separators_and_zones_are_the_contract_s() {
        let z = at("2024-03-01T10:00:00Z");
        assert_eq!(at("2024-03-01t10:00:00z"), z);
        assert_eq!(at("2024-03-01 10:00:00Z"), z);
        assert_eq!(at("2024-03-01T15:30:00+05:30"), z);
        assert_eq!(at("2024-03-01T06:00:00-04:00"), z);
        assert_eq!(at("2024-03-01T10:00:00-00:00"), z);
        assert_eq!(z.to_string(), "2024-03-01T10:00:00.000000000Z");
    }

    #[test]
    fn offsets_order_by_instant_not_by_string() {
        assert!(at("2024-03-01T10:15:00+05:30") < at("2024-03-01T05:00:00Z"));
    }

    #[test]
    fn fractions_keep_nine_digits_and_truncate_the_rest() {
        assert_eq!(at("2024-03-01T10:00:00.5Z").nanos(), 500_000_000);
        assert_eq!(at("2024-03-01T10:00:00.123456789Z").nanos(), 123_456_789);
        assert_eq!(
            at("2024-03-01T10:00:00.1234567899999Z").nanos(),
            123_456_789
        );
        assert!(at("2024-03-01T10:00:00.000000001Z") > at("2024-03-01T10:00:00Z"));
        assert_eq!(
            at("2024-03-01T10:00:00.9999999Z").micros() % 1_000_000,
            999_999
        );
    }

    #[test]
    fn missing_offset_is_its_own_error() {
        for text in [
            "2024-03-01 10:00:00",
            "2024-03-01T10:00:00",
            "2024-03-01T10:00:00.25",
        ] {
            assert_eq!(parse(text), Err(TimestampError::WithoutOffset), "{text}");
        }
    }

    #[test]
    fn impossible_or_malformed_instants_are_invalid() {
        for text in [
            "2024-02-30T10:00:00Z",
            "2023-02-29T10:00:00Z",
            "2024-13-01T10:00:00Z",
            "2024-00-01T10:00:00Z",
            "2024-03-01T24:00:00Z",
            "2024-03-01T10:60:00Z",
            "2024-03-01T10:00:60Z",
            "2024-03-01T10:00:00+24:00",
            "2024-03-01T10:00:00+05:60",
            "2024-03-01T10:00:00+0530",
            "2024-03-01T10:00:00.Z",
            "2024-03-01T10:00:00 Z",
            "2024-03-01T10:00:00Zjunk",
            "2024-03-01",
            "2024-03-01X10:00:00Z",
            "2024-3-01T10:00:00Z",
            "",
            "２０２４-03-01T10:00:00Z",
        ] {
            assert_eq!(parse(text), Err(TimestampError::Invalid), "{text}");
        }
    }

    #[test]
    fn leap_second_only_at_utc_midnight_edge() {
        let leap = at("2016-12-31T23:59:60Z");
        assert_eq!(
            leap,
            Instant::from_parts(at("2016-12-31T23:59:59Z").secs(), 999_999_999)
        );
        assert_eq!(at("2017-01-01T05:29:60+05:30"), leap);
        assert_eq!(leap.utc_date().to_string(), "2016-12-31");
        assert_eq!(
            parse("2016-12-31T23:59:60+01:00"),
            Err(TimestampError::Invalid)
        );
        assert_eq!(parse("2016-12-31T12:00:60Z"), Err(TimestampError::Invalid));
    }

    #[test]
    fn utc_date_follows_the_offset() {
        assert_eq!(
            at("2024-03-02T01:00:00+05:30").utc_date().to_string(),
            "2024-03-01"
        );
        assert_eq!(
            at("2024-02-29T23:00:00-04:00").utc_date().to_string(),
            "2024-03-01"
        );
        assert_eq!(
            at("1969-12-31T23:59:59.5Z").utc_date().to_string(),
            "1969-12-31"
        );
    }

    #[test]
    fn instants_whose_utc_date_leaves_years_0001_to_9999_are_invalid() {
        for text in [
            "9999-12-31T23:59:59-23:59",
            "9999-12-31T23:59:59.5-00:01",
            "0001-01-01T00:00:00+00:01",
            "0000-06-01T00:00:00Z",
        ] {
            assert_eq!(parse(text), Err(TimestampError::Invalid), "{text}");
        }
        for text in [
            "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:60Z",
            "9999-12-31T23:59:59+23:59",
            "0001-01-01T00:00:00Z",
            "0001-01-01T00:00:00-23:59",
        ] {
            assert!(parse(text).is_ok(), "{text}");
        }
        assert_eq!(at("0001-01-01T00:00:00Z").secs(), FIRST_SEC);
        assert_eq!(at("9999-12-31T23:59:59Z").secs(), PAST_LAST_SEC - 1);
    }

    #[test]
    fn dates_round_trip_through_day_numbers() {
        for text in [
            "0000-01-01",
            "1970-01-01",
            "2000-02-29",
            "2024-03-01",
            "9999-12-31",
        ] {
            let date = Date::parse(text).unwrap();
            assert_eq!(date.to_string(), text);
            assert_eq!(date.start().utc_date(), date);
        }
        assert_eq!(Date::parse("2024-02-30"), None);
    }

    #[test]
    fn micros_truncate_before_the_epoch_too() {
        let before = at("1969-12-31T23:59:59.9999999Z");
        assert_eq!(before.micros(), -1);
        assert_eq!(Instant::from_micros(-1).micros(), -1);
    }

    proptest::proptest! {
        /// One cache across a run of timestamps, as a worker's: every parse is what a
        /// parse without the cache gives, dates that exist or not, with an offset or not,
        /// digits or not, repeated or not, leap seconds included.
        #[test]
        fn the_day_cache_changes_no_result(
            stamps in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        "2024-03-01", "2024-02-29", "2023-02-29", "2024-02-30", "2024-13-01",
                        "2024-00-10", "2024-1a-01", "1999-12-31", "2024-03-01",
                    ]),
                    proptest::sample::select(vec!["T", " ", "t", "_"]),
                    proptest::sample::select(vec![
                        "10:00:00", "23:59:60", "24:00:00", "00:00:00.123456789123", "10:61:00",
                    ]),
                    proptest::sample::select(vec!["Z", "+05:30", "-04:00", "", "+24:00", "z"]),
                ),
                1..40,
            ),
        ) {
            let mut cache = DayCache::default();
            for (date, sep, time, zone) in stamps {
                let text = format!("{date}{sep}{time}{zone}");
                proptest::prop_assert_eq!(
                    parse_bytes_cached(text.as_bytes(), &mut cache),
                    parse_bytes(text.as_bytes()),
                    "{}", text
                );
            }
        }
    }
}
