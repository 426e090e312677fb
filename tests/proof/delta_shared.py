"""Another writer on a Wharf table (issue 47), with Python `deltalake` and, for deletion
vectors, by hand: deltalake 1.6 deletes by rewriting files and writes no deletion vector,
so `delete-dv` builds one as the Delta protocol lays it out (a RoaringBitmapArray in a
`deletion_vector_<uuid>.bin` file, storage type `u`) and commits it as Spark would: the
file's `remove`, then its `add` again with the vector. S3 settings come from AWS_*.

    python delta_shared.py TABLE_URL optimize
    python delta_shared.py TABLE_URL vacuum
    python delta_shared.py TABLE_URL delete-dv DATE ORDER_ID...   (prints the vector's cardinality)
    python delta_shared.py TABLE_URL feature NAME                 (enables one table feature)
    python delta_shared.py TABLE_URL version
    python delta_shared.py TABLE_URL objects                       (every object and its size)
    python delta_shared.py TABLE_URL count [DATE]                  (rows the DV-aware reader sees)
    python delta_shared.py TABLE_URL readers                       (the three readers' rows, agreeing)
"""
import io
import json
import os
import struct
import sys
import uuid
import zlib

from delta_readers import storage_options

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85(data):
    out = []
    for i in range(0, len(data), 4):
        value = int.from_bytes(data[i:i + 4], "big")
        chunk = []
        for _ in range(5):
            chunk.append(Z85[value % 85])
            value //= 85
        out.extend(reversed(chunk))
    return "".join(out)


def roaring_array(rows):
    """The Delta protocol's RoaringBitmapArray (portable): magic, then per high 32 bits a
    key and a 32-bit roaring bitmap of array containers (each under 4,096 values here)."""
    highs = {}
    for row in sorted(rows):
        highs.setdefault(row >> 32, []).append(row & 0xFFFFFFFF)
    out = struct.pack("<I", 1681511377) + struct.pack("<Q", len(highs))
    for high, lows in sorted(highs.items()):
        containers = {}
        for low in lows:
            containers.setdefault(low >> 16, []).append(low & 0xFFFF)
        n = len(containers)
        bitmap = struct.pack("<II", 12346, n)  # SERIAL_COOKIE_NO_RUNCONTAINER, size
        for key, values in sorted(containers.items()):
            bitmap += struct.pack("<HH", key, len(values) - 1)
        offset = len(bitmap) + 4 * n
        for key, values in sorted(containers.items()):
            bitmap += struct.pack("<I", offset)
            offset += 2 * len(values)
        for key, values in sorted(containers.items()):
            bitmap += b"".join(struct.pack("<H", v) for v in values)
        out += struct.pack("<I", high) + bitmap
    return out


def filesystem(url):
    """A pyarrow filesystem and the table root's path on it."""
    from pyarrow import fs
    if url.startswith("s3://"):
        endpoint = os.environ["AWS_ENDPOINT_URL"]
        scheme, host = endpoint.split("://", 1)
        s3 = fs.S3FileSystem(
            access_key=os.environ["AWS_ACCESS_KEY_ID"], secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
            region=os.environ.get("AWS_REGION", "us-east-1"), endpoint_override=host, scheme=scheme,
        )
        return s3, url.removeprefix("s3://").rstrip("/")
    return fs.LocalFileSystem(), url.removeprefix("file://").rstrip("/")


def table(url):
    import deltalake
    return deltalake.DeltaTable(url, storage_options=storage_options())


