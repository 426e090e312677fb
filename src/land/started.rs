//! [`Started`]: the instant a landing began, read once from both clocks. The wall clock
//! names the start in the events that report the landing; the monotonic clock measures
//! how long it took, so the end is the start plus that span and never sorts before it,
//! whatever the wall clock does meanwhile (an NTP step, a leap smear).

use std::time::{Duration, Instant, SystemTime};

/// When a landing began, on the wall clock and on the monotonic clock.
#[derive(Clone, Copy, Debug)]
pub struct Started {
    wall: SystemTime,
    at: Instant,
}

/// The times' precision: one microsecond, as the run log writes them.
const TICK: Duration = Duration::from_micros(1);

impl Started {
    /// Now, as the start of a landing.
    pub fn now() -> Started {
        Started {
            wall: SystemTime::now(),
            at: Instant::now(),
        }
    }

    /// How long since the start, on the monotonic clock.
    pub fn elapsed(&self) -> Duration {
        self.at.elapsed()
    }

    /// The start, RFC 3339 with microseconds.
    pub fn timestamp(&self) -> String {
        super::timestamp_of(self.wall)
    }

    /// The end of a landing that took `took` from this start: at least one microsecond
    /// after [`Started::timestamp`], so a start and its end never share a time.
    pub fn end_timestamp(&self, took: Duration) -> String {
        super::timestamp_of(self.wall + took.max(TICK))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(wall_nanos: u64) -> Started {
        Started {
            wall: SystemTime::UNIX_EPOCH + Duration::from_nanos(wall_nanos),
            at: Instant::now(),
        }
    }

    #[test]
    fn an_end_sorts_strictly_after_its_start() {
        // A start 1 ns before a microsecond boundary, ends 0 ns to 1 ms later.
        for wall in [1_700_000_000_000_000_000, 1_700_000_000_000_000_999] {
            let started = at(wall);
            let start = started.timestamp();
            for took in [0, 1, 999, 1_000, 1_000_000] {
                let end = started.end_timestamp(Duration::from_nanos(took));
                // Same width, so text order is time order.
                assert_eq!(start.len(), end.len());
                assert!(start < end, "{start} !< {end} (took {took} ns)");
            }
        }
    }

    #[test]
    fn the_end_is_the_start_plus_the_span() {
        let started = at(1_700_000_000_000_000_000);
        assert_eq!(started.timestamp(), "2023-11-14T22:13:20.000000Z");
        assert_eq!(
            started.end_timestamp(Duration::from_millis(2_700)),
            "2023-11-14T22:13:22.700000Z"
        );
    }
}
