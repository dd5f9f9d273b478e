#!/usr/bin/env bash
# 2026-12-05 (eighteenth session), call 58, ran on an H100 (asked as
# nvidia-h200; output in call58/, bench/gpu-kernels.md run 35). Planned: the in-place bit
# reversal in tiles (ntt_bitrev_tiled, from 2^10 on), and r2x3's pass at
# four blocks an SM (64 registers, 340 B of spills) to test run 34's
# reading that the pass is latency-bound (37% occupancy, half the issue
# slots idle). Builds (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh
# --prepare): .carry/tiled.tgz (.gpu: main with ntt_bitrev_tiled),
# .carry/r2x4.tgz (.gpu-r2x4: the same with
# CUZK_NVCC_DEFINES=CUZK_NTT_R2X3_MIN_BLOCKS=4), .carry/oop.tgz (.gpu of
# the code before the tiles = main 450a785's kernels; unpacked here as
# .gpu-base). carry [".carry/tiled.tgz", ".carry/r2x4.tgz",
# ".carry/oop.tgz"], ~420 s plus the start.
# Predicted (H100, call 57: forward r2x3 45.83, inverse 50.80 in place;
# ntt_bitrev ~7.9 ms at 2^27 = 8.6 GB at ~1.1 TB/s): the tiles near the
# copy rate (~3.0-3.5 ms), so in-place forward ~41 ms, inverse ~46;
# r2x4: unknown sign (more warps against 340 B of spills): a gain means
# the pass wants warps more than registers.
set -u
. bench/runs/lib.sh 420 /tmp/tiled
mkdir -p "$w/tests" "$w/large" .gpu-base
tar -xzf .carry/tiled.tgz
tar -xzf .carry/r2x4.tgz
tar -xzf .carry/oop.tgz -C .gpu-base --strip-components=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
stamp "kernel checks (the tiled bit reversal in every in-place NTT from 2^10)"
OUT="$w/tests" timeout "$(lim 85)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-200
stamp "large: out of place against in place (now tiled) at 2^24, 2^27, 2^28"
timeout "$(lim 120)" ./.gpu/gpu_tests --large --filter "out of place" > "$w/large/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |out of place" "$w/large/run.log" | tail -6 | cut -c1-200
for b in gpu gpu-base gpu-r2x4; do
  stamp "NTT 2^27 r2x3, $b"
  CUZK_NTT_BENCH_LOGS=27 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 30)" ./.$b/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt-$b.json" > "$w/ntt-$b.log" 2>&1
  echo "rc $?"; grep -E "Fr mul/s|ms \(floor" "$w/ntt-$b.log" | head -8 | cut -c1-200
done
stall=""
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle not_selected selected dispatch_stall no_instruction branch_resolving drain membar; do
  stall="$stall,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
metrics="dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread$stall"
stamp "ncu at 2^24: the bit reversals (tiled, then base), r2x3's passes (stalls; base and r2x4)"
for kb in "ntt_bitrev_tiled gpu" "ntt_bitrev gpu-base" "ntt_pass_r2x3 gpu-base" "ntt_pass_r2x3 gpu-r2x4"; do
  set -- $kb
  CUZK_NTT_BENCH_LOGS=24 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 40)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:^$1\$" --launch-count 3 --metrics "$metrics" \
    ./.$2/bench_kernels --filter ntt --reps 1 > "$w/ncu-$1-$2.log" 2>&1
  echo "rc $? ($1, $2)"; grep -E "^  [a-z_0-9]+ \(|dram__|gpu__time|issue_active|fmaheavy|warps_active|registers|stalled" "$w/ncu-$1-$2.log" | awk '$NF+0 >= 0.05 || !/stalled/' | head -40 | cut -c1-150
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
