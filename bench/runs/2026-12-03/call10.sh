#!/usr/bin/env bash
# 2026-12-03 (second session), call 10: how porep-like's witness scales
# with witnesses at once on the H200's 16 cores (issue 12 item 6: in calls 8
# and 9, 16 at once took ~5 s each against 1.06 s alone). .gpu-32g's
# synthesis_bench (main at b5612cd: witness vectors reserved).
set -u
lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|NUMA|Model name|L3" > "$OUT/lscpu.txt" 2>&1
cat "$OUT/lscpu.txt"
for j in 1 2 4 8 16; do
    timeout 60 ./.gpu-32g/synthesis_bench 22 --repeat 1 --jobs $j 2>&1 | tail -n 1 > "$OUT/s22-j$j.json"
    echo "jobs $j: $(cut -c1-330 "$OUT/s22-j$j.json")"
done
