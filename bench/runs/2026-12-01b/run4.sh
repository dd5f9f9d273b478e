#!/usr/bin/env bash
# Session 12 GPU run 4: the daemon with max_batch_size = 1 (porep-like-20,
# 200 jobs from 16 clients, and porep-like-24 x 10 partitions), then the
# sweep of VRAM caps x workers on mixed porep-like-20/22/24 jobs.
set -u
out="${OUT:-/tmp}"
which python3 curl > "$out/tools.txt" 2>&1
echo "== daemon batch 1 $(date +%T)"
mkdir -p "$out/b1"
OUT="$out/b1" MAX_BATCH=1 timeout 200 bash .gpu-daemon/gpu-daemon-bench.sh --quick > "$out/run4-b1.log" 2>&1
grep -E "^== |wall|proofs_per_minute|busy_fraction\"|FAILED|passed" "$out/run4-b1.log" | head -30
rm -f "$out"/b1/*.json
echo "== sweep $(date +%T)"
mkdir -p "$out/sweep-out"
OUT="$out/sweep-out" timeout 330 bash .gpu-daemon/gpu-daemon-bench.sh --sweep > "$out/run4-sweep.log" 2>&1
cat "$out/sweep-out/sweep.log"
echo "== done $(date +%T)"
