#!/usr/bin/env bash
# 2026-12-03 (fifth session), call 20: branch ring, second step (issue 12 item 4's next
# step): a streamed compiled system's row blocks copied through the pinned
# staging ring into one set of staging buffers (was: pageable copies into
# fresh buffers for every block). Binaries .gpu-prover built from ring with
# CUZK_CUDA_ARCHS=90.
#   1. every GPU prover check (the streamed ones among them)
#   2. porep-like 2^24 by the compiled path, resident, host and streamed
#      (call 16 on main: streamed 642.6 ms median, abc 234.0 ms; predicted
#      ~510 ms in call 19, measured 643.6, abc 262.9: the host pass that
#      rebased each block's row starts cost more than the copies; now the
#      starts go up as they are and a kernel rebases them: predicted abc
#      ~85 ms, streamed ~465 ms)
set -u
out="${OUT:-/tmp}"
w=/tmp/call20; rm -rf "$w"; mkdir -p "$w"
t0=$(date +%s); left() { echo $((240 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "prover checks"
mkdir -p "$w/prover"
OUT="$w/prover" timeout "$(lim 120)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|streamed|passed, " "$w/prover/run.log" | grep -v "injected" | tail -10 | cut -c1-200
stamp "compiled bench 24"
timeout "$(lim 100)" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 24 --reps 2 > "$w/bench24.log" 2>&1
echo "rc $?"; grep -E "compiled bench|device path|host path|streamed|passed, " "$w/bench24.log" | cut -c1-300
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
