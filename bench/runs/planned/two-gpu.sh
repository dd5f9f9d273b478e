#!/usr/bin/env bash
# Issue 19 on a two-GPU machine (device kind nvidia-h200-x2): one call,
# ~7 min of its own plus the start. Built here first (~10 min on 2 cores):
#   CUZK_CUDA_ARCHS=90 bash scripts/gpu-daemon-bench.sh --prepare
#   CUZK_CUDA_ARCHS=90 bash scripts/gpu-prover-test.sh --prepare
#   mkdir -p .carry && tar -czf .carry/two-gpu.tgz .gpu-daemon .gpu-prover
# then `run` with kind nvidia-h200-x2, carry [".carry/two-gpu.tgz"]:
#   bash bench/runs/planned/two-gpu.sh
#   1. The GPU prover's checks on GPU 1 alone (the second card works as
#      the first; the shared pinned mirror's check among them), then with
#      both visible (the selection check opens them in reverse: device 0
#      named "(CUDA 1)"). ~40 s each.
#   2. The daemon's --multi workload (scripts/gpu-daemon-bench.sh: 10-
#      partition porep-like-24 jobs, 4 at once, with critical porep-like-20
#      jobs one after another among them) on GPU 0 alone, then on both.
#      Predicted: both GPUs prove partitions (each about half), each busy
#      about as much as the one GPU alone, the 24x10 jobs' proofs per
#      minute up by 1.5-2x where synthesis keeps up (16 cores: it may not;
#      gpu_busy_fraction says which), critical jobs' median total no worse.
# A second call, if device time is left (~12-15 min in all): the 32 GiB
# PoRep C2 through the daemon on both GPUs (CUZK_CUDA_ARCHS=90 bash
# scripts/gpu-32g.sh --prepare here, carry .gpu-32g): `bash
# .gpu-32g/gpu-32g.sh --background c1 params daemon`, then calls of
# `bash .gpu-32g/gpu-32g.sh --wait 500` until it says done; compare
# daemon-3.json's seconds a proof with run 4's 19.7 s on one H200
# (BENCHMARKS.md, issue 13) and read each GPU's partitions in
# daemon-status-3.json.
set -u
. bench/runs/lib.sh 540 /tmp/two-gpu
[ -d .gpu-daemon ] || tar -xzf .carry/two-gpu.tgz
nvidia-smi -L
stamp "prover checks on GPU 1"
CUDA_VISIBLE_DEVICES=1 OUT="$w" timeout "$(lim 90)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover-gpu1.log" 2>&1
echo "rc $?"; grep -E "^FAIL|pinned mirror|passed, " "$w/prover-gpu1.log" | tail -4 | cut -c1-200
stamp "prover checks, both GPUs visible"
mkdir -p "$w/both"
OUT="$w/both" timeout "$(lim 90)" bash .gpu-prover/gpu-prover-test.sh > "$w/prover-both.log" 2>&1
echo "rc $?"; grep -E "^FAIL|selection|passed, " "$w/prover-both.log" | tail -4 | cut -c1-200
for devs in 0 0,1; do
    stamp "daemon --multi on GPUs $devs"
    mkdir -p "$w/multi-$devs"
    CUDA_VISIBLE_DEVICES=$devs OUT="$w/multi-$devs" timeout "$(lim 190)" \
        bash .gpu-daemon/gpu-daemon-bench.sh --multi > "$w/multi-$devs/run.log" 2>&1
    echo "rc $?"; cat "$w/multi-$devs/multi.log" 2>/dev/null | cut -c1-400
done
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
