#!/usr/bin/env bash
# Prepared 2026-12-04 (branch zpack) for the next session: not yet run.
# Binaries: `CUZK_CUDA_ARCHS=90 scripts/gpu-prover-test.sh --prepare`
# (.gpu-prover) at the branch's last commit.
#   1. the GPU checks, among them z through the upload and back (packed by
#      0/1 and raw, byte for byte) and the compiled path with z packed and
#      raw against the CPU
#   2. porep-like 2^24 and 2^27, z packed then raw on the same warm
#      backend (the bench prints z's MB and the MB sent). Predicted: 2^24
#      copies 16.2 -> ~9 ms, 537 -> ~85 MB sent; 2^27 copies ~130 ->
#      ~70 ms, 4295 -> ~680 MB sent (aux 86% 0 or 1); proofs equal.
set -u
out="${OUT:-/tmp}"
w=/tmp/zpack; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((570 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "checks"
timeout "$(lim 240)" ./.gpu-prover/gpu_prover_test > "$w/checks.log" 2>&1
echo "rc $?"; grep -E "^FAIL|z (packed|raw) through|compiled on the device, porep|passed, .* failed" "$w/checks.log" | cut -c1-200
stamp "compiled bench 24"
timeout "$(lim 150)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 3 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|host path|FAIL" "$w/bench24.log" | grep -v "^ok" | cut -c1-320
stamp "compiled bench 27"
timeout "$(( $(left) - 15 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|host path|streamed|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-320
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
