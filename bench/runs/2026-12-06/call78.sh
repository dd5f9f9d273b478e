#!/usr/bin/env bash
# Call 78 (twenty-third session): inside the accumulation (83% of a G1
# MSM at 2^24: 81.8 of ~99 ms) and the split reduction's kernels, for the
# next step on issue 14: ncu on the first G1 2^24 MSM's
# msm_accumulate_g1*, msm_bucket_reduce_g1, msm_group_sums_g1*,
# msm_fold_g1*, msm_window_join_g1* (SpeedOfLight, ComputeWorkloadAnalysis
# (pipes), SchedulerStats, WarpStateStats, Occupancy, LaunchStats). The
# model says the accumulation is at the IMAD floor: if its issue slots are
# well under ~90% busy, latency or occupancy leaves room.
# Binaries: .gpu at main (387d38a's kernels), carry [".gpu"], ~120 s plus
# the start.
set -u
. bench/runs/lib.sh 200 /tmp/c78
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "ncu, accumulate and reduction kernels, G1 2^24"
CUZK_MSM_BENCH_LOGS=24 timeout "$(( $(left) - 10 ))" /usr/local/cuda/bin/ncu --clock-control none \
  -k "regex:^msm_(accumulate|bucket_reduce|group_sums|fold|window_join)_g1" --launch-count 8 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats \
  --section WarpStateStats --section Occupancy --section LaunchStats \
  ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/ncu.log" 2>&1
echo "rc $?"
gzip -k "$w/ncu.log"
grep -E "^  msm_|Duration|Registers Per|Executed Ipc A|Issue Slots Busy|Issued Warp Per|No Eligible|Active Warps Per|Eligible Warps|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Grid Size|Block Size" "$w/ncu.log" | cut -c1-120 | head -120
stamp done
rm -f "$w/ncu.log"
cp -r "$w"/. "$out"/ 2>/dev/null
