//! Every encoding another writer may give a declared field reads as the exact value, or
//! the column is refused naming it: never a null where a value was.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int8Type, Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, DictionaryArray, Float32Array, Int8Array, Int16Array,
    Int32Array, Int64Array, LargeStringArray, NullArray, RecordBatch, StringArray, StringViewArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
    TimestampSecondArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array,
};
use proptest::prelude::*;

use super::*;
use crate::contract::Value;

fn field(ty: FieldType) -> Field {
    let mut field = crate::config::fixtures::orders().schema.fields[0].clone();
    field.name = "col".into();
    field.ty = ty;
    field
}

/// Row `row` of a column of a read type, as a value.
fn value(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Utf8 => Value::Str(array.as_string::<i32>().value(row).into()),
        DataType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => {
            Value::Ts(crate::contract::Instant::from_micros(
                array.as_primitive::<TimestampMicrosecondType>().value(row),
            ))
        }
        DataType::Float64 => Value::float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        other => panic!("not a read type: {other}"),
    }
}

fn read(array: ArrayRef, ty: FieldType, int96: bool) -> Result<Vec<Value>, Loss> {
    let out = column(&array, &field(ty), int96)?;
    assert!(is_read_type(out.data_type(), ty), "{}", out.data_type());
    Ok((0..out.len()).map(|i| value(out.as_ref(), i)).collect())
}

fn us(micros: i64) -> Value {
    Value::Ts(crate::contract::Instant::from_micros(micros))
}

#[test]
fn every_string_encoding_reads_as_its_text() {
    let want = vec![
        Value::Str("PAID".into()),
        Value::Null,
        Value::Str("Lagos é".into()),
    ];
    let texts = [Some("PAID"), None, Some("Lagos é")];
    let dict: DictionaryArray<Int32Type> = texts.into_iter().collect();
    let dict8: DictionaryArray<Int8Type> = texts.into_iter().collect();
    let large_dict: ArrayRef =
        Arc::new(dict8.with_values(Arc::new(LargeStringArray::from(vec!["PAID", "Lagos é"]))));
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(texts.to_vec())),
        Arc::new(LargeStringArray::from(texts.to_vec())),
        Arc::new(StringViewArray::from(texts.to_vec())),
        Arc::new(dict),
        large_dict,
        Arc::new(BinaryArray::from(
            texts
                .iter()
                .map(|t| t.map(str::as_bytes))
                .collect::<Vec<_>>(),
        )),
    ];
    for array in arrays {
        let ty = array.data_type().clone();
        assert_eq!(read(array, FieldType::String, false).unwrap(), want, "{ty}");
    }
}

#[test]
fn every_integer_width_reads_as_its_value() {
    let want = vec![Value::Int(7), Value::Null, Value::Int(100)];
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(Int8Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(Int16Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(Int32Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(Int64Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(UInt8Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(UInt16Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(UInt32Array::from(vec![Some(7), None, Some(100)])),
        Arc::new(UInt64Array::from(vec![Some(7), None, Some(100)])),
    ];
    for array in arrays {
        let ty = array.data_type().clone();
        assert_eq!(read(array, FieldType::Int, false).unwrap(), want, "{ty}");
    }
}

#[test]
fn every_timestamp_unit_reads_as_its_instant_in_microseconds() {
    let second = 1_709_287_200_i64; // 2024-03-01T10:00:00Z
    let want = vec![us(second * 1_000_000), Value::Null];
    let arrays: Vec<(ArrayRef, bool)> = vec![
        (
            Arc::new(TimestampSecondArray::from(vec![Some(second), None]).with_timezone("UTC")),
            false,
        ),
        (
            Arc::new(
                TimestampMillisecondArray::from(vec![Some(second * 1000), None])
                    .with_timezone("+00:00"),
            ),
            false,
        ),
        (
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(second * 1_000_000), None])
                    .with_timezone("Europe/Berlin"),
            ),
            false,
        ),
        (
            Arc::new(
                TimestampNanosecondArray::from(vec![Some(second * 1_000_000_000), None])
                    .with_timezone("UTC"),
            ),
            false,
        ),
        // INT96, as parquet reads it: zoneless nanoseconds, Spark's instant.
        (
            Arc::new(TimestampNanosecondArray::from(vec![
                Some(second * 1_000_000_000),
                None,
            ])),
            true,
        ),
    ];
    for (array, int96) in arrays {
        let ty = array.data_type().clone();
        assert_eq!(
            read(array, FieldType::Timestamp, int96).unwrap(),
            want,
            "{ty}"
        );
    }
}

#[test]
fn floats_booleans_and_an_all_null_column_read_exactly() {
    let floats: ArrayRef = Arc::new(Float32Array::from(vec![Some(1.5), None]));
    assert_eq!(
        read(floats, FieldType::Float, false).unwrap(),
        vec![Value::float(1.5), Value::Null]
    );
    let bools: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None]));
    assert_eq!(
        read(bools, FieldType::Bool, false).unwrap(),
        vec![Value::Bool(true), Value::Null]
    );
    let nulls: ArrayRef = Arc::new(NullArray::new(2));
    assert_eq!(
        read(nulls, FieldType::Int, false).unwrap(),
        vec![Value::Null, Value::Null]
    );
}

