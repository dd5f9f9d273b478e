#!/usr/bin/env bash
# 2026-12-05 (nineteenth session), call 66, ran on an H100 (output in call66/): main's NTT rows at 2^27 (the
# build of call 60's batched loads = main's kernels, .carry/batched.tgz),
# to see the headline on whichever card is lent (the H100's: forward out
# of place 38.20 ms, in place 41.22, run 36). carry [".carry/batched.tgz"],
# ~60 s plus the start.
set -u
. bench/runs/lib.sh 150 /tmp/ntt66
tar -xzf .carry/batched.tgz
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
stamp "NTT 2^27, every row"
CUZK_NTT_BENCH_LOGS=27 timeout "$(lim 120)" ./.gpu/bench_kernels --filter ntt --reps 5 --json-out "$w/ntt.json" > "$w/ntt.log" 2>&1
echo "rc $?"; grep -E "ms \(floor" "$w/ntt.log" | cut -c1-200
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
