#!/usr/bin/env bash
# Call 76 (twenty-third session): the MSM rows on the H200 that call 75
# left warm (main's .gpu, as call 75 carried it), reps 3. Run as one
# command line:
mkdir -p $OUT/c76; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; timeout 150 ./.gpu/bench_kernels --filter msm_g --reps 3 --json-out $OUT/c76/msm.json > $OUT/c76/msm.log 2>&1; echo "rc $?"; grep -E "^msm_g[12] vram( sort-atomic| bucket-tail| bucket-split)? +2\^" $OUT/c76/msm.log | grep "ms (floor" | cut -c1-110; date
