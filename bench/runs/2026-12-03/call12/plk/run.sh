#!/usr/bin/env bash
# porep-like 2^24 witness-only, shape v1 (main at ab6d778: operands picked
# across the whole circuit) against shape v2 (branch plk: picked within
# windows of recent values), one witness alone and 16 at once.
# Run from the repo root on the 16-core H200 host: bash .gpu-plk/run.sh
# Expected ~1-1.5 min: per binary and --jobs, the first witness records the
# shape (~3 s at 2^24), then 2 alone (~1 s each), then the N at once
# (~5 s for 16 with v1). Logs and JSON lines in $OUT/plk/.
set -u
D=$(cd "$(dirname "$0")" && pwd)
LOG=${PLK_LOG:-24}
MANY=${PLK_MANY:-16}
L="${OUT:-/tmp}/plk"
mkdir -p "$L"
{
  lscpu | grep -E 'Model name|^CPU\(s\)|L2|L3|NUMA node\(s\)'
  echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  ldd --version 2>/dev/null | head -1
  free -g | head -2
} > "$L/machine.txt" 2>&1
start=$(date +%s)
for jobs in 1 "$MANY"; do
  for v in old new; do
    echo "== $v --jobs $jobs" | tee -a "$L/all.log"
    "$D/synthesis_bench_$v" "$LOG" --witness-only --repeat 2 --jobs "$jobs" \
      > "$L/$v-j$jobs.log" 2>&1
    tee -a "$L/all.log" < "$L/$v-j$jobs.log"
    grep '^{' "$L/$v-j$jobs.log" > "$L/$v-j$jobs.json"
  done
done
# Do page faults on fresh witness memory explain the 16-at-once slowdown?
# The same 16 at once with glibc's malloc asking for transparent huge pages
# (glibc >= 2.35; an unknown tunable is ignored; THP mode in machine.txt).
for v in old new; do
  echo "== $v --jobs $MANY, GLIBC_TUNABLES=glibc.malloc.hugetlb=1" | tee -a "$L/all.log"
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$D/synthesis_bench_$v" "$LOG" --witness-only \
    --repeat 1 --jobs "$MANY" > "$L/$v-j$MANY-thp.log" 2>&1
  tee -a "$L/all.log" < "$L/$v-j$MANY-thp.log"
done
echo "total $(( $(date +%s) - start )) s" | tee -a "$L/all.log"
