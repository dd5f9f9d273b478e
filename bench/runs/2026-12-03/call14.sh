#!/usr/bin/env bash
# 2026-12-03 (third session), call 14: witness vectors backed by huge
# pages (madvise(MADV_HUGEPAGE) in WitnessCs::with_capacity), issue 12 item
# 6. .gpu-hp/ holds synthesis_bench and witness_bench built with it; the
# "before" binaries are .gpu-plk/synthesis_bench_new (shape v2, no advice)
# and .gpu-32g/witness_bench (2d11bde).
#   1. porep-like 2^24 witness-only, one alone and 16 at once, before/after
#   2. the real PoRep witness (2 KiB and 8 MiB partitions) on one core and
#      on 16 threads, before/after (2 partitions at once for 8 MiB)
set -u
out="${OUT:-/tmp}"
cat /sys/kernel/mm/transparent_hugepage/enabled > "$out/thp.txt" 2>&1
echo "THP: $(cat "$out/thp.txt")"
for j in 1 16; do
  for v in before after; do
    b=.gpu-hp/synthesis_bench; [ $v = before ] && b=.gpu-plk/synthesis_bench_new
    echo "== porep-like 24 $v --jobs $j"
    timeout 60 ./$b 24 --witness-only --repeat 2 --jobs $j 2>&1 | grep '^{' | tee "$out/plk-$v-j$j.json" | cut -c1-330
  done
done
for s in 2KiB 8MiB; do
  for v in before after; do
    b=.gpu-hp/witness_bench; [ $v = before ] && b=.gpu-32g/witness_bench
    echo "== PoRep $s $v, 1 thread"
    RAYON_NUM_THREADS=1 timeout 60 ./$b --sector-size $s --repeat 3 > "$out/wb-$s-$v-t1.log" 2>&1
    grep -iE "per constraint|median|us" "$out/wb-$s-$v-t1.log" | tail -2 | cut -c1-250
    echo "== PoRep $s $v, 16 threads, 4 partitions"
    timeout 60 ./$b --sector-size $s --repeat 3 --partitions 4 > "$out/wb-$s-$v-t16.log" 2>&1
    grep -iE "per constraint|median|us" "$out/wb-$s-$v-t16.log" | tail -2 | cut -c1-250
  done
done
echo "== done $(date +%T)"
