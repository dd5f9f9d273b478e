#!/usr/bin/env bash
# Session 2026-12-01 GPU run 1: kernel checks (spmv), GPU prover checks
# (residency, grants), synthesis benchmark on 16 cores, 2 KiB C2 compiled/full.
set -u
out="${OUT:-/tmp}"
nproc > "$out/nproc.txt"; free -g >> "$out/nproc.txt"
echo "== kernels $(date +%T)"
OUT="$out" timeout 170 bash .gpu/gpu-test.sh --filter spmv --bench --filter spmv --reps 5 > "$out/run1-kernels.log" 2>&1
tail -3 "$out/run1-kernels.log"
echo "== prover $(date +%T)"
OUT="$out" timeout 200 bash .gpu-prover/gpu-prover-test.sh > "$out/run1-prover.log" 2>&1
tail -3 "$out/run1-prover.log"
echo "== synthesis $(date +%T)"
timeout 150 ./.gpu-core/synthesis_bench 16 20 24 --repeat 2 --jobs 16 > "$out/run1-synthesis.log" 2>&1
cat "$out/run1-synthesis.log" | grep -v "^{"
echo "== c2 $(date +%T)"
mkdir -p /tmp/filp
timeout 90 ./.gpu-fil/porep_c2_bench --backend cuda --params /tmp/filp --repeat 3 --cuzk-only --synthesis compiled --json "$out/c2-compiled.json" > "$out/run1-c2-compiled.log" 2>&1
tail -4 "$out/run1-c2-compiled.log"
timeout 60 ./.gpu-fil/porep_c2_bench --backend cuda --params /tmp/filp --repeat 3 --cuzk-only --synthesis full --json "$out/c2-full.json" > "$out/run1-c2-full.log" 2>&1
tail -4 "$out/run1-c2-full.log"
echo "== done $(date +%T)"
