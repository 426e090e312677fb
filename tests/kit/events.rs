//! Deterministic order-status events in the sample schema, shaped like
//! `bench/gen_events.py`'s: [`Events`] gives JSONL lines (~0.29 keys per line, 15%
//! identical retries, 2% same-instant ties decided by `seq`, `Z` / `+05:30` / `-04:00`
//! offsets, second to nanosecond fractions, `seq` on ~90%, `courier_id` / `city`
//! sometimes), every good instant's UTC date in `[2024-03-01, +days)`, optionally with
//! rejects spread evenly over eight reject kinds, shuffled within bursts of 64 lines.
//! [`generate`] writes such a file; [`event`] and [`event_seq`] write one line by hand.
//! Same parameters, same bytes, on every machine; shared by the tests and the benches.

use std::path::Path;

use wharf::contract::Date;

use super::rng::Rng;

const NS: i64 = 1_000_000_000;
const DAY_SECS: i64 = 86_400;
/// 2024-03-01, in days since 1970-01-01: the first day the good events cover.
const START_DAY: i64 = 19_783;
const KEYS_RATIO: f64 = 0.29;
const RETRY_RATE: f64 = 0.15;
const TIE_RATE: f64 = 0.02;
const MEAN_GAP_NS: f64 = 25.0 * 60.0 * 1e9;
const COURIERS: u64 = 5000;
const RING: usize = 8192;
const BURST: usize = 64;
const STATUS_PATH: [&str; 5] = ["PENDING", "PAID", "PACKED", "SHIPPED", "DELIVERED"];
const CITIES: [&str; 30] = [
    "Mumbai",
    "Delhi",
    "Bengaluru",
    "Pune",
    "Chennai",
    "Kolkata",
    "Hyderabad",
    "New York",
    "Boston",
    "Toronto",
    "Montréal",
    "São Paulo",
    "Bogotá",
    "Lima",
    "London",
    "Paris",
    "Zürich",
    "Kraków",
    "Berlin",
    "Madrid",
    "Lisbon",
    "Oslo",
    "Tokyo",
    "Seoul",
    "Singapore",
    "Sydney",
    "Nairobi",
    "Lagos",
    "Cairo",
    "Dubai",
];
/// (suffix, offset in seconds), picked 60% / 20% / 20%.
const OFFSETS: [(&str, i64); 3] = [("Z", 0), ("+05:30", 19_800), ("-04:00", -14_400)];

/// What to generate: `count` lines over `days` UTC days from 2024-03-01, a fraction
/// `reject_rate` of them rejects, from random seed `seed`.
#[derive(Clone, Copy, Debug)]
pub struct Events {
    pub count: usize,
    pub days: u32,
    pub seed: u64,
    pub reject_rate: f64,
}

impl Events {
    /// `count` lines, one day, seed 1, no rejects.
    pub fn new(count: usize) -> Events {
        Events {
            count,
            days: 1,
            seed: 1,
            reject_rate: 0.0,
        }
    }

    pub fn days(self, days: u32) -> Events {
        Events { days, ..self }
    }

    pub fn seed(self, seed: u64) -> Events {
        Events { seed, ..self }
    }

    pub fn rejects(self, reject_rate: f64) -> Events {
        Events {
            reject_rate,
            ..self
        }
    }

