use super::*;
use crate::engine::{Engine, LocalEngine};
use crate::plan::{DecideOptions, Plan};

/// The tab's data as a plan that kept none makes it: the input read for it.
fn build(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Ranked> {
    let events = crate::engine::events_by_key(config, path, progress)?;
    Ranked::new(config, path, events, progress)
}

fn samples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// `path` planned by a planning local engine that keeps every key's events, and the
/// Ranked tab's data made from them (`None`: the plan kept none).
fn from_plan(config: &Config, path: &Path) -> (Plan, Option<Ranked>) {
    let mut engine = LocalEngine::planning(true);
    let options = DecideOptions::default();
    let plan = crate::land::plan_input(config, &mut engine, path, options, &mut |_| true).unwrap();
    let ranked = engine
        .take_events_by_key()
        .map(|events| Ranked::new(config, path, events, &mut |_, _| true).unwrap());
    (plan, ranked)
}

/// Every row of the tab, read back as the screen reads them.
fn all_rows(ranked: &Ranked, config: &Config) -> Vec<RankedRow> {
    let rows = ranked.filter("");
    ranked.read_rows(config, &rows, 0..rows.len()).unwrap()
}

#[test]
fn the_courier_burst_ranks_with_reasons() {
    let root = samples();
    let config = Config::load(&root.join("wharf.toml")).unwrap();
    let path = root.join("inbox/02-courier-burst.jsonl");
    let ranked = build(&config, &path, &mut |_, _| true).unwrap();
    let (_, planned) = from_plan(&config, &path);
    assert_eq!(
        planned.as_ref(),
        Some(&ranked),
        "the plan's read and the tab's agree"
    );
    let keys: Vec<&str> = (0..ranked.keys()).map(|k| ranked.key(k)).collect();
    assert_eq!(keys, ["201", "202", "205"]);
    assert_eq!(ranked.winner(0), Some(2));
    let all = all_rows(&ranked, &config);
    let notes: Vec<(Option<u32>, u64, Note)> =
        all.iter().map(|e| (e.rank, e.line, e.note)).collect();
    assert_eq!(
        notes[..ranked.len_of(0)],
        [
            (Some(1), 2, Note::Kept),
            (Some(2), 3, Note::Lost(LostBecause::Older)),
            (Some(3), 1, Note::Lost(LostBecause::Older)),
            (None, 4, Note::Retry { of: 2 }),
        ]
    );
    assert_eq!(
        all[ranked.len_of(0) + 1].note,
        Note::Lost(LostBecause::LowerTiebreak)
    );
    let rows = ranked.filter("");
    assert_eq!(rows.len(), (0..3).map(|k| ranked.len_of(k)).sum::<usize>());
    // Every key's rows, without a list of its own, and a filter's, row for row.
    let mut i = 0;
    for k in 0..ranked.keys() {
        for r in 0..ranked.len_of(k) {
            assert_eq!(rows.at(i), Some((k, r)));
            assert_eq!(ranked.filter("2").at(i), Some((k, r)));
            i += 1;
        }
    }
    assert_eq!(rows.at(i), None);
    assert_eq!(
        rows.next_key(0, true, |k| k == 2),
        Some(i - ranked.len_of(2))
    );
    assert_eq!(rows.next_key(i - 1, false, |k| k == 0), Some(0));
    assert!(Ranked::default().filter("").is_empty() && Rows::default().is_empty());
    let read = ranked.read_rows(&config, &rows, 0..2).unwrap();
    assert_eq!(read[0].instant, "2024-03-02T08:15:00Z");
    assert!(
        read[0].fields.contains("status=DELIVERED"),
        "{}",
        read[0].fields
    );
    assert_eq!((read[1].line, read[1].rank), (3, Some(2)));
    let only = ranked.filter("05");
    assert_eq!(only.at(0), Some((2, 0)));
    assert_eq!(only.len(), ranked.len_of(2));
    assert!(
        ranked.filter("12").is_empty(),
        "a match across two keys is none"
    );
    assert_eq!(ranked.filter("20").len(), rows.len());
}

/// A config of the samples' product, its key an int (with `seq` as tiebreak) or a
/// string (with none).
fn config_in(dir: &Path, string_keys: bool) -> Config {
    let mut text = std::fs::read_to_string(samples().join("wharf.toml")).unwrap();
    if string_keys {
        text = text.replace("tiebreak = \"seq\"\n", "").replace(
            "order_id   = { type = \"int\"",
            "order_id   = { type = \"string\"",
        );
    }
    let path = dir.join("wharf.toml");
    std::fs::write(&path, text).unwrap();
    Config::load(&path).unwrap()
}

/// A file of `n` lines from `seed`: few keys and instants (ties), `seq` present or not,
/// offsets on every timestamp, identical retries (some at another offset), conflicts,
/// rejects and blank lines.
fn generated(seed: u64, n: usize, string_keys: bool) -> String {
    let mut state = seed | 1;
    let mut next = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    let offsets = [0i64, 19800, -10800, 3600];
    let render = |secs: i64, offset: i64| {
        let local = chrono::DateTime::from_timestamp(1_709_280_000 + secs + offset, 0).unwrap();
        let zone = match offset {
            0 => "Z".to_owned(),
            o => format!(
                "{}{:02}:{:02}",
                if o < 0 { '-' } else { '+' },
                o.abs() / 3600,
                o.abs() % 3600 / 60
            ),
        };
        format!("{}{zone}", local.naive_utc().format("%Y-%m-%dT%H:%M:%S"))
    };
    // (id, key, status, secs, seq) of every event written so far.
    let mut events: Vec<(u64, u64, u64, i64, Option<u64>)> = Vec::new();
    let mut text = String::new();
    for i in 0..n as u64 {
        let roll = next(100);
        let event = match roll {
            0..=3 => {
                text.push_str(if roll < 2 { "\n" } else { "{not json\n" });
                continue;
            }
            4..=17 if !events.is_empty() => events[next(events.len() as u64) as usize],
            18..=20 if !events.is_empty() => {
                let mut e = events[next(events.len() as u64) as usize];
                e.2 += 1 + next(3);
                e
            }
            _ => (
                i,
                next(12),
                next(4),
                next(6) as i64 * 60,
                (next(3) > 0).then(|| next(3)),
            ),
        };
        let (id, key, status, secs, seq) = event;
        events.push(event);
        let key = if string_keys {
            format!("\"k{key}\"")
        } else {
            key.to_string()
        };
        let seq = seq.map(|s| format!(",\"seq\":{s}")).unwrap_or_default();
        let at = render(secs, offsets[next(4) as usize]);
        text.push_str(&format!(
            "{{\"event_id\":\"e{id}\",\"order_id\":{key},\"status\":\"S{status}\",\"updated_at\":\"{at}\"{seq}}}\n"
        ));
    }
    text
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The tab shows what the plan decided: its rank-1 rows are the plan's winners, key
    /// for key and line for line, in the published order; its retries, conflicts and
    /// ties are the plan's counts and findings.
    #[test]
    fn rank_one_rows_are_the_plans_winners(
        seed in proptest::prelude::any::<u64>(),
        n in 1usize..160,
        string_keys in proptest::prelude::any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path(), string_keys);
        let path = dir.path().join("input.jsonl");
        let text = generated(seed, n, string_keys);
        std::fs::write(&path, &text).unwrap();
        let schema = &config.schema;
        let mut batches = Vec::new();
        for (i, chunk) in text.split_terminator('\n').collect::<Vec<_>>().chunks(7).enumerate() {
            let mut batch = crate::plan::Batch::default();
            for (j, line) in chunk.iter().enumerate() {
                let number = (i * 7 + j) as u64 + 1;
                batch.classify(number, LineBytes::Kept(line.as_bytes()), schema);
            }
            batches.push(batch);
        }
        let summary = crate::engine::local::tally::summarise(schema, &batches).unwrap();
        let winners: Vec<(String, u64)> = summary
            .winners
            .events()
            .map(|e| (e.record[schema.key].display(), e.line))
            .collect();

        let ranked = build(&config, &path, &mut |_, _| true).unwrap();
        // The plan's own read keeps the same data, for an input without conflicts.
        let (plan, planned) = from_plan(&config, &path);
        proptest::prop_assert_eq!(plan.counts.keys, summary.counts.keys);
        match planned {
            Some(planned) => proptest::prop_assert_eq!(&planned, &ranked),
            None => {
                let conflict = crate::contract::LineReason::Conflict;
                let conflicts = summary.findings.iter().any(|f| f.issue.reason == conflict);
                proptest::prop_assert!(conflicts, "only an input with conflicts keeps no trail");
            }
        }
        // Rank 1 as the screen ranks it, from the lines read back.
        let all = all_rows(&ranked, &config);
        let mut at = 0;
        let mut rank_one = Vec::new();
        for k in 0..ranked.keys() {
            let rows = &all[at..at + ranked.len_of(k)];
            at += rows.len();
            if let Some(first) = rows.first().filter(|r| r.rank == Some(1)) {
                proptest::prop_assert_eq!(first.note, Note::Kept);
                proptest::prop_assert_eq!(Some(first.line), ranked.winner(k));
                rank_one.push((ranked.key(k).to_owned(), first.line));
            }
            let ranks: Vec<u32> = rows.iter().filter_map(|r| r.rank).collect();
            let want: Vec<u32> = (1..=ranks.len() as u32).collect();
            proptest::prop_assert_eq!(ranks, want);
        }
        proptest::prop_assert_eq!(&rank_one, &winners);
        let repeats = &ranked.index().repeats;
        proptest::prop_assert_eq!(repeats.retries.len() as u64, summary.counts.retries);
        let conflicts: Vec<u64> = summary
            .findings
            .iter()
            .filter(|f| f.issue.reason == crate::contract::LineReason::Conflict)
            .map(|f| f.line)
            .collect();
        let ours: Vec<u64> = repeats.conflicts.iter().map(|c| c.0).collect();
        proptest::prop_assert_eq!(ours, conflicts);
        let ties = (0..ranked.keys()).filter(|&k| ranked.tie(k)).count() as u64;
        proptest::prop_assert_eq!(ties, summary.counts.ties_by_arrival);
        // Every event is shown once: accepted lines, conflicts included.
        let shown: usize = (0..ranked.keys()).map(|k| ranked.len_of(k)).sum();
        proptest::prop_assert_eq!(shown as u64, summary.counts.accepted + repeats.conflicts.len() as u64);
    }
}

