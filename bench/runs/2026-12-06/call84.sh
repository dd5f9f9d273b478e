#!/usr/bin/env bash
# Call 84 (twenty-sixth session): main's kernels (the Karatsuba Fq product
# out of line and the lazy Y3, adopted in run 48) in the issue's
# benchmarks that have not seen them. Call 83 (H100) measured one
# porep-like 2^27 partition at 1401.0 ms with z prepared (1473.6 in call
# 77 on the same kind). Here:
# (1) on an H200 only: the NTT 2^27 rows (unchanged kernels; run 42:
#     38.00 ms forward out of place);
# (2) on an H200 only: the G1 rows (run 46 on an H200: 98.81 / 385.44 ms
#     at 2^24 / 2^26 before the Karatsuba product; predicted ~92.5 /
#     ~362 from run 48's H100 ratio);
# (3) first: the partition in batches, `--compiled-batch 10`: one partition, 10
#     by 1 worker and by 2 (call 77 on an H100: 1473.6 / 1669.3 / 1622.7
#     ms). Predicted -70 ms each (the MSMs' share), ~1400 / ~1600 /
#     ~1550 on an H100; on an H200 one partition ~1380 (run 46: 1451.5).
# Binaries: .gpu/bench_kernels and .gpu-prover at 22dc6d2's code (main's
# kernels since; later commits change comments and notes only), carry
# [".gpu/bench_kernels", ".gpu-prover"]; ~420 s plus the start.
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-540}" "${OUT:-/tmp}/c84"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
stamp "compiled bench 27, batch 10"
timeout "$(( $(left) - 8 - (mem > 100000 ? 130 : 0) ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --compiled-batch 10 --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|worker|unsplit|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
if [ "${mem:-0}" -gt 100000 ] && [ "$(left)" -gt 40 ]; then
  stamp "ntt 2^27 (H200)"
  CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 60)" ./.gpu/bench_kernels --filter ntt --reps 3 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
  echo "rc $?"; grep -E "ms \(floor" "$w/ntt.log" | head -12 | cut -c1-110
  stamp "rows G1 (H200), reps 2"
  timeout "$(lim 80)" ./.gpu/bench_kernels --filter msm_g1 --reps 2 --json-out "$w/g1.json" > "$w/g1.log" 2>&1
  echo "rc $?"; grep -E "^msm_g1 vram( inline-fq)? " "$w/g1.log" | grep "ms (floor" | cut -c1-110
fi
pack
stamp done
