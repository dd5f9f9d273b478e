#!/usr/bin/env bash
# Session 12 GPU run 5: the rest of the sweep (16 GiB and no cap x 1, 2, 3
# workers); run 4 did 1, 2 and 4 GiB before its time ran out.
set -u
out="${OUT:-/tmp}"
mkdir -p "$out/s"
OUT="$out/s" SWEEP_LIMITS="16GiB none" timeout 300 bash .gpu-daemon/gpu-daemon-bench.sh --sweep > "$out/run5-sweep.log" 2>&1
cat "$out/s/sweep.log"
rm -rf "$out/s/sweep" "$out"/s/sweep-daemon-*.log