/// A [`Ranked`] of `keys` as shown, one event each.
fn of_keys(keys: &[String]) -> Ranked {
    let mut names = String::new();
    let mut name_ends = Vec::new();
    for key in keys {
        names.push_str(key);
        name_ends.push(names.len());
    }
    let events = EventsByKey {
        names,
        name_ends,
        starts: (0..=keys.len() as u64).collect(),
        entries: (1..=keys.len() as u64)
            .map(|l| l | EventsByKey::KEPT)
            .collect(),
        flags: vec![0; keys.len()],
        repeats: Default::default(),
    };
    let config = crate::config::fixtures::orders();
    Ranked::with_index(&config, events, LineIndex::default())
}

proptest::proptest! {
    /// The filter lets through exactly the keys that contain it, whatever its matches
    /// across two keys and its repeats inside one.
    #[test]
    fn the_filter_lets_through_the_keys_that_contain_it(
        keys in proptest::collection::vec("[12a]{0,5}", 0..40),
        filter in "[12a]{1,3}",
    ) {
        let ranked = of_keys(&keys);
        let rows = ranked.filter(&filter);
        let shown: Vec<usize> = (0..rows.len()).filter_map(|i| rows.at(i)).map(|(k, _)| k).collect();
        let want: Vec<usize> = (0..keys.len()).filter(|&k| keys[k].contains(&filter)).collect();
        proptest::prop_assert_eq!(shown, want);
    }
}

#[test]
fn rank_one_says_what_the_input_comes_to() {
    for (fate, words) in [
        (Fate::WouldPublish, "rank 1 (would publish)"),
        (Fate::Published, "kept (published)"),
        (Fate::Refused, "rank 1 (refused: nothing publishes)"),
    ] {
        assert_eq!(Note::Kept.describe(fate, &|l| format!("line {l}")), words);
    }
    assert_eq!(
        Note::Retry { of: 3 }.describe(Fate::Refused, &|l| format!("line {l}")),
        "identical retry of line 3"
    );
    assert_eq!(
        Note::Conflict { of: 3 }.describe(Fate::Refused, &|l| format!("p1.jsonl:{l}")),
        "conflict with p1.jsonl:3 (breach)"
    );
}
