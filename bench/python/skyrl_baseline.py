#!/usr/bin/env python3
"""A baseline SQL tool doing what SkyRL-SQL's tool does per call, for bench/env.bench.ts to compare against.

Per query: a new sqlite3 connection, BEGIN, execute, fetchall, rollback, close; the rows go into a pandas
DataFrame rendered with to_string(); an observation longer than 9,000 characters is re-rendered from the first
50 rows and cut to 9,000 characters. Queries run on a ThreadPoolExecutor, each with a wall-clock timeout.

usage: skyrl_baseline.py IN.jsonl OUT.jsonl [--workers N] [--timeout-s S]
Input lines {"id", "db", "sql"} (db relative to the input file's directory); output lines {"id", "ok", "chars"}.
Prints one JSON summary line: {"count", "errors", "timeouts", "wall_s", "qps"}.
"""
import argparse
import concurrent.futures as cf
import json
import os
import sqlite3
import sys
import time

import pandas as pd

MAX_CHARS = 9000
MAX_ROWS_WHEN_LONG = 50


def run_one(db_path, sql):
    conn = sqlite3.connect(db_path, check_same_thread=False)
    try:
        cur = conn.cursor()
        conn.execute("BEGIN TRANSACTION;")
        cur.execute(sql)
        rows = cur.fetchall()
        columns = [d[0] for d in (cur.description or [])]
        conn.rollback()
    finally:
        conn.close()
    df = pd.DataFrame(rows, columns=columns)
    text = df.to_string()
    if len(text) > MAX_CHARS:
        text = df.head(MAX_ROWS_WHEN_LONG).to_string()[:MAX_CHARS]
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--timeout-s", type=float, default=5.0)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.inp))
    items = []
    with open(args.inp, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                o = json.loads(line)
                items.append((o.get("id"), os.path.join(base, o["db"]), o["sql"]))

    started = time.perf_counter()
    results = [None] * len(items)
    with cf.ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_one, db, sql) for (_, db, sql) in items]
        for i, fut in enumerate(futures):
            try:
                text = fut.result(timeout=args.timeout_s)
                results[i] = {"id": items[i][0], "ok": True, "chars": len(text)}
            except cf.TimeoutError:
                # Threads cannot be killed: the query keeps running; the caller only stops waiting.
                results[i] = {"id": items[i][0], "ok": False, "timeout": True, "chars": 0}
            except Exception as e:  # noqa: BLE001 - every SQL error is an observation
                results[i] = {"id": items[i][0], "ok": False, "chars": len(f"{type(e).__name__}: {e}")}
        wall = time.perf_counter() - started
        with open(args.out, "w", encoding="utf-8") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
        summary = {
            "count": len(items),
            "errors": sum(1 for r in results if not r["ok"]),
            "timeouts": sum(1 for r in results if r.get("timeout")),
            "wall_s": wall,
            "qps": len(items) / wall if wall > 0 else None,
        }
        print(json.dumps(summary))
        sys.stdout.flush()
        # Do not wait for runaway threads at exit.
        os._exit(0)


if __name__ == "__main__":
    main()
