#!/usr/bin/env bash
# Session 12 GPU run 2: the daemon benchmarks (issue 11) with porep-like
# kinds handing the engine witnesses (a/b/c on the GPU), full and capped.
set -u
out="${OUT:-/tmp}"
echo "== daemon $(date +%T)"
OUT="$out" timeout 330 bash .gpu-daemon/gpu-daemon-bench.sh > "$out/run2-daemon.log" 2>&1
grep -E "^== |wall|proofs_per_min|busy|FAILED|passed" "$out/run2-daemon.log" | head -60
mkdir -p "$out/capped"
echo "== capped $(date +%T)"
OUT="$out/capped" timeout 150 bash .gpu-daemon/gpu-daemon-bench.sh --capped > "$out/run2-capped.log" 2>&1
grep -E "^== |wall|failed|FAILED|passed" "$out/run2-capped.log" | head -30
echo "== done $(date +%T)"
