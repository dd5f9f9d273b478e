#!/usr/bin/env bash
# Call 73 (twenty-second session): where the staged shared-memory sort's
# time goes. It takes 42.3 ms of a G1 2^26 MSM (call 71, H100) for ~31.5
# GB of its own traffic (~10.5 ms at 3 TB/s): ncu on msm_sort_digits /
# msm_sort_place / msm_sort_buckets of one G1 2^24 MSM (the sort-shared
# row; 1 + 13 + 13 launches): time, DRAM bytes, instructions, throughput,
# warp stalls (barrier, long scoreboard, ...), occupancy, shared-memory
# bank conflicts. Call 72's attempt timed out generating 2^26 points
# (bench_kernels then made the largest size's points whatever
# CUZK_MSM_BENCH_LOGS kept; since the twenty-second session's last commit
# it makes the largest kept size's): CUZK_MSM_BENCH_LOGS=24 with --shrink 2
# keeps the 2^24 row and makes 2^24 points either way.
# Binaries: .gpu (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare at
# main), carry [".gpu"], ~120 s plus the start. Not run in the
# twenty-second session (device time spent by refused starts).
set -u
. bench/runs/lib.sh 170 /tmp/c73
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "ncu, shared sort kernels at G1 2^24"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_atom.sum,smsp__inst_executed_op_global_st.sum"
CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 160)" /usr/local/cuda/bin/ncu --clock-control none \
  -k "regex:^msm_sort_(digits|place|buckets)\$" \
  --launch-count 27 --metrics "$metrics" --section WarpStateStats --section Occupancy \
  ./.gpu/bench_kernels --filter msm_g1 --shrink 2 --reps 1 > "$w/ncu.log" 2>&1
echo "rc $?"
gzip -k "$w/ncu.log"
for k in msm_sort_digits msm_sort_place msm_sort_buckets; do
  echo "-- $k (first launch)"
  awk -v k="$k" '$1==k {on=1; next} on && /^  [a-z_]+ \(/ {exit} on' "$w/ncu.log" | grep -E "gpu__time|dram__bytes|inst_executed|throughput|warps_active|bank_conflicts|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|stalled|Warp Cycles" | head -30 | cut -c1-130
done
stamp done
rm -f "$w/ncu.log"
cp -r "$w"/. "$out"/ 2>/dev/null
