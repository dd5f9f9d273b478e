#!/usr/bin/env bash
# 2026-12-05 (eighteenth session), call 60, ran on an H100 (output in call60/). Planned: the NTT passes' loads
# four at a time (ntt_load_batched; call 59's source counters: the shared
# store waiting on its single global read held 7.7% of the pass's stall
# samples, the barrier after the loads 5%). Builds
# (CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare):
# .carry/batched.tgz (.gpu with the batched loads), .carry/tiled.tgz
# (main 0c4aef9, the baseline; unpacked here as .gpu-base). Registers
# and spills of every pass kernel as before (ptxas). carry
# [".carry/batched.tgz", ".carry/tiled.tgz"], ~200 s plus the start.
# Predicted (H100): each pass 3-6% shorter: forward out of place 38.47
# -> ~36.5-37.3 ms, in place 41.38 -> ~39.5-40.3.
set -u
. bench/runs/lib.sh 230 /tmp/batched
mkdir -p "$w/tests" .gpu-base
tar -xzf .carry/batched.tgz
tar -xzf .carry/tiled.tgz -C .gpu-base --strip-components=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
stamp "kernel checks (the batched loads in every pass)"
OUT="$w/tests" timeout "$(lim 85)" bash .gpu/gpu-test.sh > "$w/tests/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/tests/run.log" | tail -6 | cut -c1-200
for rep in 1 2; do
  for b in gpu gpu-base; do
    stamp "NTT 2^27 r2x3 and r3x2, $b (round $rep)"
    CUZK_NTT_BENCH_LOGS=27 CUZK_NTT_BENCH_PASSES=r2x3,r3x2 timeout "$(lim 30)" ./.$b/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt-$b-$rep.json" > "$w/ntt-$b-$rep.log" 2>&1
    echo "rc $?"; grep -E "ms \(floor" "$w/ntt-$b-$rep.log" | head -10 | cut -c1-200
  done
done
stall=""
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle dispatch_stall not_selected selected; do
  stall="$stall,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
metrics="gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed$stall"
for b in gpu gpu-base; do
  stamp "ncu ntt_pass_r2x3 at 2^24, $b"
  CUZK_NTT_BENCH_LOGS=24 CUZK_NTT_BENCH_PASSES=r2x3 timeout "$(lim 40)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:^ntt_pass_r2x3\$" --launch-count 3 --metrics "$metrics" \
    ./.$b/bench_kernels --filter ntt --reps 1 > "$w/ncu-$b.log" 2>&1
  echo "rc $?"; grep -E "^  [a-z_0-9]+ \(|gpu__time|issue_active|dram__|stalled" "$w/ncu-$b.log" | head -40 | cut -c1-150
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
