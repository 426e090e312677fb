#!/usr/bin/env python3
"""Check a gen_events.py file: python3 bench/validate_events.py FILE [--start D] [--days N].

Good lines (event_id starting with "e") must parse, have the fields in order with the
right types, a UTC date in [start, start+days), and every re-send of an event_id must carry
identical typed values. Bad lines (event_id "x...", or unparsable) are only counted.
Exits non-zero on the first violation. Stdlib only.
"""

import argparse
import datetime as dt
import json
import re
import sys
from collections import Counter

TS = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$")
ORDER = ["event_id", "order_id", "status", "updated_at", "seq", "courier_id", "city"]
STATUSES = {"PENDING", "PAID", "PACKED", "SHIPPED", "DELIVERED", "CANCELLED"}


def instant(s: str) -> int:
    """Nanoseconds since the epoch (UTC) of an RFC 3339 string."""
    m = TS.match(s)
    if not m:
        raise ValueError(f"bad timestamp {s!r}")
    y, mo, d, h, mi, se, frac, off = m.groups()
    base = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(se), tzinfo=dt.timezone.utc)
    secs = int(base.timestamp())
    if off != "Z":
        sign = 1 if off[0] == "+" else -1
        secs -= sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    return secs * 10**9 + int((frac or "").ljust(9, "0"))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--start", default="2024-03-01")
    p.add_argument("--days", type=int, default=1)
    a = p.parse_args()
    lo = dt.datetime.fromisoformat(a.start).replace(tzinfo=dt.timezone.utc)
    lo_ns = int(lo.timestamp()) * 10**9
    hi_ns = lo_ns + a.days * 86400 * 10**9
    seen: dict[str, tuple] = {}
    per_key: dict[int, list] = {}
    bad = lines = retries = reoffset = seq_present = 0
    offsets = Counter()
    fracs = Counter()
    dates = Counter()
    times = []
    with open(a.file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            lines += 1
            try:
                o = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if not isinstance(o, dict) or not str(o.get("event_id", "")).startswith("e"):
                bad += 1
                continue
            keys = list(o)
            if keys != [k for k in ORDER if k in o] or keys[:4] != ORDER[:4]:
                if "email" in o:
                    bad += 1
                    continue
                sys.exit(f"line {n}: field order {keys}")
            if not (isinstance(o["order_id"], int) and o["status"] in STATUSES):
                sys.exit(f"line {n}: types {o}")
            if "seq" in o:
                seq_present += 1
                assert isinstance(o["seq"], int), n
            ts = o["updated_at"]
            t = instant(ts)
            if not lo_ns <= t < hi_ns:
                sys.exit(f"line {n}: UTC instant of {ts} out of range")
            offsets[ts[-6:] if ts[-1] != "Z" else "Z"] += 1
            m = TS.match(ts)
            fracs[len(m.group(7) or "")] += 1
            typed = (o["order_id"], o["status"], t, o.get("seq"), o.get("courier_id"), o.get("city"))
            prev = seen.get(o["event_id"])
            if prev is None:
                seen[o["event_id"]] = (typed, ts)
                per_key.setdefault(o["order_id"], []).append((t, o.get("seq"), o["event_id"]))
                dates[dt.datetime.fromtimestamp(t // 10**9, dt.timezone.utc).date().isoformat()] += 1
                times.append(t)
            else:
                retries += 1
                if prev[0] != typed:
                    sys.exit(f"line {n}: retry of {o['event_id']} differs: {prev[0]} vs {typed}")
                if prev[1] != ts:
                    reoffset += 1
    ties = sum(1 for evs in per_key.values() if len({e[0] for e in evs}) < len(evs))
    undecided = sum(
        1 for evs in per_key.values()
        for t in {e[0] for e in evs}
        if sum(1 for e in evs if e[0] == t) > 1 and any(e[1] is None for e in evs if e[0] == t)
    )
    inversions = sum(1 for i in range(1, len(times)) if times[i] < times[i - 1])
    good = lines - bad
    print(
        f"ok: lines={lines} bad={bad} good={good} events={len(seen)} keys={len(per_key)} "
        f"retries={retries} (re-offset {reoffset}) tie_keys={ties} undecidable_ties={undecided} "
        f"seq_present={seq_present / max(good, 1):.3f} dates={dict(sorted(dates.items()))} "
        f"offsets={dict(offsets)} frac_digits={dict(sorted(fracs.items()))} "
        f"time_inversions={inversions / max(len(times) - 1, 1):.3f}"
    )
    return 1 if undecided else 0


if __name__ == "__main__":
    sys.exit(main())
