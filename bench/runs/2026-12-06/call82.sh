#!/usr/bin/env bash
# Call 82 (twenty-fourth session; planned as two calls, merged into one
# when the device time left, ~16 min, would not hold both): the prover
# with the Karatsuba Fq products and the lazy Y3 where call 81 measured
# them faster (branch karatsuba at 5a79805: Fq out of line; the inline G1
# build and Fq2's products back on the interleaved rows), and the mul2
# experiment. (1) The prover checks (5a79805). (2) G1 rows, reps 2: the
# karatsuba build (.carry/k82/bench_kernels) against the mul2 build (.gpu,
# branch mul2: the mixed addition's independent Fq products paired in one
# out-of-line call each, the accumulation capped at 168 registers for 3
# blocks an SM); predicted -2..-5% at 2^24 if the accumulation's IMAD
# chains were latency- rather than pipe-bound. (3) The porep-like 2^27
# partition (z prepared, reps 2; ~300 s with its parameter generation):
# predicted from the rows (H MSM -6%, L / A / B1 ~-4% on their dense
# parts, B2 unchanged) ~1451 -> ~1395 ms on an H200, ~1474 -> ~1415 on an
# H100 80GB (main's build on the same kinds: call 75, call 77).
# Carry [".gpu", ".gpu-prover", ".carry"].
set -u
# Logs go straight under $OUT: a run cut short by the device budget keeps them.
. bench/runs/lib.sh "${CALL_BUDGET_S:-585}" "${OUT:-/tmp}/c82"
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "prover checks"
timeout "$(lim 120)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks/run.log" | tail -6 | cut -c1-300
for b in k82 mul2; do
  bin=./.carry/k82/bench_kernels; [ $b = mul2 ] && bin=./.gpu/bench_kernels
  stamp "rows G1, $b, reps 2"
  timeout "$(lim 70)" $bin --filter msm_g1 --reps 2 > "$w/g1-$b.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram  " "$w/g1-$b.log" | grep "ms (floor" | cut -c1-110
done
stamp "compiled bench 27, karatsuba, reps 2"
if [ "$(left)" -gt 290 ]; then
  timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
  echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|sort|unsplit|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
else
  echo "skipped: $(left) s left, the partition needs ~300 (parameter generation, compile, runs)"
fi
stamp done
