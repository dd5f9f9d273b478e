#!/usr/bin/env bash
# 2026-12-04 (ninth session), call 44. .gpu-prover at main + the upload
# phase's wait and z allocation timed apart (CUZK_CUDA_ARCHS=90), carried
# as .carry/bins.tgz.
#   porep-like 2^27 compiled bench, device path only, reps 2. Call 43 found
#   a 4.3 GB alloc_scalars alone takes 0.02 ms (the pool reused), so the
#   6-15 ms before the copies (calls 40-42) is predicted to be the wait
#   for work already on the device's stream, not the allocation.
set -u
out="${OUT:-/tmp}"
w=/tmp/call44; rm -rf "$w"; mkdir -p "$w"
tar -xzf .carry/bins.tgz
timeout 500 ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-360
tar -C "$w" -czf "$out/logs.tgz" .
