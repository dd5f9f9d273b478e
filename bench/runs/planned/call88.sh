#!/usr/bin/env bash
# Planned (twenty-seventh session; every H200 request this session was
# refused or given an H100): the issue-14 headline rows on the
# issue's card, which no call has had since run 46 (main's kernels since:
# the Karatsuba Fq product and the lazy Y3 of run 48). On an H100 it
# stops at once (calls 83-87 measured all of this there).
# (1) NTT 2^27 rows (kernels unchanged since run 42: 38.00 ms forward out
#     of place);
# (2) G1 rows, reps 2 (run 46 on an H200: 98.81 / 385.44 ms at 2^24 /
#     2^26; predicted ~92.5 / ~362 from run 48's H100 ratio);
# (3) the porep-like 2^27 partition with z prepared (run 46: 1451.5 ms;
#     predicted ~1380: the H100 gave 1401.0 in call 83), and 10
#     partitions by 1 and 2 workers (`--compiled-batch 10`, ~40 s more;
#     run 25 on an H200: 1627.0 / 1561.7 ms a partition; the H100 gave
#     1584.4 / 1517.2 in call 84);
# (4) G2 rows if time is left (run 46: 313.2 ms at 2^24; its kernels
#     are unchanged).
# Carry [".gpu/bench_kernels", ".carry/bins.tgz"] (as call 87; call 91 of
# 2026-12-07 would have run it on an H200 but was given an H100); run as
#   CALL_BUDGET_S=560 bash bench/runs/planned/call88.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c88"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
if [ "${mem:-0}" -le 100000 ]; then
  echo "not an H200: nothing to run"
  exit 0
fi
tar -xzf .carry/bins.tgz
stamp "ntt 2^27"
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 60)" ./.gpu/bench_kernels --filter ntt --reps 3 > "$w/ntt.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/ntt.log" | head -12 | cut -c1-110
g1_rows h200 ./.gpu/bench_kernels
stamp "compiled bench 27, reps 2, batch 10"
if [ "$(left)" -ge 270 ]; then
  timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
    --compiled-batch 10 --json-out "$w/bench27.json" > "$w/h200-bench27.log" 2>&1
  echo "rc $?"
  grep -E "compiled bench 2|device path|z prepared|FAIL|passed" "$w/h200-bench27.log" | grep -v "^ok" | cut -c1-400
else
  echo "skipped: $(left) s left"
fi
if [ "$(left)" -gt 70 ]; then
  stamp "rows G2, reps 1"
  timeout "$(( $(left) - 8 ))" ./.gpu/bench_kernels --filter msm_g2 --reps 1 > "$w/g2.log" 2>&1
  echo "rc $?"; grep -E "^msm_g2 vram " "$w/g2.log" | grep "ms (floor" | cut -c1-110
fi
pack
stamp done