def delete_dv(url, date, order_ids):
    """Gives the first file of `date` holding one of `order_ids` a deletion vector of
    those rows, in one commit. Prints the vector's cardinality."""
    import pyarrow.parquet as pq
    from deltalake import TableFeatures
    dt = table(url)
    if "deletionVectors" not in (dt.protocol().reader_features or []):
        dt.alter.add_feature(TableFeatures.DeletionVectors, allow_protocol_versions_increase=True)
        dt = table(url)
    fs_, root = filesystem(url)
    adds = [a for a in current_adds(fs_, root, dt.version()) if a["partitionValues"].get("event_date") == date]
    wanted = {int(o) for o in order_ids}
    for add in adds:
        with fs_.open_input_file(f"{root}/{add['path']}") as f:
            ids = pq.read_table(f, columns=["order_id"]).column("order_id").to_pylist()
        rows = [i for i, o in enumerate(ids) if o in wanted]
        if not rows:
            continue
        data = roaring_array(rows)
        dv_id = uuid.uuid4()
        with fs_.open_output_stream(f"{root}/deletion_vector_{dv_id}.bin") as out:
            out.write(b"\x01" + struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data)))
        vector = {"storageType": "u", "pathOrInlineDv": z85(dv_id.bytes), "offset": 1,
                  "sizeInBytes": len(data), "cardinality": len(rows)}
        now = add.get("modificationTime", 0) + 1
        remove = {"path": add["path"], "deletionTimestamp": now, "dataChange": True,
                  "extendedFileMetadata": True, "partitionValues": add["partitionValues"], "size": add["size"]}
        readded = dict(add, deletionVector=vector, dataChange=True)
        info = {"timestamp": now, "operation": "DELETE", "engineInfo": "issue-47-dv-writer",
                "operationParameters": {"predicate": f"order_id IN {sorted(wanted)}"}}
        version = dt.version() + 1
        commit = "\n".join(json.dumps(a) for a in [{"commitInfo": info}, {"remove": remove}, {"add": readded}])
        with fs_.open_output_stream(f"{root}/_delta_log/{version:020}.json") as out:
            out.write(commit.encode())
        print(len(rows))
        return
    sys.exit(f"delete_dv: no file of {date} holds {sorted(wanted)}")


def current_adds(fs_, root, version):
    """The `add` actions of `version`, replayed from the JSON commits (no checkpoint in
    these small tables)."""
    live = {}
    for v in range(version + 1):
        with fs_.open_input_stream(f"{root}/_delta_log/{v:020}.json") as f:
            for line in f.read().decode().splitlines():
                action = json.loads(line)
                if "add" in action:
                    live[action["add"]["path"]] = action["add"]
                elif "remove" in action:
                    live.pop(action["remove"]["path"], None)
    return list(live.values())


def enable(url, name):
    from deltalake import TableFeatures
    dt = table(url)
    if name == "appendOnly":
        dt.alter.set_table_properties({"delta.appendOnly": "true"})
    elif name == "changeDataFeed":
        dt.alter.set_table_properties({"delta.enableChangeDataFeed": "true"})
    elif name == "changeDataFeedOff":
        dt.alter.set_table_properties({"delta.enableChangeDataFeed": "false"})
    elif name == "checkConstraints":
        dt.alter.add_constraint({"positive_order": "order_id > 0"})
    elif name == "columnMapping":
        column_mapping(url, dt.version())
    elif name == "generatedColumns":
        dt.alter.add_feature(TableFeatures.GeneratedColumns, allow_protocol_versions_increase=True)
    elif name == "identityColumns":
        dt.alter.add_feature(TableFeatures.IdentityColumns, allow_protocol_versions_increase=True)
    else:
        sys.exit(f"enable: no recipe for {name}")


def create(url):
    """Makes the orders table (samples/wharf.toml's schema, partitioned by event_date)
    with no data file, as deltalake makes a table: a legacy protocol (reader 1, writer 2)."""
    import pyarrow as pa
    from deltalake import DeltaTable
    text, ts = pa.string(), pa.timestamp("us", tz="UTC")
    schema = pa.schema([("event_id", text), ("order_id", pa.int64()), ("status", text), ("updated_at", ts),
                        ("seq", pa.int64()), ("courier_id", text), ("city", text), ("event_date", pa.date32())])
    DeltaTable.create(url, schema, partition_by=["event_date"], storage_options=storage_options())


