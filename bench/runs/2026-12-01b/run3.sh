#!/usr/bin/env bash
# Session 12 GPU run 3: porep-like 2^27, one partition, compiled path on
# the device against the host path (issue 12's 2^27 figures), then the
# 2 KiB PoRep C2 with witnesses proved on the device.
set -u
out="${OUT:-/tmp}"
free -g > "$out/free.txt"
echo "== c2 $(date +%T)"
mkdir -p /tmp/filp
timeout 100 ./.gpu-fil/porep_c2_bench --backend cuda --params /tmp/filp --repeat 3 --cuzk-only --synthesis compiled --json "$out/c2-compiled.json" > "$out/run3-c2-compiled.log" 2>&1
tail -4 "$out/run3-c2-compiled.log"
echo "== 2^27 $(date +%T)"
OUT="$out" timeout 450 bash .gpu-prover/gpu-prover-test.sh --bench-only --compiled-bench 27 --reps 2 > "$out/run3-prover.log" 2>&1
grep -E "compiled bench|device path|host path|FAIL|passed" "$out/run3-prover.log" | tail -20
free -g >> "$out/free.txt"
echo "== done $(date +%T)"
