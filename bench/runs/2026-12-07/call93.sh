#!/usr/bin/env bash
# Call 93 (2026-12-07, thirtieth session): the shared-memory sort writing
# its sorted list over the digits' keys (80140d7), on the card at hand
# (planned for an H100, where it matters). Binaries: .gpu from
# `CUZK_CUDA_ARCHS=90 bash scripts/gpu-test.sh --prepare`, .gpu-prover from
# gpu-prover-test.sh --prepare (at cd76bbc: no atomic-sort variant in the
# compiled bench), packed into .carry/bins.tgz.
# (1) every MSM check of gpu_tests (sizes 0 .. 2^16 + 3 and large, both
#     groups, every build and form, windows of 21 and 22 bits): the list
#     now aliases the keys;
# (2) the porep-like 2^27 partition, reps 2, z prepared: predicted on an
#     H100 "this witness: Resident, H MSM in 1 part(s)" (working set ~22.9
#     GB against 24.48 before, 23.69 available) and msm h 723 -> ~700 ms
#     (call 92: G1 2^27 in one MSM 713.6 ms against 2 x 368.6 for two
#     halves), the partition ~1400 -> ~1377 ms; on an H200 unchanged (one
#     part already);
# (3) the prover checks (the caps' pool high-water marks against
#     msm_scratch_bytes' smaller figure), if time is left.
# Carry [".gpu/bench_kernels", ".gpu/gpu_tests", ".carry/bins.tgz"]; run as
#   CALL_BUDGET_S=<budget_left - 150, at most 560> bash bench/runs/planned/call93.sh
set -u
. bench/runs/lib.sh "${CALL_BUDGET_S:-560}" "${OUT:-/tmp}/c93"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
tar -xzf .carry/bins.tgz
stamp "MSM checks"
timeout "$(lim 90)" ./.gpu/gpu_tests --filter msm > "$w/checks-msm.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-msm.log" | tail -6 | cut -c1-300
stamp "compiled bench 27, reps 2"
if [ "$(left)" -ge 290 ]; then
  timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only \
    --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
  echo "rc $?"
  grep -E "compiled bench 2|device path|z prepared|unsplit|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
else
  echo "skipped: $(left) s left, the partition needs ~290"
fi
if [ "$(left)" -gt 100 ]; then
  stamp "prover checks"
  timeout "$(( $(left) - 5 ))" ./.gpu-prover/gpu_prover_test --json-out "$w/checks.json" > "$w/checks-prover.log" 2>&1
  echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-prover.log" | tail -6 | cut -c1-300
fi
pack
stamp done