def column_mapping(url, version):
    """Turns on column mapping (mode name) in one commit, as Spark's ALTER TABLE does;
    deltalake 1.6 cannot. Each column's physical name is its own, so the files stay
    readable."""
    fs_, root = filesystem(url)
    protocol = metadata = None
    for v in range(version + 1):
        with fs_.open_input_stream(f"{root}/_delta_log/{v:020}.json") as f:
            for line in f.read().decode().splitlines():
                action = json.loads(line)
                protocol = action.get("protocol", protocol)
                metadata = action.get("metaData", metadata)
    schema = json.loads(metadata["schemaString"])
    for n, field in enumerate(schema["fields"], start=1):
        field["metadata"] = {"delta.columnMapping.id": n, "delta.columnMapping.physicalName": field["name"]}
    metadata = dict(metadata, schemaString=json.dumps(schema), configuration=dict(
        metadata.get("configuration") or {}, **{"delta.columnMapping.mode": "name",
                                                  "delta.columnMapping.maxColumnId": str(len(schema["fields"]))}))
    protocol = {"minReaderVersion": 3, "minWriterVersion": 7,
                "readerFeatures": sorted(set(protocol.get("readerFeatures") or []) | {"columnMapping"}),
                "writerFeatures": sorted(set(protocol.get("writerFeatures") or []) | {"columnMapping"})}
    info = {"timestamp": 0, "operation": "SET TBLPROPERTIES", "engineInfo": "issue-47-column-mapping"}
    commit = "\n".join(json.dumps(a) for a in [{"commitInfo": info}, {"protocol": protocol}, {"metaData": metadata}])
    with fs_.open_output_stream(f"{root}/_delta_log/{version + 1:020}.json") as out:
        out.write(commit.encode())


def count(url, date=None):
    """Rows as a deletion-vector-aware reader (DuckDB's delta extension, the Delta
    kernel's scan) sees them."""
    from delta_readers import with_duckdb
    rows = [json.loads(r) for r in with_duckdb(url)]
    return sum(1 for r in rows if date is None or r["event_date"] == date)


def readers(url):
    """The three readers' rows, which must agree: a reader that refuses a reader feature
    it does not support (polars and column mapping) is named, not compared."""
    from delta_readers import with_deltalake, with_duckdb, with_polars
    got, unsupported = {}, []
    for name, read in [("deltalake", with_deltalake), ("polars", with_polars), ("duckdb", with_duckdb)]:
        try:
            got[name] = read(url)
        except Exception as e:  # noqa: BLE001 - only a protocol refusal is tolerated
            if "not support" not in str(e) and "not yet supported" not in str(e):
                raise
            unsupported.append(name)
    first = next(iter(got.values()))
    if len(got) < 2 or any(r != first for r in got.values()):
        sys.exit(f"readers disagree or cannot read: {json.dumps(got)} (unsupported: {unsupported})")
    print(json.dumps({"rows": first, "readers": sorted(got), "unsupported": unsupported}))


def main():
    url, command, *args = sys.argv[1:]
    if command == "readers":
        readers(url)
    elif command == "optimize":
        print(json.dumps(table(url).optimize.compact()))
    elif command == "vacuum":
        print(json.dumps(table(url).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)))
    elif command == "delete-dv":
        delete_dv(url, args[0], args[1:])
    elif command == "feature":
        enable(url, args[0])
    elif command == "objects":
        from pyarrow import fs
        fs_, root = filesystem(url)
        infos = fs_.get_file_info(fs.FileSelector(root, recursive=True))
        for info in sorted(infos, key=lambda i: i.path):
            if info.type == fs.FileType.File:
                print(f"./{info.path[len(root) + 1:]} {info.size}")
    elif command == "create":
        create(url)
    elif command == "protocol":
        protocol = table(url).protocol()
        print(protocol.min_reader_version, protocol.min_writer_version, protocol.writer_features)
    elif command == "version":
        print(table(url).version())
    elif command == "count":
        print(count(url, *args))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
