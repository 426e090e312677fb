//! The tally against §2 and §3: model tests, properties and examples.

use super::*;
use crate::config::Config;
use crate::contract::{LineBytes, classify};
use proptest::prelude::*;
use std::path::Path;

fn config() -> Config {
    crate::config::fixtures::orders()
}

fn summarise(lines: &[String], schema: &Schema) -> Summary {
    let mut batch = Batch::default();
    for (i, line) in lines.iter().enumerate() {
        let outcome = classify(LineBytes::Kept(line.as_bytes()), schema);
        batch.push(i as u64 + 1, outcome, schema);
    }
    super::summarise(schema, &[batch]).unwrap()
}

/// (key, status) of each winner.
fn winners(summary: &Summary) -> Vec<(Value, Value)> {
    summary
        .winners
        .events()
        .map(|w| (w.record[1].clone(), w.record[2].clone()))
        .collect()
}

/// Events of few keys with few instants and seqs, so ties are common; every event
/// has a distinct id and status, so a winner names exactly one event.
fn events() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec((0i64..4, 0u32..3, prop::option::of(0i64..3), 0usize..3), 1..25).prop_map(
        |specs| {
            let offsets = ["Z", "+05:30", "-04:00"];
            specs
                .iter()
                .enumerate()
                .map(|(i, (key, minute, seq, offset))| {
                    let (hour, off) = match offsets[*offset] {
                        "Z" => (10, "Z"),
                        "+05:30" => (15, "+05:30"),
                        _ => (6, "-04:00"),
                    };
                    let minute = if *offset == 1 { minute + 30 } else { *minute };
                    let seq = seq.map(|s| format!(r#","seq":{s}"#)).unwrap_or_default();
                    format!(
                        r#"{{"event_id":"e{i}","order_id":{key},"status":"S{i}","updated_at":"2024-03-01T{hour:02}:{minute:02}:00{off}"{seq}}}"#
                    )
                })
                .collect()
        },
    )
}

/// One line of [`resent_events`]: `(event, key, minute, seq, status)`.
type Line = (usize, i64, u32, Option<i64>, u32);

/// Events resent as couriers' phones do: each line sends one of a few events again,
/// mostly as it was (a retry), sometimes with another status or key (a conflict). Keys,
/// minutes and seqs are few, so distinct events often tie.
fn resent_events() -> impl Strategy<Value = Vec<Line>> {
    let event = (0i64..3, 0u32..2, prop::option::of(0i64..2), 0u32..2);
    (
        prop::collection::vec(event, 1..7),
        prop::collection::vec((0usize..7, 0u32..10), 1..30),
    )
        .prop_map(|(events, picks)| {
            picks
                .into_iter()
                .map(|(pick, change)| {
                    let id = pick % events.len();
                    let (key, minute, seq, status) = events[id];
                    // One resend in ten carries another status, one another key.
                    match change {
                        0 => (id, key, minute, seq, status + 1),
                        1 => (id, key + 1, minute, seq, status),
                        _ => (id, key, minute, seq, status),
                    }
                })
                .collect()
        })
}

/// What a tally must report: (accepted, retries, conflict lines, keys,
/// ties_by_arrival, each key's winning line), straight from §2 and §3.
type Expected = (u64, u64, Vec<u64>, u64, u64, BTreeMap<i64, u64>);

fn by_the_contract(lines: &[Line]) -> Expected {
    let (mut accepted, mut retries, mut conflicts) = (0, 0, Vec::new());
    let mut first: HashMap<usize, Line> = HashMap::new();
    let mut events: Vec<(u64, Line)> = Vec::new();
    for (i, &line) in lines.iter().enumerate() {
        let number = i as u64 + 1;
        match first.get(&line.0) {
            None => {
                first.insert(line.0, line);
                events.push((number, line));
                accepted += 1;
            }
            Some(earlier) if *earlier == line => {
                accepted += 1;
                retries += 1;
            }
            Some(_) => conflicts.push(number),
        }
    }
    // Per key: ((minute, seq), line) of each event.
    type Ranked = Vec<((u32, Option<i64>), u64)>;
    let mut per_key: BTreeMap<i64, Ranked> = BTreeMap::new();
    for (number, (_, key, minute, seq, _)) in events {
        per_key
            .entry(key)
            .or_default()
            .push(((minute, seq), number));
    }
    let mut ties = 0;
    let mut winners = BTreeMap::new();
    for (key, mut ranked) in per_key {
        ranked.sort_by(|a, b| b.cmp(a));
        if ranked.len() > 1 && ranked[0].0 == ranked[1].0 {
            ties += 1;
        }
        winners.insert(key, ranked[0].1);
    }
    let keys = winners.len() as u64;
    (accepted, retries, conflicts, keys, ties, winners)
}

proptest! {
    #[test]
    fn retries_conflicts_and_ties_are_resolved_as_the_contract_says(
        lines in resent_events(),
        // Keys 1 apart stay in the dense index; 10¹⁵ apart move it to the hash table
        // from the second key on.
        spread in prop_oneof![Just(1i64), Just(1_000_000_000_000_000)],
    ) {
        let config = config();
        let schema = &config.schema;
        let text: Vec<String> = lines
            .iter()
            .map(|(id, key, minute, seq, status)| {
                let seq = seq.map(|s| format!(r#","seq":{s}"#)).unwrap_or_default();
                let key = key * spread;
                format!(
                    r#"{{"event_id":"e{id}","order_id":{key},"status":"S{status}","updated_at":"2024-03-01T10:0{minute}:00Z"{seq}}}"#
                )
            })
            .collect();
        let summary = summarise(&text, schema);
        let winners: BTreeMap<i64, u64> = summary
            .winners
            .events()
            .map(|w| (w.record[1].int().unwrap() / spread, w.line))
            .collect();
        let conflicts: Vec<u64> = summary.findings.iter().map(|f| f.line).collect();
        prop_assert!(summary.findings.iter().all(|f| f.breach && f.issue.reason == LineReason::Conflict));
        let c = &summary.counts;
        prop_assert_eq!(
            (c.accepted, c.retries, conflicts, c.keys, c.ties_by_arrival, winners),
            by_the_contract(&lines)
        );
    }

    #[test]
    fn winners_ignore_line_order_except_declared_ties(lines in events(), seed in any::<u64>()) {
        let config = config();
        let schema = &config.schema;
        let original = summarise(&lines, schema);
        let mut shuffled = lines.clone();
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let reordered = summarise(&shuffled, schema);
        prop_assert_eq!(original.counts.keys, reordered.counts.keys);
        prop_assert_eq!(&original.dates, &reordered.dates);
        if original.counts.ties_by_arrival == 0 {
            prop_assert_eq!(reordered.counts.ties_by_arrival, 0);
            prop_assert_eq!(winners(&original), winners(&reordered));
        }
    }

    #[test]
    fn retries_collapse_idempotently(lines in events(), copies in 1usize..4) {
        let config = config();
        let schema = &config.schema;
        let once = summarise(&lines, schema);
        let mut repeated = lines.clone();
        for _ in 0..copies {
            repeated.extend(lines.iter().cloned());
        }
        let many = summarise(&repeated, schema);
        prop_assert_eq!(many.counts.retries, (copies * lines.len()) as u64);
        prop_assert_eq!(many.counts.keys, once.counts.keys);
        prop_assert_eq!(winners(&many), winners(&once));
        prop_assert_eq!(many.findings.len(), 0);
    }

    #[test]
    fn classification_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let config = config();
        let _ = classify(LineBytes::Kept(&bytes), &config.schema);
    }

    #[test]
    fn classification_never_panics_on_json_shaped_text(text in r#"\{("[a-z_]{1,10}":("[^"]{0,12}"|-?[0-9]{1,25}|null|true|\[\]|\{\}|"20[0-9]{2}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,12})?(Z|[+-][0-9]{2}:[0-9]{2})?"),?){0,8}\}"#) {
        let config = config();
        let _ = classify(LineBytes::Kept(text.as_bytes()), &config.schema);
    }
}

/// The winners' keys (field 1) come out in the order `Value` sorts them.
fn assert_sorted_by_key(lines: &[String], schema: &Schema, mut keys: Vec<Value>) {
    let summary = summarise(lines, schema);
    let got: Vec<Value> = summary
        .winners
        .events()
        .map(|e| e.record[1].clone())
        .collect();
    keys.sort();
    assert_eq!(got, keys);
}

#[test]
fn winners_come_out_sorted_by_key_int_or_string() {
    let ints = [i64::MAX, -5, 3, -1, 0, i64::MIN, 256];
    let lines: Vec<String> = ints
        .iter()
        .map(|k| format!(r#"{{"event_id":"e{k}","order_id":{k},"status":"S","updated_at":"2024-03-01T10:00:00Z"}}"#))
        .collect();
    let keys = ints.iter().map(|&k| Value::Int(k)).collect();
    assert_sorted_by_key(&lines, &config().schema, keys);

    let text = r#"
product = "orders"
[schema]
key = "order_id"
order_by = "updated_at"
event_id = "event_id"
partition_by_date_of = "updated_at"
[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "string",    required = true }
updated_at = { type = "timestamp", required = true }
"#;
    let config = Config::parse(text, Path::new("/w.toml"), Path::new("/")).unwrap();
    let strings = [
        "b",
        "a",
        "ab",
        "",
        "B",
        "ä",
        "a long key that does not fit inline",
    ];
    let lines: Vec<String> = strings
        .iter()
        .map(|k| {
            format!(r#"{{"event_id":"e{k}","order_id":"{k}","updated_at":"2024-03-01T10:00:00Z"}}"#)
        })
        .collect();
    let keys = strings.iter().map(|&k| Value::Str(k.into())).collect();
    assert_sorted_by_key(&lines, &config.schema, keys);
}

#[test]
fn counts_written_before_stale_existed_still_read() {
    let old = r#"{"lines":5,"blank":0,"accepted":5,"rejected":0,"retries":0,"keys":3,"ties_by_arrival":0,"by_reason":{}}"#;
    let counts: Counts = serde_json::from_str(old).expect("an older run-log line reads");
    assert_eq!((counts.lines, counts.keys, counts.stale), (5, 3, 0));
}

#[test]
fn ties_by_arrival_counts_keys_not_events() {
    let config = config();
    let lines: Vec<String> = (0..3)
        .map(|i| format!(r#"{{"event_id":"e{i}","order_id":1,"status":"S","updated_at":"2024-03-01T10:00:00Z"}}"#))
        .collect();
    let summary = summarise(&lines, &config.schema);
    assert_eq!(summary.counts.ties_by_arrival, 1);
    assert_eq!(summary.winners.line(0), 3, "the later line wins a full tie");
}

/// String keys longer than the entries' 14-byte short key, sharing their first 20 bytes,
/// over enough keys that the key table grows (it rehashes them from their records): each
/// key's winner is its newest event, the later line on a tie.
#[test]
fn long_string_keys_that_share_a_prefix_rank_apart() {
    let mut config = config();
    let index = config.schema.key;
    let name = config.schema.fields[index].name.clone();
    config.schema.fields[index] =
        crate::contract::Field::new(name, crate::contract::FieldType::String, true);
    let schema = &config.schema;
    let mut lines = Vec::new();
    let mut want: BTreeMap<String, (u32, usize)> = BTreeMap::new();
    for i in 0..3000usize {
        let key = format!("order-0000000000000-{:05}", (i * 7919) % 1000);
        let minute = (i * 31) % 7;
        lines.push(format!(
            r#"{{"event_id":"e{i}","order_id":"{key}","status":"S{i}","updated_at":"2024-03-01T10:0{minute}:00Z"}}"#
        ));
        let line = lines.len();
        let best = want.entry(key).or_insert((minute as u32, line));
        if (minute as u32, line) >= *best {
            *best = (minute as u32, line);
        }
    }
    let summary = summarise(&lines, schema);
    let got: BTreeMap<String, u64> = summary
        .winners
        .events()
        .map(|w| (w.record[index].display(), w.line))
        .collect();
    let want: BTreeMap<String, u64> = want.into_iter().map(|(k, (_, l))| (k, l as u64)).collect();
    assert_eq!(got.len(), 1000);
    assert_eq!(got, want);
}

/// [`super::summarise`] as a plan tallies: `plan_only`, with a trail.
fn summarise_for_plan(schema: &Schema, batches: &[Batch]) -> Summary {
    let tally_all = |conflicts: Vec<u64>| {
        let known = conflicts.is_empty();
        let mut tally = Tally::rescan(schema, EventLog::default(), conflicts);
        tally.plan_only();
        if known {
            tally.keep_trail();
        }
        for batch in batches {
            tally.push_batch(batch);
        }
        tally.finish().unwrap()
    };
    match tally_all(Vec::new()) {
        Finish::Done(summary) => *summary,
        Finish::Rescan(conflicts) => match tally_all(conflicts) {
            Finish::Done(summary) => *summary,
            Finish::Rescan(_) => panic!("the same batches found other conflicts"),
        },
    }
}

proptest! {
    /// A plan keeps no winners' records, yet counts, finds and dates exactly what a
    /// landing's tally does; its trail's winners are the landing's winners.
    #[test]
    fn a_plan_counts_what_a_landing_counts(
        lines in prop::collection::vec(
            (0usize..12, 0i64..5, 0u32..4, prop::option::of(0i64..3), 0u32..3, 0u32..3),
            1..60,
        ),
        long_keys in any::<bool>(),
    ) {
        // String keys that share their first 14 bytes: a plan keeps their records, to
        // tell them apart.
        let config = crate::config::fixtures::orders_keyed_by(if long_keys { "string" } else { "int" });
        let schema = &config.schema;
        let mut batch = Batch::default();
        for (i, &(id, key, minute, seq, status, day)) in lines.iter().enumerate() {
            let seq = seq.map(|s| format!(r#","seq":{s}"#)).unwrap_or_default();
            let key = if long_keys {
                format!(r#""order-2024-03-0000000{key}""#)
            } else {
                key.to_string()
            };
            let line = format!(
                r#"{{"event_id":"e{id}","order_id":{key},"status":"S{status}","updated_at":"2024-03-0{}T10:0{minute}:00Z"{seq}}}"#,
                day + 1
            );
            let outcome = classify(LineBytes::Kept(line.as_bytes()), schema);
            batch.push(i as u64 + 1, outcome, schema);
        }
        let batches = [batch];
        let landing = super::summarise(schema, &batches).unwrap();
        let plan = summarise_for_plan(schema, &batches);
        prop_assert_eq!(&plan.counts, &landing.counts);
        prop_assert_eq!(&plan.findings, &landing.findings);
        prop_assert_eq!(&plan.dates, &landing.dates);
        let conflicts = landing.findings.iter().any(|f| f.issue.reason == LineReason::Conflict);
        if conflicts {
            // A rescan keeps the records: it names the field a conflict changes.
            prop_assert_eq!(plan.winners.len(), landing.winners.len());
            prop_assert!(plan.events_by_key.is_none());
        } else {
            prop_assert_eq!(plan.winners.len(), 0);
            let events = plan.events_by_key.expect("a trail without conflicts");
            let kept: Vec<u64> = events
                .entries
                .iter()
                .filter(|&&e| e & EventsByKey::KEPT != 0)
                .map(|e| e & EventsByKey::LINE)
                .collect();
            let lines: Vec<u64> = landing.winners.events().map(|w| w.line).collect();
            prop_assert_eq!(kept, lines);
            let names: Vec<&str> = events
                .name_ends
                .iter()
                .scan(0, |start, &end| {
                    let name = &events.names[*start..end];
                    *start = end;
                    Some(name)
                })
                .collect();
            let keys: Vec<String> = landing
                .winners
                .events()
                .map(|w| w.record[schema.key].display())
                .collect();
            prop_assert_eq!(names, keys);
            let ties = events.flags.iter().filter(|&&f| f & EventsByKey::TIE != 0).count();
            prop_assert_eq!(ties as u64, landing.counts.ties_by_arrival);
            let retries = events.entries.iter().filter(|&&e| e & EventsByKey::REPEAT != 0).count();
            prop_assert_eq!(retries as u64, landing.counts.retries);
        }
    }
}
