#!/usr/bin/env bash
# Call 79 (twenty-third session; run again as call 80 at 6bda4f7, after
# the review that takes the fit's H parts as they are): the prover checks on branch
# residency-admit (a Resident placement's system goes up in the
# partition's admission instead of streaming while others wait; the
# two-worker check now also requires none streamed and the system
# resident). Binaries: .gpu-prover at the branch, carry [".gpu-prover"],
# ~60 s plus the start.
set -u
. bench/runs/lib.sh 150 /tmp/c79
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "prover checks"
timeout "$(lim 140)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |capacity [0-9]+:|two workers under" "$w/checks/run.log" | tail -8 | cut -c1-300
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
