#!/usr/bin/env bash
# Call 68 (twentieth session): where a compiled system does not fit the
# card beside its parameters (an 80 GB card at 2^27) the H MSM runs in
# parts, else the matrices stream, instead of a/b/c on the host; the
# queries' and L's MSM scratch bounded by the witness's dense scalars
# (cuzk-gpu `compiled_fit`, `place_compiled`). (A first try at 21:26 ran
# the binaries before the dense bound on an H100: placement Host, streamed
# working set 36.6 GB; 179 checks passed.) Call 63 on the H100: 5.5-6.4 s a
# partition with a/b/c on the host. Predicted on an 80 GB budget: resident
# with the H MSM in 2 parts if a/b/c's step fits (~2.0 s), else streamed
# (~2.3-2.6 s). On an H200 the whole card first (run 25: 1463.7 ms), then
# the budget capped at the H100's 83.86 GB. Prover checks first.
# Binaries: .gpu-prover (CUZK_CUDA_ARCHS=90 bash scripts/gpu-prover-test.sh
# --prepare), carry [".gpu-prover"], ~330 s plus the start.
set -u
. bench/runs/lib.sh 290 /tmp/stream-part
mkdir -p "$w/checks"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
stamp "prover checks"
timeout "$(lim 60)" ./.gpu-prover/gpu_prover_test --json-out "$w/checks/checks.json" > "$w/checks/run.log" 2>&1
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
