#!/usr/bin/env bash
# 2026-12-03 (third session), call 12: the two helper branches' GPU-machine
# runs, before merging them.
#   1. branch k14 (issue 14): the MSM's bucket reduction on lane pairs and
#      the windows' sums as a tree: checks and MSM bench rows old/new
#      (.gpu-k14/run.sh, ~3 min)
#   2. branch plk (issue 12 item 6): porep-like shape v1 against v2
#      (operands within windows of recent values), 2^24 witness-only, one
#      alone and 16 at once, and 16 at once with glibc's huge-page malloc
#      (.gpu-plk/run.sh, ~1.5 min)
set -u
echo "== k14 $(date +%T)"
timeout 250 bash .gpu-k14/run.sh
echo "== plk $(date +%T)"
timeout 150 bash .gpu-plk/run.sh 2>&1 | grep -E "^==|per_row|total|^\{" | cut -c1-400
echo "== done $(date +%T)"
