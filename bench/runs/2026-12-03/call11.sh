#!/usr/bin/env bash
# 2026-12-03 (third session), call 11. Carries .gpu-prover and .gpu-32g
# built from main at 2d11bde (CUZK_CUDA_ARCHS=90): parameters left in their
# mapped file and uploaded a piece at a time (issue 13 item 2).
#   1. the GPU prover's checks (gpu_prover_test), with the new
#      "parameters from a mapped file" checks (resident upload in 1 MiB and
#      96 KiB pieces, the per-MSM and chunked plans, the compiled path)
#   2. the 32 GiB PoRep C2 in the background (c1 params prove daemon,
#      GROUP=5 REPEAT=2): the prove stage no longer decodes the 47 GB file
#      into host memory (peak RSS, RssAnon at the end, first-partition
#      upload), the daemon leases the mapped file (pinned tier empty);
#      continued by call 12 (`--wait`).
set -u
out="${OUT:-/tmp}"
t0=$(date +%s); left() { echo $((570 - $(date +%s) + t0)); }
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm --format=csv > "$out/gpu.txt" 2>&1
free -g > "$out/free.txt"; df -h /tmp >> "$out/free.txt"
echo "== prover checks $(date +%T)"
mkdir -p "$out/prover"
OUT="$out/prover" timeout 150 bash .gpu-prover/gpu-prover-test.sh > "$out/prover/run.log" 2>&1
echo "rc $?"; grep -E "^FAIL|mapped file|passed, " "$out/prover/run.log" | tail -12 | cut -c1-200
echo "== 32 GiB $(date +%T) ($(left) s left)"
export GROUP=5 REPEAT=2
bash .gpu-32g/gpu-32g.sh --background c1 params prove daemon
bash .gpu-32g/gpu-32g.sh --wait $(( $(left) - 5 ))
