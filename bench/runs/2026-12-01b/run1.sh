#!/usr/bin/env bash
# Session 12 (2026-12-01, afternoon) GPU run 1: the spmv kernel checks
# (with upload_z and the range split), the GPU prover checks (with the
# compiled path on the device), and the compiled bench at 2^20 and 2^24.
set -u
out="${OUT:-/tmp}"
nproc > "$out/nproc.txt"; free -g >> "$out/nproc.txt"
echo "== kernels $(date +%T)"
OUT="$out" timeout 120 bash .gpu/gpu-test.sh --filter spmv > "$out/run1-kernels.log" 2>&1
tail -3 "$out/run1-kernels.log"
echo "== prover $(date +%T)"
OUT="$out" timeout 420 bash .gpu-prover/gpu-prover-test.sh --compiled-bench 20,24 --reps 3 > "$out/run1-prover.log" 2>&1
grep -E "FAIL|compiled|passed" "$out/run1-prover.log" | tail -30
echo "== done $(date +%T)"
