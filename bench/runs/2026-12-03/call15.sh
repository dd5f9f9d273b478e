#!/usr/bin/env bash
# 2026-12-03 (fourth session), call 15: issue 12 item 6, porep-like's
# witness against the real 32 GiB PoRep witness, both with every core busy,
# in one run. .gpu-32g built from main at 0a37003 (shape v2, witness
# vectors advised MADV_HUGEPAGE; CUZK_CUDA_ARCHS=90).
#   1. porep-like 2^24 witness-only: one alone, then 16 at once
#   2. the 32 GiB PoRep: a synthetic C1, then witness_bench: 5 partitions
#      at once on the 16 cores (the compiled system made first, ~100 s on
#      one core, not timed), then one partition on one core
#   3. porep-like 2^24, 16 at once again (after the 32 GiB run)
set -u
out="${OUT:-/tmp}"
t0=$(date +%s)
cat /sys/kernel/mm/transparent_hugepage/enabled > "$out/thp.txt" 2>&1
nproc > "$out/nproc.txt"; free -g >> "$out/nproc.txt"
for j in 1 16; do
  echo "== porep-like 24 --jobs $j $(date +%T)"
  timeout 90 ./.gpu-32g/synthesis_bench 24 --witness-only --repeat 2 --jobs $j 2>&1 \
    | grep '^{' | tee "$out/plk-j$j.json" | cut -c1-400
done
echo "== 32 GiB witness $(date +%T)"
mkdir -p "$out/32g"
GROUP=5 OUT="$out/32g" timeout 330 bash .gpu-32g/gpu-32g.sh c1 witness 2>&1 | tail -n 8
grep -h "us per constraint\|^== exit" /tmp/cuzk-32g/logs/witness.log 2>/dev/null | cut -c1-300
echo "== porep-like 24 --jobs 16 again $(date +%T)"
timeout 90 ./.gpu-32g/synthesis_bench 24 --witness-only --repeat 2 --jobs 16 2>&1 \
  | grep '^{' | tee "$out/plk-j16-after.json" | cut -c1-400
echo "== done $(date +%T), $(( $(date +%s) - t0 )) s"
