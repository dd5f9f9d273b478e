#!/usr/bin/env bash
# 2026-12-04 (seventh session), call 32. .gpu as built for call 30 (the
# shared-memory sort the default there; the "sort-atomic" row runs the
# atomic one), CUZK_CUDA_ARCHS=90.
#   Per-kernel time, DRAM and SM throughput and instructions of both sorts'
#   kernels (ncu, one pass of metrics), to see why the shared-memory sort
#   (17.1 ms at 2^24) is slower than the atomic one (12.4 ms).
set -u
out="${OUT:-/tmp}"
w=/tmp/call32; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((300 - $(date +%s) + t0)); }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "ncu sort kernels, G1 2^18 / 2^22 / 2^24 (--shrink 2)"
metrics=gpu__time_duration.sum,dram__bytes.sum,smsp__inst_executed.sum
timeout "$(left)" /usr/local/cuda/bin/ncu --clock-control none --csv --metrics "$metrics" \
    -k "regex:msm_sort|msm_digits|msm_histogram|msm_scatter|scan_block|scan_add" --launch-count 4000 \
    ./.gpu/bench_kernels --filter msm_g1 --shrink 2 --reps 1 > "$w/ncu-sort.csv" 2> "$w/ncu-sort.err"
echo "rc $?"; wc -l "$w/ncu-sort.csv"; tail -3 "$w/ncu-sort.err"
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
