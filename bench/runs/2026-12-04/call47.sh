#!/usr/bin/env bash
# 2026-12-04 (tenth session), call 47. .gpu-prover, .gpu-32g and
# .gpu-daemon at main + z freed after the B MSMs instead of before them
# (CUZK_CUDA_ARCHS=90), carried as .carry/bins.tgz.
#   1. The daemon under load (`gpu-daemon-bench.sh --quick`: porep-like-20,
#      200 jobs, 16 clients, 2 workers): the pool now keeps all it
#      reserved and witnesses are dropped apart; 1936 proofs/min in call 42.
#   2. Filecoin 2 KiB C2 end to end (126.4 ms in call 41), verify_seal.
#   3. porep-like 2^27 compiled bench, device path only, reps 3.
#   Predicted: z's allocation 5-8 -> ~0 ms (its block freed whole, no
#   longer split by the B MSMs' temporaries), upload + H ~285-290 ms; the
#   daemon and the 2 KiB C2 as before or a little faster (H's permutation).
set -u
out="${OUT:-/tmp}"
w=/tmp/call47; rm -rf "$w"; mkdir -p "$w/daemon" "$w/c2"
t0=$(date +%s); left() { echo $((575 - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
tar -xzf .carry/bins.tgz
mkdir -p .gpu-daemon && cp .gpu-32g/cuzk scripts/gpu-daemon-bench.sh .gpu-daemon/
stamp "daemon --quick"
OUT="$w/daemon" timeout "$(lim 170)" bash .gpu-daemon/gpu-daemon-bench.sh --quick > "$w/daemon/run.log" 2>&1
echo "rc $?"; grep -E "proofs/min|proofs_per_min|busy|failed|verified" "$w/daemon/run.log" | tail -8 | cut -c1-300
stamp "2 KiB C2"
OUT="$w/c2" SECTOR_SIZE=2KiB REPEAT=5 GROUP= timeout "$(lim 100)" bash .gpu-32g/gpu-32g.sh c1 params prove > "$w/c2/run.log" 2>&1
echo "rc $?"; grep -E "prove:|params:|exit|verif" "$w/c2/run.log" | tail -6 | cut -c1-300
stamp "compiled bench 27"
timeout "$(( $(left) - 10 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 3 --device-only > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z raw|z packed|z prepared|pool keeps|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
rm -f "$w"/daemon/*.tgz.tmp
tar -C "$w" -czf "$out/logs.tgz" .
