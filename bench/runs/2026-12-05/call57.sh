#!/usr/bin/env bash
# 2026-12-05 (eighteenth session), call 57, ran on an H100 (nvidia-h100-x1;
# output in call57/, the session's log in bench/gpu-kernels.md run 34).
# Planned in the seventeenth session: frlow's call (frlow.sh, now removed:
# every step of it is here) with branch oop's kernels added: the
# out-of-place transforms, whose forward first DIT pass reads bit-reversed
# places and whose inverse last DIF pass writes them (ntt_perm_pass_*), so
# no permutation kernel runs (on main since the seventeenth session,
# not yet run on a GPU). Branch oop = main-frlow + that change (branch
# main-oop-frlow: main with frlow merged, the same code); its other
# kernels' SASS is byte-identical to frlow's (sm_90 cubin sections
# compared), so the in-place rows of .gpu here are frlow's. If frlow's
# checks pass and its rows gain: merge main-oop-frlow (or frlow) into main.
# Builds: .carry/frlow.tgz (.gpu, .gpu-prover of frlow), .carry/oop.tgz
# (.gpu of oop: CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare),
# .carry/main-bench.tgz (.gpu-main of main 3258e25, the baseline).
# carry [".carry/frlow.tgz", ".carry/oop.tgz", ".carry/main-bench.tgz"],
# ~400 s plus the start.
# Predicted: frlow: Fr product 4.975e10 -> ~5.4e10/s, NTT forward r2x3
# 2^27 44.70 -> ~41.5 ms. Out of place: the forward without its bit
# reversal (~2.2 ms at 2^27, 8.6 GB at ~4 TB/s) but its first pass reading
# 128-byte lines at scattered places instead of 16 KB runs: ~-1.5 to -2.2
# ms (forward ~39.5-40 with frlow); the inverse the same less its scaled
# permutation's products moved into the pass (about the same count).
set -u
. bench/runs/lib.sh 400 /tmp/frlow-oop
mkdir -p "$w/tests" "$w/large" "$w/checks"
tar -xzf .carry/frlow.tgz
tar -xzf .carry/oop.tgz
tar -xzf .carry/main-bench.tgz
stamp "kernel checks (frlow's kernels, the out-of-place transforms)"
OUT="$w/tests" timeout "$(lim 80)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |zero limbs" "$w/tests/run.log" | tail -8 | cut -c1-200
grep -c "out of place" "$w/tests/run.log"
stamp "large out-of-place checks (2^24, 2^27, 2^28 against in place)"
timeout "$(lim 75)" ./.gpu/gpu_tests --large --filter "out of place" > "$w/large/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |out of place" "$w/large/run.log" | tail -6 | cut -c1-200
stamp "card, NTT 2^27 (frlow in place, out of place)"
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 45)" ./.gpu/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
echo "rc $?"; grep -E "mul/s|ms \(floor" "$w/ntt.log" | head -16 | cut -c1-200
stamp "baseline: main's NTT 2^27 on the same card"
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 40)" ./.gpu-main/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt-main.json" > "$w/ntt-main.log" 2>&1
echo "rc $?"; grep -E "mul/s|ms \(floor" "$w/ntt-main.log" | head -9 | cut -c1-200
stamp "ncu ntt_pass_r2x3 at 2^24, frlow then main; the permuting pass"
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy --section InstructionStats"
metrics=sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for b in gpu gpu-main; do
  CUZK_NTT_BENCH_LOGS=24 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 45)" /usr/local/cuda/bin/ncu --clock-control none -k regex:ntt_pass_r2x3 --launch-count 3 $sections --metrics "$metrics" \
    ./.$b/bench_kernels --filter ntt --reps 1 > "$w/ncu-$b.log" 2>&1
  echo "rc $? ($b)"; grep -E "pipe_|issue_active|inst_executed.sum|dram__|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Warp Cycles Per Issued|Duration|Stall" "$w/ncu-$b.log" | head -30 | cut -c1-150
done
CUZK_NTT_BENCH_LOGS=24 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 30)" /usr/local/cuda/bin/ncu --clock-control none -k regex:ntt_perm_pass_r2x3 --launch-count 2 $sections --metrics "$metrics" \
  ./.gpu/bench_kernels --filter ntt --reps 1 > "$w/ncu-perm.log" 2>&1
echo "rc $? (perm)"; grep -E "pipe_|issue_active|dram__|Achieved Occupancy|Duration" "$w/ncu-perm.log" | head -12 | cut -c1-150
stamp "prover checks (frlow)"
timeout "$(lim 60)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/run.log" | tail -4 | cut -c1-200
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