#[test]
fn a_value_that_cannot_read_exactly_is_refused_at_its_row() {
    let bad_utf8: ArrayRef = Arc::new(BinaryArray::from(vec![
        Some(b"ok".as_slice()),
        None,
        Some([0xff, 0xfe].as_slice()),
    ]));
    let huge: ArrayRef = Arc::new(UInt64Array::from(vec![Some(1), Some(u64::MAX)]));
    let nanos: ArrayRef = Arc::new(
        TimestampNanosecondArray::from(vec![Some(1000), Some(1_500)]).with_timezone("UTC"),
    );
    let far: ArrayRef = Arc::new(
        TimestampSecondArray::from(vec![Some(0), Some(i64::MAX / 10)]).with_timezone("UTC"),
    );
    let nanos_dictionary: ArrayRef = Arc::new(
        DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(vec![0, 1]),
            Arc::new(TimestampNanosecondArray::from(vec![1000, 1_500]).with_timezone("UTC")),
        )
        .unwrap(),
    );
    let cases = [
        (nanos_dictionary, FieldType::Timestamp, 1, "nanoseconds"),
        (bad_utf8, FieldType::String, 2, "UTF-8"),
        (huge, FieldType::Int, 1, "64-bit"),
        (nanos, FieldType::Timestamp, 1, "nanoseconds"),
        (far, FieldType::Timestamp, 1, "range"),
    ];
    for (array, ty, row, says) in cases {
        let loss = read(array, ty, false).unwrap_err();
        assert_eq!(loss.row, row, "{loss:?}");
        assert!(loss.reason.contains(says), "{says:?} not in {loss:?}");
    }
}

#[test]
fn a_type_the_field_cannot_hold_is_refused_not_read_as_null() {
    let ntz: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![None, Some(1)]));
    let loss = read(ntz, FieldType::Timestamp, false).unwrap_err();
    assert!(loss.reason.contains("TIMESTAMP_NTZ"), "{loss:?}");
    assert_eq!(loss.row, 1, "the first row with a value");
    let cases: Vec<(ArrayRef, FieldType)> = vec![
        (Arc::new(Int32Array::from(vec![1])), FieldType::String),
        (Arc::new(StringArray::from(vec!["1"])), FieldType::Int),
        (
            Arc::new(arrow_array::Date32Array::from(vec![1])),
            FieldType::Timestamp,
        ),
        (Arc::new(Float32Array::from(vec![1.0])), FieldType::Int),
        (Arc::new(Int64Array::from(vec![1])), FieldType::Bool),
    ];
    for (array, ty) in cases {
        let found = array.data_type().clone();
        let loss = read(array, ty, false).unwrap_err();
        assert!(loss.reason.contains("type"), "{found} as {ty:?}: {loss:?}");
    }
}

#[test]
fn a_refusal_names_the_file_column_row_group_and_type() {
    let at = FileAt {
        path: "lake/orders/event_date=2024-03-01/part-0.parquet".into(),
        groups: vec![(0, 3), (1, 3)],
        int96: Vec::new(),
    };
    let array: ArrayRef = Arc::new(UInt64Array::from(vec![Some(1), Some(u64::MAX)]));
    let batch = RecordBatch::try_from_iter([("col", array)]).unwrap();
    // The batch starts at the file's row 2: its row 1 is row 3, in row group 1.
    let error = at
        .conform(&batch, &[field(FieldType::Int)], &[Some(0)], 2)
        .unwrap_err();
    let text = error.to_string();
    for part in [
        "part-0.parquet",
        "`col`",
        "row group 1",
        "UInt64",
        "int",
        "nothing was written",
    ] {
        assert!(text.contains(part), "{part:?} not in: {text}");
    }
    assert_eq!(error.exit_code(), 1);
}

/// A generated column: values of one Arrow encoding, and what each must read as (`None`
/// where no exact value exists).
#[derive(Debug, Clone)]
struct Case {
    array: ArrayRef,
    natural: FieldType,
    int96: bool,
    /// Refused whatever its values (NTZ).
    refused_type: bool,
    want: Vec<Option<Value>>,
}

