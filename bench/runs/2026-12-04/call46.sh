#!/usr/bin/env bash
# 2026-12-04 (tenth session), call 46. .gpu and .gpu-prover at main + H's
# permutation back out of place in 32x32 tiles (h_finish_tiled) and the
# device pool keeping all it reserved by default (CUZK_CUDA_ARCHS=90),
# carried as .carry/bins.tgz.
#   1. NTT checks (compute_h against the CPU, 2^0..2^20-5: the tiled kernel
#      from 2^10 on).
#   2. Prover checks (conformance, bellperson, staging plans, caps, faults,
#      two workers) with the new H and pool.
#   3. porep-like 2^27 compiled bench, device path only, reps 2 (z prepared;
#      the pool as before, a quarter; H's steps timed).
#   Predicted: the permutation back 26.1 -> ~8 ms (coalesced, 3 products an
#   element instead of 3.5), H 275 -> ~257 ms with the pool keeping all;
#   upload + H ~285-290 ms.
set -u
out="${OUT:-/tmp}"
w=/tmp/call46; rm -rf "$w"; mkdir -p "$w/prover"
t0=$(date +%s); left() { echo $((575 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
stamp "NTT checks"
timeout "$(lim 90)" ./.gpu/gpu_tests --filter ntt/ > "$w/checks-ntt.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/checks-ntt.log" | tail -4 | cut -c1-200
stamp "compiled bench 27"
timeout "$(lim 300)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|pool keeps|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp "prover checks"
OUT="$w/prover" timeout "$(( $(left) - 8 ))" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, " "$w/prover/run.log" | tail -6 | cut -c1-200
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