    /// The lines (no terminators), in arrival order.
    pub fn lines(&self) -> Vec<Vec<u8>> {
        let count = self.count;
        let mut rng = Rng::new(self.seed);
        let rejects = (count as f64 * self.reject_rate) as usize;
        let retries = (count as f64 * RETRY_RATE) as usize;
        let base = count - rejects - retries;
        let keys = ((count as f64 * KEYS_RATIO) as usize).clamp(1, base.max(1));
        let span = i64::from(self.days.max(1)) * DAY_SECS * NS;
        let mut events = base_events(&mut rng, keys, base, span).into_iter();
        let every = count / rejects.max(1);
        let mut ring: Vec<(Event, usize)> = Vec::with_capacity(RING);
        let (mut retry_left, mut base_left, mut next_id, mut reject_n) = (retries, base, 0u64, 0);
        let mut out = Vec::with_capacity(count);
        for slot in 0..count {
            if rejects > 0 && reject_n < rejects && slot % every == every / 2 {
                let order_id = 10_000_000 + 3 * rng.below(keys as u64) as i64;
                out.push(reject(reject_n, order_id));
                reject_n += 1;
                continue;
            }
            let total_left = (retry_left + base_left) as f64;
            let retry = retry_left > 0
                && !ring.is_empty()
                && (base_left == 0 || rng.unit() * total_left < retry_left as f64);
            let fresh = if retry { None } else { events.next() };
            match fresh {
                Some(mut event) => {
                    event.id = next_id;
                    next_id += 1;
                    base_left -= 1;
                    let offset = pick_offset(&mut rng);
                    out.push(event.render(offset));
                    if ring.len() < RING {
                        ring.push((event, offset));
                    } else {
                        ring[(next_id as usize) % RING] = (event, offset);
                    }
                }
                None => {
                    // An identical retry: same values, half of them written in another offset.
                    let (event, offset) = &ring[rng.below(ring.len() as u64) as usize];
                    let offset = match rng.unit() < 0.5 {
                        true => *offset,
                        false => (offset + 1 + rng.below(2) as usize) % 3,
                    };
                    out.push(event.render(offset));
                    retry_left = retry_left.saturating_sub(1);
                }
            }
        }
        // Arrival order is time order shuffled within bursts (Fisher–Yates per burst).
        for burst in out.chunks_mut(BURST) {
            for i in (1..burst.len()).rev() {
                burst.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        out
    }

    /// Writes the lines, each followed by `\n`, to `out`.
    pub fn write(&self, out: &Path) {
        let mut bytes = Vec::new();
        for line in self.lines() {
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
        }
        std::fs::write(out, bytes).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}

/// Writes `events` lines over `days` days from seed `seed`, no rejects, to `out`.
pub fn generate(out: &Path, events: u64, days: u32, seed: u64) {
    Events::new(events as usize)
        .days(days)
        .seed(seed)
        .write(out);
}

/// One event line of the sample schema.
pub fn event(id: &str, order: i64, status: &str, at: &str) -> String {
    format!(r#"{{"event_id":"{id}","order_id":{order},"status":"{status}","updated_at":"{at}"}}"#)
}

/// `n` events of orders `0..n`, one each, all of `status` at 10:00 UTC on `date`, ids
/// `<prefix><i>`: a day of distinct keys for the guards' tests.
pub fn one_day(n: usize, date: &str, prefix: &str, status: &str) -> Vec<String> {
    (0..n)
        .map(|i| {
            event(
                &format!("{prefix}{i}"),
                i as i64,
                status,
                &format!("{date}T10:00:00Z"),
            )
        })
        .collect()
}

/// One event line with a `seq`.
pub fn event_seq(id: &str, order: i64, status: &str, at: &str, seq: i64) -> String {
    format!(
        r#"{{"event_id":"{id}","order_id":{order},"status":"{status}","updated_at":"{at}","seq":{seq}}}"#
    )
}

fn pick_offset(rng: &mut Rng) -> usize {
    match rng.unit() {
        x if x < 0.6 => 0,
        x if x < 0.8 => 1,
        _ => 2,
    }
}

/// One good event before it is written.
#[derive(Clone)]
struct Event {
    id: u64,
    order_id: i64,
    status: &'static str,
    /// Nanoseconds since the epoch, already truncated to the written precision.
    at: i64,
    /// Fraction digits written: 0, 3, 6 or 9.
    digits: u8,
    seq: Option<u64>,
    courier: Option<u64>,
    city: Option<&'static str>,
}

impl Event {
    fn render(&self, offset: usize) -> Vec<u8> {
        let mut line = format!(
            r#"{{"event_id":"e{:09}","order_id":{},"status":"{}","updated_at":"{}""#,
            self.id,
            self.order_id,
            self.status,
            stamp(self.at, self.digits, offset)
        );
        if let Some(seq) = self.seq {
            line.push_str(&format!(r#","seq":{seq}"#));
        }
        if let Some(courier) = self.courier {
            line.push_str(&format!(r#","courier_id":"c{courier:04}""#));
        }
        if let Some(city) = self.city {
            line.push_str(&format!(r#","city":"{city}""#));
        }
        line.push('}');
        line.into_bytes()
    }
}

/// RFC 3339 text of instant `at` (ns since the epoch) in offset `offset`.
fn stamp(at: i64, digits: u8, offset: usize) -> String {
    let (suffix, offset_secs) = OFFSETS[offset];
    let local = at.div_euclid(NS) + offset_secs;
    let sub = at.rem_euclid(NS);
    let date = Date(local.div_euclid(DAY_SECS) as i32);
    let second = local.rem_euclid(DAY_SECS);
    let fraction = match digits {
        0 => String::new(),
        3 => format!(".{:03}", sub / 1_000_000),
        6 => format!(".{:06}", sub / 1_000),
        _ => format!(".{sub:09}"),
    };
    format!(
        "{date}T{:02}:{:02}:{:02}{fraction}{suffix}",
        second / 3600,
        second / 60 % 60,
        second % 60
    )
}

/// Every key's lifecycle inside `span` ns from the start day, in UTC time order (ids not
/// yet assigned).
fn base_events(rng: &mut Rng, keys: usize, base: usize, span: i64) -> Vec<Event> {
    let mut counts = vec![1usize; keys];
    for _ in keys..base {
        counts[rng.below(keys as u64) as usize] += 1;
    }
    let multi = counts.iter().filter(|&&c| c > 1).count().max(1);
    let p_tie = (TIE_RATE * keys as f64 / multi as f64).min(1.0);
    let end = span - 1;
    let mut events = Vec::with_capacity(base);
    for (k, &n) in counts.iter().enumerate() {
        let t0 =
            ((span as f64 * (k as f64 + rng.unit()) / keys as f64) as i64).min(end - n as i64 * NS);
        let order_id = 10_000_000 + 3 * k as i64 + rng.below(3) as i64;
        let cancelled = n > 1 && rng.unit() < 0.07;
        let courier = rng.below(COURIERS);
        let city = CITIES[rng.below(CITIES.len() as u64) as usize];
        let tie_at = if n > 1 && rng.unit() < p_tie {
            1 + rng.below(n as u64 - 1) as usize
        } else {
            0
        };
        let mut gaps: Vec<i64> = (0..n)
            .map(|i| match i {
                0 => 0,
                _ => NS + (-(1.0 - rng.unit()).ln() * MEAN_GAP_NS) as i64,
            })
            .collect();
        let total: i64 = gaps.iter().sum();
        let room = end - t0;
        if total > room {
            // Compress the lifecycle to end inside the span.
            for gap in &mut gaps {
                *gap = (i128::from(*gap) * i128::from(room) / i128::from(total)) as i64;
            }
        }
        let mut chain = t0;
        let mut previous: Option<(i64, u8)> = None;
        for (i, gap) in gaps.iter().enumerate() {
            chain += gap;
            let tie = i == tie_at && i > 0;
            let seq_present = tie || i + 1 == tie_at || rng.unit() < 0.9;
            let (at, digits) = match previous {
                Some(same) if tie => same,
                _ => {
                    // 45% seconds, 20% millis, 25% micros, 10% nanos; a gap under a
                    // second keeps nanos so instants stay distinct.
                    let x = if i > 0 && *gap < NS { 0.99 } else { rng.unit() };
                    let (unit, digits) = match x {
                        x if x < 0.45 => (NS, 0),
                        x if x < 0.65 => (1_000_000, 3),
                        x if x < 0.9 => (1_000, 6),
                        _ => (1, 9),
                    };
                    (chain - chain % unit, digits)
                }
            };
            previous = Some((at, digits));
            let last_cancelled = cancelled && i == n - 1;
            events.push(Event {
                id: 0,
                order_id,
                status: if last_cancelled {
                    "CANCELLED"
                } else {
                    STATUS_PATH[i.min(4)]
                },
                at: (START_DAY * DAY_SECS * NS) + at,
                digits,
                seq: seq_present.then_some(i as u64 + 1),
                courier: (!last_cancelled && i >= 2 && rng.unit() < 0.9).then_some(courier),
                city: (rng.unit() < 0.85).then_some(city),
            });
        }
    }
    // Stable: events of one instant keep their generation order.
    events.sort_by_key(|e| e.at);
    events
}

/// Reject line number `n`, of kind `n % 8`.
fn reject(n: usize, order_id: i64) -> Vec<u8> {
    let id = format!("x{n:09}");
    let day = "2024-03-01";
    let line = match n % 8 {
        0 => format!(
            r#"{{"event_id":"{id}","order_id":{order_id},"updated_at":"{day}T10:00:00Z","seq":1}}"#
        ),
        1 => "[1,2]".to_owned(),
        2 => format!(
            r#"{{"event_id":"{id}","order_id":"{order_id}","status":"PAID","updated_at":"{day}T10:00:00Z"}}"#
        ),
        3 => format!(
            r#"{{"event_id":"{id}","order_id":{order_id},"status":"PAID","updated_at":"{day}T10:00:00"}}"#
        ),
        4 => format!(
            r#"{{"event_id":"{id}","order_id":{order_id},"status":"PAID","updated_at":"2024-02-30T10:00:00Z"}}"#
        ),
        5 => format!(
            r#"{{"event_id":"{id}","order_id":{order_id},"status":"PAID","updated_at":"{day}T10:00"#
        ),
        6 => format!(
            r#"{{"event_id":"{id}","order_id":{order_id},"status":"PAID","status":"PACKED","updated_at":"{day}T10:00:00Z"}}"#
        ),
        _ => {
            let mut bytes =
                format!(r#"{{"event_id":"{id}","order_id":{order_id},"status":"PA"#).into_bytes();
            bytes.extend_from_slice(b"\xff\xfe");
            bytes.extend_from_slice(format!(r#"ID","updated_at":"{day}T10:00:00Z"}}"#).as_bytes());
            return bytes;
        }
    };
    line.into_bytes()
}

/// Events of `keys` orders (order ids `3 × key`) over a day, in arrival order: each order
/// a few status changes, and every seventh crossing midnight late (its date moves, §10.3).
/// Merge mode's micro-batch proofs cut it into batches.
pub fn day_of_orders(keys: i64, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let statuses = ["PENDING", "PAID", "SHIPPED", "DELIVERED"];
    let mut lines = Vec::new();
    for step in 0..4i64 {
        for key in 1..=keys {
            if step > 0 && rng.below(3) == 0 {
                continue;
            }
            let (day, hour) = if step == 3 && key % 7 == 0 {
                (2, 1)
            } else {
                (1, 8 + step * 4)
            };
            let at = format!("2024-03-0{day}T{hour:02}:{:02}:00Z", rng.below(60));
            let status = statuses[step as usize];
            lines.push(event(&format!("e{step}-{key}"), key * 3, status, &at));
        }
    }
    lines
}

/// Merge mode's micro-batches (CONTRACT.md §10), in landing order, each as (name,
/// lines): then 2 is updated in place, 3 moves to the next day, 5 is new and 1's event
/// is late; then 1 and 2 leave the first day, which empties.
pub fn merge_batches() -> Vec<(&'static str, Vec<String>)> {
    let e = event;
    vec![
        (
            "b1.jsonl",
            vec![
                e("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
                e("e2", 2, "PENDING", "2024-03-01T10:01:00Z"),
                e("e3", 3, "PENDING", "2024-03-01T10:02:00Z"),
                e("e4", 4, "PENDING", "2024-03-02T09:00:00Z"),
            ],
        ),
        (
            "b2.jsonl",
            vec![
                e("e5", 2, "PAID", "2024-03-01T11:00:00Z"),
                e("e6", 3, "PAID", "2024-03-02T08:00:00Z"),
                e("e7", 5, "PENDING", "2024-03-02T10:00:00Z"),
                e("e8", 1, "PAID", "2024-03-01T09:00:00Z"),
            ],
        ),
        (
            "b3.jsonl",
            vec![
                e("e9", 1, "SHIPPED", "2024-03-03T07:00:00Z"),
                e("e10", 2, "SHIPPED", "2024-03-03T07:30:00Z"),
                e("e11", 4, "PAID", "2024-03-02T12:00:00Z"),
            ],
        ),
    ]
}

/// Lines with retries, ties on instant (arrival decides), a tiebreak, a reject and a
/// blank, across two dates: a set cut from them anywhere must land as the whole does.
pub fn tricky_lines() -> Vec<String> {
    vec![
        event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        event("e2", 2, "PAID", "2024-03-01T10:05:00Z"),
        event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        event("e3", 1, "PAID", "2024-03-01T10:15:00Z"),
        event("e4", 3, "TIE_A", "2024-03-01T10:20:00Z"),
        "not json".to_owned(),
        event("e5", 3, "TIE_B", "2024-03-01T10:20:00Z"),
        event("e3", 1, "PAID", "2024-03-01T10:15:00Z"),
        event_seq("e6", 2, "SHIPPED", "2024-03-01T11:00:00Z", 2),
        event_seq("e7", 2, "SHIPPED_TOO", "2024-03-01T11:00:00Z", 1),
        "   ".to_owned(),
        event("e8", 4, "NEW", "2024-03-02T00:00:00Z"),
        event("e9", 4, "TIE_B", "2024-03-02T00:00:00Z"),
    ]
}