fn ints() -> impl Strategy<Value = Case> {
    (
        0..8usize,
        prop::collection::vec(prop::option::of(any::<i64>()), 0..20),
    )
        .prop_map(|(w, v)| {
            let fit = |lo: i128, hi: i128| -> Vec<Option<i64>> {
                v.iter()
                    .map(|x| x.map(|x| (x as i128).clamp(lo, hi) as i64))
                    .collect()
            };
            let (array, values): (ArrayRef, Vec<Option<i64>>) = match w {
                0 => {
                    let x = fit(i8::MIN as i128, i8::MAX as i128);
                    (
                        Arc::new(Int8Array::from(
                            x.iter().map(|o| o.map(|x| x as i8)).collect::<Vec<_>>(),
                        )),
                        x,
                    )
                }
                1 => {
                    let x = fit(i16::MIN as i128, i16::MAX as i128);
                    (
                        Arc::new(Int16Array::from(
                            x.iter().map(|o| o.map(|x| x as i16)).collect::<Vec<_>>(),
                        )),
                        x,
                    )
                }
                2 => {
                    let x = fit(i32::MIN as i128, i32::MAX as i128);
                    (
                        Arc::new(Int32Array::from(
                            x.iter().map(|o| o.map(|x| x as i32)).collect::<Vec<_>>(),
                        )),
                        x,
                    )
                }
                3 => (Arc::new(Int64Array::from(v.clone())), v.clone()),
                4 => {
                    let x = fit(0, u8::MAX as i128);
                    (
                        Arc::new(UInt8Array::from(
                            x.iter().map(|o| o.map(|x| x as u8)).collect::<Vec<_>>(),
                        )),
                        x,
                    )
                }
                5 => {
                    let x = fit(0, u16::MAX as i128);
                    (
                        Arc::new(UInt16Array::from(
                            x.iter().map(|o| o.map(|x| x as u16)).collect::<Vec<_>>(),
                        )),
                        x,
                    )
                }
                6 => {
                    let x = fit(0, u32::MAX as i128);
                    (
                        Arc::new(UInt32Array::from(
                            x.iter().map(|o| o.map(|x| x as u32)).collect::<Vec<_>>(),
                        )),
                        x,
                    )
                }
                _ => {
                    // Reinterpreted as unsigned: the upper half is beyond i64.
                    let u: Vec<Option<u64>> = v.iter().map(|o| o.map(|x| x as u64)).collect();
                    let want = u
                        .iter()
                        .map(|o| o.map(|x| i64::try_from(x).ok()))
                        .collect::<Vec<_>>();
                    let case = Case {
                        array: Arc::new(UInt64Array::from(u)),
                        natural: FieldType::Int,
                        int96: false,
                        refused_type: false,
                        want: want
                            .into_iter()
                            .map(|o| match o {
                                None => Some(Value::Null),
                                Some(x) => x.map(Value::Int),
                            })
                            .collect(),
                    };
                    return case;
                }
            };
            Case {
                array,
                natural: FieldType::Int,
                int96: false,
                refused_type: false,
                want: values
                    .into_iter()
                    .map(|o| Some(o.map_or(Value::Null, Value::Int)))
                    .collect(),
            }
        })
}

fn strings() -> impl Strategy<Value = Case> {
    let text = prop::option::of(prop_oneof![
        ".{0,30}".prop_map(|s: String| s.into_bytes()),
        prop::collection::vec(any::<u8>(), 0..8),
    ]);
    (0..5usize, prop::collection::vec(text, 0..20)).prop_map(|(kind, v)| {
        let valid = |b: &Vec<u8>| String::from_utf8(b.clone()).ok();
        // Only binary can hold bytes that are not UTF-8; the string types get text.
        let texts: Vec<Option<String>> = v
            .iter()
            .map(|o| {
                o.as_ref()
                    .map(|b| valid(b).unwrap_or_else(|| String::from_utf8_lossy(b).into_owned()))
            })
            .collect();
        let (array, want): (ArrayRef, Vec<Option<Value>>) = match kind {
            0 => (
                Arc::new(LargeStringArray::from(texts.clone())),
                texts
                    .iter()
                    .map(|o| Some(o.as_deref().map_or(Value::Null, |s| Value::Str(s.into()))))
                    .collect(),
            ),
            1 => (
                Arc::new(StringViewArray::from(texts.clone())),
                texts
                    .iter()
                    .map(|o| Some(o.as_deref().map_or(Value::Null, |s| Value::Str(s.into()))))
                    .collect(),
            ),
            2 => (
                Arc::new(
                    texts
                        .iter()
                        .map(|o| o.as_deref())
                        .collect::<DictionaryArray<Int32Type>>(),
                ),
                texts
                    .iter()
                    .map(|o| Some(o.as_deref().map_or(Value::Null, |s| Value::Str(s.into()))))
                    .collect(),
            ),
            3 => (
                Arc::new(StringArray::from(texts.clone())),
                texts
                    .iter()
                    .map(|o| Some(o.as_deref().map_or(Value::Null, |s| Value::Str(s.into()))))
                    .collect(),
            ),
            _ => (
                Arc::new(BinaryArray::from(
                    v.iter().map(|o| o.as_deref()).collect::<Vec<_>>(),
                )),
                v.iter()
                    .map(|o| match o {
                        None => Some(Value::Null),
                        Some(b) => valid(b).map(|s| Value::Str(s.into())),
                    })
                    .collect(),
            ),
        };
        Case {
            array,
            natural: FieldType::String,
            int96: false,
            refused_type: false,
            want,
        }
    })
}

