#!/usr/bin/env bash
# Call 68 (twentieth session; the first try ran the binaries before the
# dense bound: placement Host, 36.6 GB streamed working set): compiled
# systems that do not fit beside
# their parameters are streamed instead of sent to the host path
# (cuzk-gpu `compiled_fit`, `place_compiled`). On an 80 GB card the 2^27
# porep-like partition took 5.5-6.4 s with a/b/c on the host (call 63);
# predicted now ~2.3-2.6 s: call 63's GPU phases (~2.0 s) plus the matrices'
# 10.41 GB streamed (~0.3-0.6 s). The prover checks first (the new check:
# streamed at the capacity where the system no longer fits, host below).
# Binaries: .gpu-prover (CUZK_CUDA_ARCHS=90 bash scripts/gpu-prover-test.sh
# --prepare), carry [".gpu-prover"], ~330 s plus the start.
set -u
. bench/runs/lib.sh 540 /tmp/stream-part
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "prover checks"
timeout "$(lim 150)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|passed, |capacity [0-9]+:" "$w/checks/run.log" | tail -6 | cut -c1-300
stamp "compiled bench 27, one partition, reps 2"
# On a card of more than 100 GB (an H200) the whole card first (run 25's
# 1463.7 ms), then a budget capped at the H100 80GB's capacity (83.86 GB).
limits=whole
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
[ "${mem:-0}" -gt 100000 ] && limits=whole,83860000000
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --vram-limits "$limits" --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z packed|z prepared|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
cp -r "$w"/. "$out"/ 2>/dev/null
