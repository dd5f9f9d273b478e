#!/usr/bin/env bash
# 2026-12-03 (second session), call 9. Carries .gpu-32g built from main at
# the merge of branch devsplit (CUZK_CUDA_ARCHS=90), plus synthesis_bench
# with the witness vectors reserved at the compiled system's sizes.
#   1. synthesis_bench 24 --repeat 1 --jobs 16 (issue 12: 16 witnesses at
#      once were 4.5x slower each than one alone in call 8)
#   2. the 32 GiB PoRep C2 with the MSM's chunks by length and G2's
#      3-blocks-per-SM accumulation (issue 14), and parameter generation
#      from the compiled system (issue 13: time and peak RSS against 152 s /
#      62.5 GiB from the full synthesis): stages c1 params prove.
set -x
t0=$(date +%s)
date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
df -h /tmp; free -g; nproc
timeout 100 ./.gpu-32g/synthesis_bench 24 --repeat 1 --jobs 16 > "$OUT/synthesis-24.log" 2>&1
tail -n 3 "$OUT/synthesis-24.log" | cut -c1-400
export GROUP=5 REPEAT=2
bash .gpu-32g/gpu-32g.sh --background c1 params prove
bash .gpu-32g/gpu-32g.sh --wait $((570 - $(date +%s) + t0))
df -h /tmp