fn timestamps() -> impl Strategy<Value = Case> {
    let value = prop_oneof![any::<i64>(), -10_000_000_000_000i64..10_000_000_000_000i64];
    (
        0..6usize,
        prop::collection::vec(prop::option::of(value), 0..20),
    )
        .prop_map(|(kind, v)| {
            let to_us = |x: i64| -> Option<i64> {
                match kind {
                    0 => x.checked_mul(1_000_000),
                    1 => x.checked_mul(1000),
                    2 => Some(x),
                    _ => (x % 1000 == 0).then_some(x / 1000),
                }
            };
            let array: ArrayRef = match kind {
                0 => Arc::new(TimestampSecondArray::from(v.clone()).with_timezone("UTC")),
                1 => Arc::new(TimestampMillisecondArray::from(v.clone()).with_timezone("+01:00")),
                2 => Arc::new(TimestampMicrosecondArray::from(v.clone()).with_timezone("UTC")),
                3 => Arc::new(TimestampNanosecondArray::from(v.clone()).with_timezone("UTC")),
                // INT96 (4) and NTZ (5): both zoneless nanoseconds as Arrow has them.
                _ => Arc::new(TimestampNanosecondArray::from(v.clone())),
            };
            Case {
                array,
                natural: FieldType::Timestamp,
                int96: kind == 4,
                refused_type: kind == 5,
                want: v
                    .iter()
                    .map(|o| match o {
                        None => Some(Value::Null),
                        Some(x) => to_us(*x).map(us),
                    })
                    .collect(),
            }
        })
}

fn others() -> impl Strategy<Value = Case> {
    prop_oneof![
        prop::collection::vec(prop::option::of(-1e30f32..1e30f32), 0..20).prop_map(|v| Case {
            array: Arc::new(Float32Array::from(v.clone())),
            natural: FieldType::Float,
            int96: false,
            refused_type: false,
            want: v
                .iter()
                .map(|o| Some(o.map_or(Value::Null, |x| Value::float(f64::from(x)))))
                .collect(),
        }),
        prop::collection::vec(prop::option::of(any::<bool>()), 0..20).prop_map(|v| Case {
            array: Arc::new(BooleanArray::from(v.clone())),
            natural: FieldType::Bool,
            int96: false,
            refused_type: false,
            want: v
                .iter()
                .map(|o| Some(o.map_or(Value::Null, Value::Bool)))
                .collect(),
        }),
    ]
}

fn declared() -> impl Strategy<Value = FieldType> {
    prop_oneof![
        Just(FieldType::String),
        Just(FieldType::Int),
        Just(FieldType::Timestamp),
        Just(FieldType::Float),
        Just(FieldType::Bool),
    ]
}

proptest! {
    /// Any encoding, any values, any declared type: the column reads as exactly the values
    /// it holds, or it is refused naming the column; a present value never reads as null.
    #[test]
    fn a_column_reads_exactly_or_is_refused_by_name(
        case in prop_oneof![ints(), strings(), timestamps(), others()],
        other in declared(),
        mismatch in any::<bool>(),
    ) {
        let ty = if mismatch { other } else { case.natural };
        let at = FileAt { path: "f.parquet".into(), groups: vec![(0, case.array.len() as u64)], int96: if case.int96 { vec!["col".into()] } else { Vec::new() } };
        let batch = RecordBatch::try_from_iter([("col", case.array.clone())]).unwrap();
        let exact = ty == case.natural && !case.refused_type && case.want.iter().all(Option::is_some);
        match at.conform(&batch, &[field(ty)], &[Some(0)], 0) {
            Ok(columns) => {
                let out = columns[0].as_ref().unwrap();
                prop_assert!(exact, "read {:?} as {ty:?}", case.array.data_type());
                for (row, want) in case.want.iter().enumerate() {
                    prop_assert_eq!(Some(value(out.as_ref(), row)), want.clone(), "row {}", row);
                }
            }
            Err(error) => {
                prop_assert!(!exact, "refused an exact column: {error}");
                prop_assert!(error.to_string().contains("column `col`"), "{error}");
            }
        }
    }
}
