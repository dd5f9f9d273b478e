#!/usr/bin/env bash
# Call 89 (twenty-seventh session, H100 is enough): the G1 accumulation
# at 4 blocks an SM (branch g1o4: msm_accumulate_g1o4, __launch_bounds__(128,
# 4), behind CUZK_G1_ACCUMULATE_O4). sm_90 ptxas: 128 registers, a
# 208-byte frame, the Fq callees 124-180 bytes of spills each (their
# saved registers). Call 86's ncu left 12% of the IMAD pipe idle with 3
# warps a scheduler; a fourth warp could fill it if the spills' local
# traffic (L1) stays off the pipe's way. Predicted: between -5% and +10%
# on the G1 rows (G2's o4 lost 4% in run 12 with 1720-byte spills).
# (1) o4's MSM checks against blstrs (gpu_tests --filter msm/g1, env set);
# (2) G1 rows at 2^24 and 2^26, reps 2: main's .gpu/bench_kernels, then
#     the branch's with the env set;
# (3) ncu on the o4 accumulation at 2^24 (as call 86).
# Carry [".gpu/bench_kernels", ".carry/o4.tgz"]; run as
#   CALL_BUDGET_S=400 bash bench/runs/2026-12-06/call89.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-400}" "${OUT:-/tmp}/c89"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mkdir -p /tmp/o4 && tar xzf .carry/o4.tgz -C /tmp/o4
o=/tmp/o4/o4
stamp "o4 checks msm/g1"
CUZK_G1_ACCUMULATE_O4=1 timeout "$(lim 90)" $o/gpu_tests --filter msm/g1 > "$w/o4-checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/o4-checks.log" | tail -4 | cut -c1-300
export CUZK_MSM_BENCH_LOGS=24,26
g1_rows main ./.gpu/bench_kernels
CUZK_G1_ACCUMULATE_O4=1 g1_rows o4 $o/bench_kernels
stamp "ncu o4 accumulation"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis"
CUZK_G1_ACCUMULATE_O4=1 CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 120)" /usr/local/cuda/bin/ncu --clock-control none \
  -k "regex:msm_accumulate_g1o4$" --launch-skip 1 --launch-count 1 $S $o/bench_kernels --filter msm_g1 --reps 1 \
  > "$w/ncu-o4.txt" 2> "$w/ncu-o4.err"
echo "rc $?"; grep -E "Duration|Issue Slots Busy|No Eligible|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Compute \(SM\)|Executed Instructions  " "$w/ncu-o4.txt" | head -12
pack
stamp done
