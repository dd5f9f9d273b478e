#!/usr/bin/env bash
# Call 96 (planned 2026-12-07, thirtieth session, with 235 s of device
# time left, too little to start a machine): the sort's tmp stored apart
# (branch sortsoa: ids u32 and low bits u16, 6 bytes an entry; the bucket
# pass's count reads 2 bytes an entry instead of 8) against main's.
# Binaries (CUZK_CUDA_ARCHS=90): .carry/base = main at 8341b45 (kernels as
# at 80140d7), .carry/soa = sortsoa. Carry [".carry/base/bench_kernels",
# ".carry/soa"].
# (1) sortsoa's MSM checks (51 at 80140d7: every size, both groups, every
#     build and form, windows of 21 and 22 bits);
# (2) G1 2^24 and 2^26, reps 1, CUZK_MSM_PROFILE (the sort phase), each
#     binary. Predicted: the sort 8.1 -> ~7.0-7.5 ms at 2^24 (run 44's ncu:
#     the passes half memory-bound, bucket's count reading 8 B for 2),
#     ~-4 ms at 2^26 (-1% of the MSM).
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-200}" "${OUT:-/tmp}/c96"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "sortsoa MSM checks"
timeout "$(lim 40)" ./.carry/soa/gpu_tests --filter msm > "$w/checks-msm.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-msm.log" | tail -6 | cut -c1-300
for b in base soa; do
  stamp "G1 2^24, 2^26 profiled, $b"
  CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_LOGS=24,26 timeout "$(lim 70)" ./.carry/$b/bench_kernels --filter msm_g1 --reps 1 > "$w/g1-$b.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram( sort-shared-unstaged)? " "$w/g1-$b.log" | grep "ms (floor" | cut -c1-100
  grep -E "^msm profile msm_g1 n=(16777216|67108864) c=20" "$w/g1-$b.log" \
    | sed -E 's/.*(n=[0-9]+) c=20: .*(sort [0-9.]+).*(accumulate [0-9.]+).*/\1 \2 \3/' | head -12
done
pack
stamp done
