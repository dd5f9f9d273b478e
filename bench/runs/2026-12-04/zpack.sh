#!/usr/bin/env bash
# Prepared 2026-12-04 (branch zpack) for the next session: not yet run.
# Binaries: `CUZK_CUDA_ARCHS=90 scripts/gpu-prover-test.sh --prepare`
# (.gpu-prover) at the branch's last commit. Two device calls (each fits
# the ten-minute limit):
#   bash bench/runs/2026-12-04/zpack.sh checks
#     1. the GPU checks, among them z through the upload and back (packed
#        by 0/1 and raw, element for element, bytes sent) and the compiled
#        path with z packed and raw against the CPU
#     2. porep-like 2^24, z packed then raw on the same warm backend
#   bash bench/runs/2026-12-04/zpack.sh 27
#     3. porep-like 2^27, the same
# The bench lines give z's MB and the MB sent. Predicted (the build
# machine, 2 shared cores, could not show a gain: there packing 512 MB took
# about as long as copying it): 2^24 copies 16.2 -> ~9 ms, 537 -> ~85 MB
# sent; 2^27 copies ~130 -> ~70-85 ms, 4295 -> ~690 MB sent (aux 86% 0 or
# 1); z raw as before; every proof equal.
set -u
out="${OUT:-/tmp}"
w=/tmp/zpack; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((570 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
bench() {
    local log="$1"
    stamp "compiled bench $log"
    timeout "$(( $(left) - 15 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench "$log" --reps 2 > "$w/bench$log.log" 2>&1
    echo "rc $?"; grep -E "compiled bench 2|device path|z raw|host path|streamed|FAIL" "$w/bench$log.log" | grep -v "^ok" | cut -c1-320
}
case "${1:-checks}" in
checks)
    stamp "checks"
    timeout "$(lim 330)" ./.gpu-prover/gpu_prover_test > "$w/checks.log" 2>&1
    echo "rc $?"; grep -E "^FAIL|z (packed|raw) through|compiled on the device, porep|passed, .* failed" "$w/checks.log" | cut -c1-200
    bench 24
    ;;
*) bench "$1" ;;
esac
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
