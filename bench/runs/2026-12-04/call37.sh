#!/usr/bin/env bash
# 2026-12-04 (eighth session), call 37. Same binaries as call 35 (.gpu,
# .gpu-prover at 20ee63c).
#   1. G1 2^26 rows again (call 35: 397.8 ms; how steady is <= 400?)
#   2. 0/1 sum 2^26 (squares in its additions: 18.28 -> ~17.6 predicted)
#      and NTT 2^27 (unchanged, 44.65)
#   3. ncu of the first msm_digits at 2^26 (6-7.6 ms against 0.6 at 2^24
#      for 4x the points: why?)
#   4. porep-like 2^26 compiled bench with 12 then 16 copy threads (call 36
#      at 2^27 with 16: raw upload 97.1 ms against 123.2 at 12 in call 31,
#      another machine start; call 26 at 2^24: 16 slower than 12)
set -u
out="${OUT:-/tmp}"
w=/tmp/call37; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((480 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "G1 2^26 rows"
CUZK_MSM_BENCH_LOGS=26 CUZK_MSM_PROFILE=1 timeout "$(lim 70)" ./.gpu/bench_kernels --filter msm_g1 --reps 3 --json-out "$w/g1-26.json" > "$w/g1-26.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/g1-26.log" | head -3 | cut -c1-70
stamp "0/1 sum and NTT 2^27"
timeout "$(lim 60)" ./.gpu/bench_kernels --filter sum_selected --reps 3 --json-out "$w/sum.json" > "$w/sum.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/sum.log" | cut -c1-70
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 60)" ./.gpu/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/ntt.log" | head -4 | cut -c1-70
stamp "ncu msm_digits 2^26"
CUZK_MSM_BENCH_LOGS=26 timeout "$(lim 110)" /usr/local/cuda/bin/ncu --clock-control none -k msm_digits --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --csv \
    ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/ncu-digits.csv" 2> "$w/ncu-digits.err"
echo "rc $?"; grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|Stall Long|Achieved Occ" "$w/ncu-digits.csv" | cut -c1-200 | head -12
for t in 12 16; do
    stamp "compiled bench 26, $t copy threads"
    CUZK_COPY_THREADS=$t timeout "$(lim 110)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 26 --reps 3 > "$w/bench26-$t.log" 2>&1
    echo "rc $?"; grep -E "compiled bench 2|device path|z packed" "$w/bench26-$t.log" | grep -v "^ok" | cut -c1-260
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
