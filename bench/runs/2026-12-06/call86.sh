#!/usr/bin/env bash
# Call 86 (twenty-seventh session, right after call 85 on the same warm
# H100): ncu inside the G1 accumulation of both builds of call 85, to see
# why g1b's 5.3% fewer IMAD-pipe units a mixed addition gave 0.3%.
# msm_accumulate_g1, second launch (the first G1 2^24 MSM after its
# warm-up), CUZK_MSM_BENCH_LOGS=24. Carry [".gpu/bench_kernels",
# ".carry/g1b.tgz"] as call 85. (The call ran this as one command line;
# its first try passed --filter "msm_g1 vram", which names no group, and
# profiled nothing.)
set -u
mkdir -p /tmp/g1b && tar xzf .carry/g1b.tgz -C /tmp/g1b
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis"
for b in main:./.gpu/bench_kernels g1b:/tmp/g1b/g1b/bench_kernels; do
  n=${b%%:*}; p=${b#*:}
  echo "== $n $(date +%T)"
  CUZK_MSM_BENCH_LOGS=24 timeout 200 /usr/local/cuda/bin/ncu --clock-control none -k "regex:msm_accumulate_g1$" \
    --launch-skip 1 --launch-count 1 $S $p --filter "msm_g1" --reps 1 > "$OUT/ncu-$n.txt" 2> "$OUT/ncu-$n.err"
  echo "rc $?"
  grep -E "Duration|Issue Slots Busy|No Eligible|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc Active" "$OUT/ncu-$n.txt" | head -12
done
