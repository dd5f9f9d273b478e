#!/usr/bin/env bash
# Planned 2026-12-05 (sixteenth session), the second call after frlow.sh if
# device time is left: the porep-like 2^27 partition with frlow's Fr
# product (.gpu-prover from frlow.tgz, as frlow.sh). Reference on the
# H200: run 25's 1463.7 ms a partition (H 257.5 ms in six transforms).
# Predicted: H ~-15 ms (six transforms at ~-7%), the MSMs unchanged (Fq),
# so ~1450 ms. The parameters and the compiled circuit take ~160 s to make
# before the first proof (call 55); carry [".carry/frlow.tgz"], ~330 s.
set -u
. bench/runs/lib.sh 330 /tmp/frlow-part
[ -d .gpu-prover ] || tar -xzf .carry/frlow.tgz
stamp "compiled bench 27, one partition, reps 2"
timeout "$(( $(left) - 8 ))" ./.gpu-prover/gpu_prover_test --bench-only --compiled-bench 27 --reps 2 --device-only --json-out "$w/bench27.json" > "$w/bench27.log" 2>&1
echo "rc $?"; grep -E "compiled bench 2|device path|z prepared|H steps|FAIL|passed" "$w/bench27.log" | grep -v "^ok" | cut -c1-400
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
