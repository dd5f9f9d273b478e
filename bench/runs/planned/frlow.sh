#!/usr/bin/env bash
# Planned 2026-12-05 (fourteenth session; not run: the session's device
# time was spent, the last start refused). Branch frlow: Fr's Montgomery
# rows add m r's two low limb products without multiplying (r's limbs 1
# and 2^32 - 1, INV = -1: m = -e, m * 1 = m, m * (2^32 - 1) = (lo e, hi
# m - [e != 0])). SASS of one Fr product (sm_90): 178 -> 163 IMAD-pipe
# instructions (IMAD.HI.U32 16 -> 2, IMAD.WIDE.U32 16 -> 14), 8 ISETP and
# 8 SEL more on the ALU pipe; ntt_pass_r2x3 80 registers, spills 72 -> 88
# bytes. Build on branch frlow: CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh
# --prepare && CUZK_CUDA_ARCHS=90 bash scripts/gpu-prover-test.sh --prepare
# && tar -czf .carry/frlow.tgz .gpu .gpu-prover (~10 min on 2 cores);
# carry [".carry/frlow.tgz"], ~150 s of device time plus the start.
# If every check passes and the NTT row gains, merge frlow into main.
# On the CPU (fifteenth session, rebased on main 2c8653e): the PTX form of
# the product, emulated instruction by instruction (tests/emu_field.rs,
# emu_ntt's and emu_curve's PTX tests), matches blstrs, and fails with the
# high word's borrow dropped or made unconditional.
#   1. kernel checks (every Fr product, NTT and H case; the new case
#      "field/fr products with zero limbs" takes rows with m = 0).
#   2. card and NTT 2^27 rows. Predicted: Fr product 4.975e10 -> ~5.4e10/s
#      (IMAD-bound, -8.4% IMAD instructions); NTT forward r2x3 44.70 ->
#      ~41.5 ms.
#   3. main's NTT rows on the same card (.gpu-main: main 3258e25, the
#      baseline), ncu of ntt_pass_r2x3 at 2^24 with frlow and with main.
#   4. GPU prover checks.
set -u
. bench/runs/lib.sh 320 /tmp/frlow
mkdir -p "$w/tests" "$w/checks"
tar -xzf .carry/frlow.tgz
tar -xzf .carry/main-bench.tgz
stamp "kernel checks"
OUT="$w/tests" timeout "$(lim 80)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |zero limbs" "$w/tests/run.log" | tail -5 | cut -c1-200
stamp "card, NTT 2^27"
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 40)" ./.gpu/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
echo "rc $?"; grep -E "mul/s|ms \(floor" "$w/ntt.log" | head -9 | cut -c1-200
stamp "baseline: main's NTT 2^27 on the same card"
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 40)" ./.gpu-main/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt-main.json" > "$w/ntt-main.log" 2>&1
echo "rc $?"; grep -E "mul/s|ms \(floor" "$w/ntt-main.log" | head -9 | cut -c1-200
stamp "ncu ntt_pass_r2x3 at 2^24, frlow then main"
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy --section InstructionStats"
metrics=sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for b in gpu gpu-main; do
  CUZK_NTT_BENCH_LOGS=24 timeout "$(lim 45)" /usr/local/cuda/bin/ncu --clock-control none -k regex:ntt_pass_r2x3 --launch-count 3 $sections --metrics "$metrics" \
    ./.$b/bench_kernels --filter ntt --reps 1 > "$w/ncu-$b.log" 2>&1
  echo "rc $? ($b)"; grep -E "pipe_|issue_active|inst_executed.sum|dram__|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Duration|Stall" "$w/ncu-$b.log" | head -30 | cut -c1-150
done
stamp "prover checks"
timeout "$(lim 60)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/run.log" | tail -4 | cut -c1-200
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
