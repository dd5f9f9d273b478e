#!/usr/bin/env bash
# 2026-12-04 (ninth session), call 43. .gpu at main + bench_kernels' alloc
# lines (CUZK_CUDA_ARCHS=90), carried as .carry/bins.tgz.
#   Large device allocations: 2^27 scalars (4.3 GB) by alloc_scalars (the
#   upload's z) in three patterns. Inside a partition such an allocation
#   took 5.9-14.5 ms (calls 40-42) and the MSM's 3.5 GB keys 3.4 ms (call
#   38) though the pool did not grow. Predicted: ~0.1 ms when the same
#   size was just freed (the pool's block reused whole); ~4 ms (1 ms/GB)
#   in the patterns that leave the freed block split, if remapping is the
#   cost.
set -u
out="${OUT:-/tmp}"
w=/tmp/call43; rm -rf "$w"; mkdir -p "$w"
tar -xzf .carry/bins.tgz
timeout 240 ./.gpu/bench_kernels --filter alloc --reps 1 > "$w/alloc.log" 2>&1
echo "rc $?"; grep -E "^alloc|card" "$w/alloc.log" | cut -c1-300
tar -C "$w" -czf "$out/logs.tgz" .
