#!/usr/bin/env bash
# 2026-12-04 (ninth session), call 42. Binaries at a7aa868 (the 0/1 form
# made beside synthesis, H's fused finish; what came after is refactoring),
# CUZK_CUDA_ARCHS=90, carried as .carry/bins.tgz (.gpu-prover, .gpu-daemon).
#   1. the daemon under load, `gpu-daemon-bench.sh --quick`: porep-like-20,
#      200 jobs from 16 clients, every proof verified by the daemon; the
#      synthesis workers now make each witness's 0/1 form (call 17: 1754
#      proofs/min, GPU busy 0.986). Predicted: about the same (at 2^20 the
#      upload was ~5 ms of ~68 ms per partition; the form costs ~1 ms of
#      synthesis), 0 failed, 200/200 verified.
#   2. porep-like 2^27 compiled bench with 16 copy threads (12 in calls
#      40/41: z prepared copies 21.3 / 25.1 ms for 652 MB, 26-31 GB/s, below
#      the link's 55): if the ring's host side bounds the prepared upload,
#      predicted ~18-22 ms.
set -u
out="${OUT:-/tmp}"
w=/tmp/call42; rm -rf "$w"; mkdir -p "$w/daemon"
tar -xzf .carry/bins.tgz
t0=$(date +%s); left() { echo $((560 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
stamp "daemon --quick"
OUT="$w/daemon" timeout "$(lim 200)" bash .gpu-daemon/gpu-daemon-bench.sh --quick > "$w/daemon/run.log" 2>&1
echo "rc $?"; grep -E "proofs/min|proofs_per_min|busy|failed|verified" "$w/daemon/run.log" | tail -8 | cut -c1-300
stamp "compiled bench 27, 16 copy threads"
CUZK_COPY_THREADS=16 timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|FAIL" "$w/bench27.log" | grep -v "^ok" | cut -c1-330
stamp done
rm -f "$w"/daemon/*.tgz.tmp
tar -C "$w" -czf "$out/logs.tgz" .
