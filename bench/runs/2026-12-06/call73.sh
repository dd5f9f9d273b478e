#!/usr/bin/env bash
# Call 73 (twenty-third session): where the staged shared-memory sort's
# time goes, and the warp-shuffle block scan (branch sortscan) measured.
# (1) ncu on msm_sort_digits / msm_sort_place / msm_sort_buckets of one G1
# 2^24 MSM at main (the default row's sort; 1 + 13 + 13 launches): time,
# DRAM bytes, instructions, throughput, warp stalls, occupancy, shared
# bank conflicts. The sort takes 42.3 ms of a G1 2^26 MSM (call 71, H100)
# for ~10.5 ms of its own traffic.
# (2) The G1 2^24 rows (reps 3) of main (.gpu), sortscan (.gpu-scan: the
# block scan by warp shuffles, 3 barriers a scan instead of 20; ptxas:
# msm_sort_place 53 registers, 2 blocks an SM) and sortscan with
# MSM_SORT_PLACE_MIN_BLOCKS=3 (.gpu-scan3: 3 blocks an SM, 20 bytes of
# spills). Prediction: if barriers are the sort's main stall, the sort
# phase at 2^24 (~10.5 ms) drops by 1-3 ms; otherwise no change.
# (3) Their MSM phases at 2^24 (CUZK_MSM_PROFILE, reps 1).
# Binaries: .gpu at main 8800f25, .gpu-scan / .gpu-scan3 at sortscan
# (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare, bench_kernels
# copied), carry [".gpu", ".gpu-scan", ".gpu-scan3"], ~360 s plus the start.
set -u
. bench/runs/lib.sh 420 /tmp/c73
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
for b in gpu gpu-scan gpu-scan3; do
  stamp "rows G1 2^24, $b"
  CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 70)" ./.$b/bench_kernels --filter msm_g1 --reps 3 --json-out "$w/rows-$b.json" > "$w/rows-$b.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram( sort-atomic| sort-shared-unstaged)? +2\^" "$w/rows-$b.log" | grep "ms (floor" | cut -c1-110
done
for b in gpu gpu-scan gpu-scan3; do
  stamp "phases G1 2^24, $b"
  CUZK_MSM_PROFILE=1 CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 50)" ./.$b/bench_kernels --filter msm_g1 --reps 1 > "$w/prof-$b.log" 2>&1
  echo "rc $?"; grep -E "msm profile" "$w/prof-$b.log" | head -3 | cut -c1-300
done
stamp "ncu, sort kernels at G1 2^24 (main)"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_atom.sum,smsp__inst_executed_op_global_st.sum"
CUZK_MSM_BENCH_LOGS=24 timeout "$(( $(left) - 10 ))" /usr/local/cuda/bin/ncu --clock-control none \
  -k "regex:^msm_sort_(digits|place|buckets)\$" \
  --launch-count 27 --metrics "$metrics" --section WarpStateStats --section Occupancy \
  ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/ncu.log" 2>&1
echo "rc $?"
gzip -k "$w/ncu.log"
for k in msm_sort_digits msm_sort_place msm_sort_buckets; do
  echo "-- $k (first launch)"
  awk -v k="$k" '$1==k {on=1; next} on && /^  [a-z_]+ \(/ {exit} on' "$w/ncu.log" | grep -E "gpu__time|dram__bytes|inst_executed|throughput|warps_active|bank_conflicts|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|stalled|Warp Cycles" | head -30 | cut -c1-130
done
stamp done
rm -f "$w/ncu.log"
cp -r "$w"/. "$out"/ 2>/dev/null
