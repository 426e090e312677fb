#!/usr/bin/env python3
"""Deterministic generator of realistic order-status JSONL files for benchmarking Wharf.

Each line: {"event_id","order_id","status","updated_at","seq"?,"courier_id"?,"city"?}
(fields in that order; the optional ones are omitted, never null).

  python3 bench/gen_events.py --events 2000000 --out bench/out/events_2000000.jsonl

Properties (see --help): exact line count; about events*keys-ratio distinct order_ids;
every good timestamp's UTC date lies in [start, start+days); identical retries (same
event_id, same typed values, sometimes re-written with another UTC offset); same-instant
ties decided by seq; time-ordered stream shuffled within bursts; optional reject lines and
one prohibited-field breach. Same arguments and seed -> byte-identical file. Stdlib only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import heapq
import math
import random
import sys
import time

STATUS_PATH = ("PENDING", "PAID", "PACKED", "SHIPPED", "DELIVERED")
CITIES = (
    "Mumbai", "Delhi", "Bengaluru", "Pune", "Chennai", "Kolkata", "Hyderabad",
    "New York", "Boston", "Toronto", "Montréal", "São Paulo", "Bogotá", "Lima",
    "London", "Paris", "Zürich", "Kraków", "Berlin", "Madrid", "Lisbon", "Oslo",
    "Tokyo", "Seoul", "Singapore", "Sydney", "Nairobi", "Lagos", "Cairo", "Dubai",
)
# (suffix, offset seconds); chosen 60% Z, 20% +05:30, 20% -04:00
OFFSETS = (("Z", 0), ("+05:30", 19800), ("-04:00", -14400))
NS = 1_000_000_000
DAY = 86400
MEAN_GAP_S = 25 * 60  # mean time between two status updates of one order
COURIERS = 5000


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, required=True, help="lines to write (retries and rejects included)")
    p.add_argument("--out", required=True, help="output file ('-' for stdout)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--retry-rate", type=float, default=0.15, help="fraction of lines that are re-sends")
    p.add_argument("--tie-rate", type=float, default=0.02, help="fraction of keys with a same-instant pair")
    p.add_argument("--keys-ratio", type=float, default=0.29, help="distinct order_ids per line")
    p.add_argument("--days", type=int, default=1, help="consecutive UTC days covered")
    p.add_argument("--start", default="2024-03-01", help="first UTC day (YYYY-MM-DD)")
    p.add_argument("--rejects", type=int, default=0, help="bad lines to include")
    p.add_argument("--breach", action="store_true", help="one line in the middle carries an email field")
    p.add_argument("--burst", type=int, default=64, help="shuffle window in lines (<=1: no shuffle)")
    a = p.parse_args(argv)
    if a.events < 1 or a.days < 1 or not (0 <= a.retry_rate < 1) or not (0 <= a.tie_rate <= 1):
        p.error("need --events >= 1, --days >= 1, 0 <= retry-rate < 1, 0 <= tie-rate <= 1")
    if a.rejects < 0 or a.rejects > a.events:
        p.error("--rejects must be within [0, events]")
    return a


def base_events(rng: random.Random, n_keys: int, n_base: int, tie_rate: float, span_ns: int, stats: dict):
    """Yield (t_ns, frac, head, tail) for every good event, in UTC time order.

    t_ns is nanoseconds since the start day's midnight UTC, already truncated to the
    precision that frac (the written fraction, e.g. "" or ".123") shows.
    """
    r = rng.random
    log = math.log
    # Events per key: at least one each, the rest spread at random (Poisson-like).
    counts = [1] * n_keys
    for _ in range(n_base - n_keys):
        counts[int(r() * n_keys)] += 1
    multi = sum(1 for c in counts if c > 1)
    p_tie = min(1.0, tie_rate * n_keys / multi) if multi else 0.0
    mean_gap = MEAN_GAP_S * NS
    end = span_ns - 1  # last admissible instant
    heap: list = []
    HEADS = ['%s","updated_at":"' % st for st in STATUS_PATH]
    HEAD_CANCELLED = 'CANCELLED","updated_at":"'
    SEQ_TAILS = ['","seq":%d' % (j + 1) for j in range(16)]
    push, pop = heapq.heappush, heapq.heappop
    counter = 0
    ties = 0
    order_base = 10_000_000
    for k in range(n_keys):
        n = counts[k]
        # Orders arrive uniformly over the range, in order_id order.
        t0 = int(span_ns * (k + r()) / n_keys)
        if t0 > end - n * NS:
            t0 = end - n * NS  # leave room to fit the lifecycle (only the last seconds)
        while heap and heap[0][0] <= t0:
            e = pop(heap)
            yield e[0], e[2], e[3], e[4]
        order_id = order_base + k * 3 + int(r() * 3)
        oid_s = '","order_id":%d,"status":"' % order_id
        if n > len(SEQ_TAILS):
            SEQ_TAILS.extend('","seq":%d' % (j + 1) for j in range(len(SEQ_TAILS), n))
        cancelled = n > 1 and r() < 0.07
        courier = ',"courier_id":"c%04d"' % int(r() * COURIERS)
        city = ',"city":"%s"' % CITIES[int(r() * len(CITIES))]
        tie_at = (1 + int(r() * (n - 1))) if (n > 1 and r() < p_tie) else 0
        gaps = [0] * n
        total = 0
        for i in range(1, n):
            g = NS + int(-log(1.0 - r()) * mean_gap)
            gaps[i] = g
            total += g
        room = end - t0
        if total > room:  # compress the lifecycle to end inside the range
            gaps = [g * room // total for g in gaps]
        u = t0  # untruncated time chain
        prev_t = -1
        for i in range(n):
            u += gaps[i]
            if i == tie_at and i > 0:
                t = prev_t  # same instant as the previous event; written maybe differently
                ties += 1
                seq_present = True
            else:
                t = u
                seq_present = i == tie_at - 1 or r() < 0.9  # both halves of a tie carry seq
            x = r()
            if i > 0 and gaps[i] < NS and i != tie_at:
                x = 0.99  # compressed gap: keep full precision so instants stay distinct
            # Written precision: 45% seconds, 20% millis, 25% micros, 10% nanos. A tie
            # keeps the previous instant exactly and only pads its fraction.
            unit = NS if x < 0.45 else (1_000_000 if x < 0.65 else (1000 if x < 0.9 else 1))
            if i != tie_at or i == 0:
                t -= t % unit
            sub = t % NS
            if sub % unit:
                frac = ".%09d" % sub
            elif unit == NS:
                frac = ""
            elif unit == 1_000_000:
                frac = ".%03d" % (sub // 1_000_000)
            elif unit == 1000:
                frac = ".%06d" % (sub // 1000)
            else:
                frac = ".%09d" % sub
            prev_t = t
            if cancelled and i == n - 1:
                head = oid_s + HEAD_CANCELLED
                courier_i = ""
            else:
                head = oid_s + HEADS[i if i < 5 else 4]
                if i >= 2 and r() < 0.9:
                    courier_i = courier
                else:
                    courier_i = ""
            tail = SEQ_TAILS[i] + courier_i if seq_present else '"' + courier_i
            if r() < 0.85:
                tail += city
            counter += 1
            push(heap, (t, counter, frac, head, tail))
    while heap:
        e = pop(heap)
        yield e[0], e[2], e[3], e[4]
    stats["ties"] = ties


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    t_start = time.monotonic()
    rng = random.Random(a.seed)
    r = rng.random
    start = dt.date.fromisoformat(a.start)
    span_ns = a.days * DAY * NS
    n_lines = a.events
    n_rej = a.rejects
    n_retry = round(n_lines * a.retry_rate)
    n_base = n_lines - n_rej - n_retry
    n_keys = max(1, round(n_lines * a.keys_ratio))
    if n_base < n_keys:  # tiny files or extreme ratios: every good event gets its own key
        n_keys = max(n_base, 0)

    # Lookup tables: local day index -> date string, second-of-day -> "HH:MM:SS".
    dates = {d: (start + dt.timedelta(days=d)).isoformat() for d in range(-1, a.days + 1)}
    hms = ["%02d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60) for s in range(DAY)]

    def stamp(t: int, frac: str, off: int) -> str:
        suffix, off_s = OFFSETS[off]
        ls = t // NS + off_s
        return "%sT%s%s%s" % (dates[ls // DAY], hms[ls % DAY], frac, suffix)

    def pick_offset() -> int:
        x = r()
        return 0 if x < 0.6 else (1 if x < 0.8 else 2)

    stats: dict = {}
    events = base_events(rng, n_keys, n_base, a.tie_rate, span_ns, stats)

    rej_slots = {(i * n_lines) // n_rej + (n_lines // (2 * n_rej)) for i in range(n_rej)} if n_rej else set()
    rej_slots = {min(s, n_lines - 1) for s in rej_slots}
    # Collisions of slots are possible only when rejects ~ lines: fill up deterministically.
    s = 0
    while len(rej_slots) < n_rej:
        if s not in rej_slots:
            rej_slots.add(s)
        s += 1
    breach_slot = n_lines // 2 if a.breach else -1
    while breach_slot in rej_slots:
        breach_slot += 1
    if breach_slot >= n_lines:
        breach_slot = -1  # every line is a reject: nowhere to put the breach

    ring_size = 8192
    ring: list = []  # recent good events: (eid, head, t, frac, tail, line, offset)
    ring_pos = 0
    out = sys.stdout if a.out == "-" else open(a.out, "w", encoding="utf-8", newline="\n")
    burst = a.burst if a.burst > 1 else 1
    window: list[str] = []
    pending: list[str] = []
    shuffle = rng.shuffle
    eid_n = 0
    rej_n = 0
    retries = 0
    retry_reoffset = 0
    size = 0
    retry_left = n_retry
    base_left = n_base
    first_date = dates[0]
    bad_cycle = (
        lambda eid, oid: '{"event_id":"%s","order_id":%d,"status":"PAID","updated_at":"%sT10:00:00Z"' % (eid, oid, first_date),
        lambda eid, oid: "[1,2]",
        lambda eid, oid: '{"event_id":"%s","order_id":%d,"updated_at":"%sT10:00:00Z","seq":1}' % (eid, oid, first_date),
        lambda eid, oid: '{"event_id":"%s","order_id":"%d","status":"PAID","updated_at":"%sT10:00:00Z"}' % (eid, oid, first_date),
        lambda eid, oid: '{"event_id":"%s","order_id":%d,"status":"PAID","updated_at":"%s 10:00:00"}' % (eid, oid, first_date),
        lambda eid, oid: '{"event_id":"%s","order_id":%d,"status":"PAID","updated_at":"2024-02-30T10:00:00Z"}' % (eid, oid),
    )

    for slot in range(n_lines):
        if slot in rej_slots:
            oid = 10_000_000 + int(r() * max(n_keys, 1)) * 3
            line = bad_cycle[rej_n % len(bad_cycle)]("x%09d" % rej_n, oid) + "\n"
            rej_n += 1
        elif slot != breach_slot and ring and (base_left == 0 or r() * (retry_left + base_left) < retry_left):
            eid, head, t, frac, tail, line0, off0 = ring[int(r() * len(ring))]
            if r() < 0.5:
                line = line0
            else:
                off = (off0 + 1 + int(r() * 2)) % 3
                line = '{"event_id":"%s%s%s%s}\n' % (eid, head, stamp(t, frac, off), tail)
                retry_reoffset += 1
            retries += 1
            retry_left -= 1
        else:
            t, frac, head, tail = next(events)
            eid = "e%09d" % eid_n
            eid_n += 1
            off = pick_offset()
            if slot == breach_slot:
                line = '{"event_id":"%s%s%s%s,"email":"someone@example.com"}\n' % (eid, head, stamp(t, frac, off), tail)
            else:
                line = '{"event_id":"%s%s%s%s}\n' % (eid, head, stamp(t, frac, off), tail)
                item = (eid, head, t, frac, tail, line, off)
                if len(ring) < ring_size:
                    ring.append(item)
                else:
                    ring[ring_pos] = item
                    ring_pos = (ring_pos + 1) % ring_size
            base_left -= 1
        window.append(line)
        if len(window) >= burst:
            if burst > 1:
                shuffle(window)
            pending.extend(window)
            window = []
            if len(pending) >= 65536:
                chunk = "".join(pending)
                size += len(chunk.encode("utf-8"))
                out.write(chunk)
                pending = []
    if burst > 1:
        shuffle(window)
    pending.extend(window)
    chunk = "".join(pending)
    size += len(chunk.encode("utf-8"))
    out.write(chunk)
    if out is not sys.stdout:
        out.close()
    for _ in events:  # drain (never yields: all base events were consumed)
        raise AssertionError("unconsumed events")

    secs = time.monotonic() - t_start
    print(
        f"gen_events: lines={n_lines} keys={n_keys} good_events={eid_n} retries={retries} "
        f"(re-offset {retry_reoffset}) ties={stats.get('ties', 0)} rejects={rej_n} "
        f"breach={'yes' if breach_slot >= 0 else 'no'} days={a.days} "
        f"size={size} bytes ({size / 2**20:.1f} MiB) seed={a.seed} in {secs:.1f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
