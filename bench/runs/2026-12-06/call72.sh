#!/usr/bin/env bash
# Call 72 (twenty-second session), on an H200: (1) the MSM rows with the
# staged shared-memory sort against the atomic one (call 70 on an H100:
# G1 2^24 104.52 -> 102.00 ms, 2^26 400.81 -> 396.42, G2 2^24 326.97 ->
# 324.50; the H200's standing figures: G1 2^26 394.9, 2^24 103.2, G2 2^24
# 324.8 with the atomic sort); (2) ncu on the sort kernels at G1 2^24
# (time, DRAM bytes, warp stalls, occupancy of msm_sort_digits / place /
# buckets, and of msm_histogram / msm_scatter for reference): the staged
# sort is 4x its own traffic's time (call 71: 42.3 ms at 2^26 for ~31.5
# GB); (3) the 2^27 partition on the whole H200 with the shared sort
# (predicted ~1447 ms z prepared against run 43's 1460.2; the bench also
# runs the atomic sort in the same process).
# Binaries: .gpu (c0ceb05's kernels; its default is the atomic sort, the
# rows carry both) and .gpu-prover (c0ceb05, CUZK_MSM_SORT=shared), carry
# [".gpu", ".gpu-prover"], ~500 s plus the start.
set -u
. bench/runs/lib.sh 540 /tmp/c72
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "msm rows, reps 3"
timeout "$(lim 150)" ./.gpu/bench_kernels --filter msm_g --reps 3 --json-out "$w/msm.json" > "$w/msm.log" 2>&1
echo "rc $?"; grep -E "^msm_g[12] vram( sort-shared| sort-shared-unstaged)? +2\^" "$w/msm.log" | grep "ms (floor" | cut -c1-110
stamp "ncu, sort kernels at G1 2^24"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum"
CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 120)" /usr/local/cuda/bin/ncu --clock-control none \
  -k "regex:^(msm_sort_digits|msm_sort_place|msm_sort_buckets|msm_digits|msm_histogram|msm_scatter)\$" \
  --launch-count 60 --metrics "$metrics" --section WarpStateStats --section Occupancy \
  ./.gpu/bench_kernels --filter msm_g1 --reps 1 > "$w/ncu.log" 2>&1
echo "rc $?"
gzip -k "$w/ncu.log"
grep -E "^  [a-z_0-9]+ \(|gpu__time|dram__bytes|inst_executed|throughput|warps_active|bank_conflicts|op_red|op_atom|Achieved Occupancy|Stall|stall" "$w/ncu.log" | head -120 | cut -c1-150
stamp "compiled bench 27, whole H200, reps 2 (shared sort; atomic too)"
CUZK_MSM_SORT=shared timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|sort|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
rm -f "$w/ncu.log"
cp -r "$w"/. "$out"/ 2>/dev/null
