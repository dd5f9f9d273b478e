#!/usr/bin/env bash
# Call 63 (nineteenth session; ran on an H100, output in call63/), planned in the sixteenth and eighteenth: main's prover, since
# frlow is merged): the porep-like 2^27 partition with main's kernels
# (.gpu-prover from .carry/prover-main.tgz, main e0f89fe: frlow's Fr
# product, the batched pass loads). Reference on the H200: run 25's
# 1463.7 ms a partition (H 257.5 ms in six transforms); call 62 ran this
# after the prover checks and ran out of time (setup ~185 s).
# Predicted: H ~-15 ms (six transforms at ~-7%), the MSMs unchanged (Fq),
# so ~1450 ms. The parameters and the compiled circuit take ~160 s to make
# before the first proof (call 55); carry [".carry/prover-main.tgz"], ~330 s.
set -u
. bench/runs/lib.sh 330 /tmp/frlow-part
[ -d .gpu-prover ] || tar -xzf .carry/prover-main.tgz
stamp "compiled bench 27, one partition, reps 2"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
