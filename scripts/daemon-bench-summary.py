#!/usr/bin/env python3
"""Summaries of gpu-daemon-bench.sh's JSON files (one reader for both).

    daemon-bench-summary.py sweep DIR
        One line for a --sweep setting: failed / completed / verified jobs
        of DIR's s20.json, s22.json and s24.json (`cuzk bench batch --json`),
        and the per-GPU pool high-water marks and parameter uploads of
        DIR's sstatus.json (the daemon's /status).
    daemon-bench-summary.py multi DIR
        --multi's per-GPU lines: partitions proved and busy seconds between
        DIR's status-warm.json and status-multi.json (`cuzk status --json`),
        then the two batches' figures (multi-big.json, multi-critical.json).

A file that is missing or not JSON reads as {"error": ...}: its jobs count
as failed, and the line still prints.
"""
import json
import sys


def load(directory, name):
    try:
        with open(f"{directory}/{name}") as f:
            return json.load(f)
    except Exception as e:  # missing, truncated: say so in the summary
        return {"error": f"{name}: {e}"}


def sweep(d):
    jobs = [load(d, n) for n in ("s20.json", "s22.json", "s24.json")]
    devs = load(d, "sstatus.json").get("devices") or []
    devs = [x for x in devs if isinstance(x, dict)]
    print("failed", sum(j.get("failed", 1) for j in jobs),
          "completed", sum(j.get("completed", 0) for j in jobs),
          "verified", sum(j.get("proofs_verified", 0) for j in jobs),
          "not_verified", sum(j.get("proofs_not_verified", 0) for j in jobs),
          "pool_high_MiB", [round((x.get("pool_high_bytes") or 0) / 2**20) for x in devs],
          "param_uploads", [x.get("param_uploads") for x in devs],
          "wall_s", [round(j.get("wall_s", 0), 1) for j in jobs])


def multi(d):
    warm, st = load(d, "status-warm.json"), load(d, "status-multi.json")
    before = {x.get("index"): x for x in warm.get("devices") or []}
    for x in st.get("devices") or []:
        w = before.get(x.get("index"), {})
        print("gpu", x.get("index"), x.get("name"),
              "partitions", x.get("partitions_proved", 0) - w.get("partitions_proved", 0),
              "busy_s", round(x.get("busy_s", 0) - w.get("busy_s", 0), 1),
              "busy_fraction_window", x.get("busy_fraction_window"),
              "healthy", x.get("healthy"))
    keys = ("ok", "completed", "failed", "proofs_verified", "wall_s", "proofs_per_minute",
            "seconds_per_job", "gpu_busy_fraction", "median_ms", "error")
    for name, f in (("big x10", "multi-big.json"), ("critical", "multi-critical.json")):
        j = load(d, f)
        print(name, {k: j.get(k) for k in keys if k in j})


if __name__ == "__main__":
    modes = {"sweep": sweep, "multi": multi}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        sys.exit("usage: daemon-bench-summary.py sweep|multi DIR")
    modes[sys.argv[1]](sys.argv[2])
