//! [`super`]'s reads: encoded rows are the rows read, and another writer's types read
//! exactly on every path.

use super::*;
use crate::contract::row;
use crate::engine::local::RowSet;
use crate::engine::local::parquet::write_file;
use crate::plan::Event;
use crate::plan::merge::ReadRows;

/// `columns` written by arrow's own Parquet writer (as another tool writes them) to
/// `path`, with the orders fields' names.
fn foreign_file(path: &Path, columns: Vec<(&str, arrow_array::ArrayRef)>) {
    let batch = arrow_array::RecordBatch::try_from_iter(columns).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Another writer's types (view, large and dictionary strings, an int32 key, an
/// unsigned, a millisecond timestamp in another zone) read as their values through
/// every path that reads published rows: [`Rows`] (diff, restore checks, a date's
/// rows), [`encoded`] (merge) and [`hours`] (the console's picture of a day); an NTZ
/// column is an error on each, never a null.
#[test]
fn another_writers_types_read_exactly_on_every_path() {
    use arrow_array::{
        DictionaryArray, Int32Array, LargeStringArray, StringViewArray, TimestampMillisecondArray,
        UInt16Array, types::Int8Type,
    };
    use std::sync::Arc;
    let schema = crate::config::fixtures::orders().schema.clone();
    let dir = tempfile::tempdir().unwrap();
    let ms = 1_709_287_200_123_i64; // 2024-03-01T10:00:00.123Z
    let columns = |updated: arrow_array::ArrayRef| -> Vec<(&str, arrow_array::ArrayRef)> {
        vec![
            (
                "event_id",
                Arc::new(StringViewArray::from(vec!["e1", "e2"])),
            ),
            ("order_id", Arc::new(Int32Array::from(vec![101, 102]))),
            (
                "status",
                Arc::new(LargeStringArray::from(vec!["PAID", "SHIPPED"])),
            ),
            ("updated_at", updated),
            ("seq", Arc::new(UInt16Array::from(vec![Some(7), None]))),
            (
                "city",
                Arc::new(
                    vec![Some("Lagos"), Some("Accra")]
                        .into_iter()
                        .collect::<DictionaryArray<Int8Type>>(),
                ),
            ),
        ]
    };
    let good = dir.path().join("good.parquet");
    let stamps = TimestampMillisecondArray::from(vec![ms, ms + 3_600_000]).with_timezone("+01:00");
    foreign_file(&good, columns(Arc::new(stamps)));
    let want: Vec<Record> = [
        (101, "e1", "PAID", ms, Some(7), "Lagos"),
        (102, "e2", "SHIPPED", ms + 3_600_000, None, "Accra"),
    ]
    .into_iter()
    .map(|(key, event, status, at, seq, city)| {
        let mut r = vec![Value::Null; schema.fields.len()];
        r[schema.key] = Value::Int(key);
        r[schema.event_id] = Value::Str(event.into());
        r[schema.index_of("status").unwrap()] = Value::Str(status.into());
        r[schema.order_by] = Value::Ts(Instant::from_micros(at * 1000));
        r[schema.index_of("seq").unwrap()] = seq.map_or(Value::Null, Value::Int);
        r[schema.index_of("city").unwrap()] = Value::Str(city.into());
        r.into_boxed_slice()
    })
    .collect();
    let read: Vec<Record> = Rows::of(vec![Source::Path(good.clone())], &schema)
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(read, want);
    let merged = encoded(Source::Path(good.clone()), &schema).unwrap();
    for (i, record) in want.iter().enumerate() {
        assert_eq!(&merged.record(i, &schema), record, "merge's row {i}");
    }
    let mut by_hour = [0; 24];
    (by_hour[10], by_hour[11]) = (1, 1);
    assert_eq!(hours(Source::Path(good), &schema).unwrap(), by_hour);

    let ntz = dir.path().join("ntz.parquet");
    foreign_file(
        &ntz,
        columns(Arc::new(TimestampMillisecondArray::from(vec![ms, ms]))),
    );
    let errors = [
        Rows::of(vec![Source::Path(ntz.clone())], &schema)
            .collect::<Result<Vec<_>>>()
            .unwrap_err(),
        encoded(Source::Path(ntz.clone()), &schema).unwrap_err(),
        hours(Source::Path(ntz), &schema).unwrap_err(),
    ];
    for error in errors {
        let text = error.to_string();
        assert!(text.contains("ntz.parquet: column `updated_at`"), "{text}");
        assert!(text.contains("TIMESTAMP_NTZ"), "{text}");
    }
}

/// A file's rows encoded a column at a time are the rows [`Rows`] reads, encoded one
/// record at a time: nulls alone and in runs, strings past the inline 24 bytes, a
/// field the file lacks (null), across batches and across row groups (decoded on two
/// threads); and each row's key and record read back from the encoding.
#[test]
fn encoded_rows_are_the_rows_read_encoded() {
    let schema = crate::config::fixtures::orders().schema.clone();
    // Past 65,536 rows a file has two row groups.
    let records: Vec<Record> = (0..70_000)
        .map(|i| {
            let mut r = vec![Value::Null; schema.fields.len()];
            r[schema.event_id] = Value::Str(format!("e{i}-{}", "x".repeat(i as usize % 40)).into());
            r[schema.key] = Value::Int(i * 3 - 7);
            r[schema.order_by] = Value::Ts(Instant::from_parts(
                1_709_251_200 + i,
                (i as u32 % 7) * 1000,
            ));
            if i % 5 != 0 && !(100..140).contains(&i) {
                r[schema.fields.len() - 1] = Value::Str("Lagos".into());
            }
            r.into_boxed_slice()
        })
        .collect();
    let events: Vec<Event> = records
        .iter()
        .map(|r| Event {
            line: 0,
            record: r.clone(),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("part-00000.parquet");
    let rows = RowSet::from_events(schema.fields.len(), &events);
    write_file(&path, &schema, &rows, 0..rows.len()).unwrap();
    let groups = ArrowReaderMetadata::load(
        &std::fs::File::open(&path).unwrap(),
        ArrowReaderOptions::default(),
    )
    .unwrap()
    .metadata()
    .num_row_groups();
    assert_eq!(groups, 2);
    // A reader's schema with a field the file lacks: it reads as null.
    let mut wider = schema.clone();
    wider.fields.push(wider.fields[0].clone());
    wider.fields.last_mut().unwrap().name = "not_in_the_file".into();
    for schema in [&schema, &wider] {
        let read: Vec<Record> = Rows::of(vec![Source::Path(path.clone())], schema)
            .collect::<Result<_>>()
            .unwrap();
        let encoded = encoded(Source::Path(path.clone()), schema).unwrap();
        assert_eq!(encoded.len(), read.len());
        let mut want = Vec::new();
        for (i, record) in read.iter().enumerate() {
            want.clear();
            row::push_record(&mut want, record);
            assert_eq!(encoded.row(i), want.as_slice(), "row {i}");
            assert_eq!(encoded.key(i, schema), record[schema.key]);
            assert_eq!(&encoded.record(i, schema), record);
        }
    }
}
