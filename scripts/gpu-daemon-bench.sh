#!/usr/bin/env bash
# The daemon's throughput on the GPU machine (issue 11's benchmarks): a
# `cuzk daemon` with the CUDA backend, then `cuzk bench batch` runs against
# it, every proof verified by the daemon; traces and status kept in $OUT.
#
#   scripts/gpu-daemon-bench.sh --prepare
#       On a build machine: builds `cuzk` with the cuda feature and copies
#       it, stripped, with this script into .gpu-daemon/ (git-ignored).
#   bash .gpu-daemon/gpu-daemon-bench.sh [--quick]
#       On the GPU machine: porep-like-20 single-partition jobs (200 from 16
#       clients), porep-like-24 jobs of 10 partitions (5), and porep-like-22
#       NORMAL jobs with porep-like-20 CRITICAL jobs among them.
#   bash .gpu-daemon/gpu-daemon-bench.sh --capped
#       3 workers under a 1 GiB VRAM cap: porep-like-22 x 4 partitions beside
#       porep-like-18 and -20 jobs (issue 11's failure case). The last
#       line is `N passed, M failed` (a run passes when bench batch exits 0:
#       every job completed and every proof verified).
#   bash .gpu-daemon/gpu-daemon-bench.sh --sweep
#       gpu_vram_limit in {1, 2, 4, 16 GiB, none} x gpu_workers_per_device in
#       {1, 2, 3}: porep-like-20, -22 and -24 jobs at once under each, one
#       line per setting in $OUT/sweep.log (failed jobs, proofs verified,
#       the driver pool's high-water mark, parameter uploads).
#   bash .gpu-daemon/gpu-daemon-bench.sh --multi
#       Every GPU the process sees (run it once with CUDA_VISIBLE_DEVICES=0
#       and once with all, issue 19): porep-like-24 jobs of 10 partitions
#       (4 at once) with porep-like-20 CRITICAL jobs (WinningPoSt's
#       priority) submitted one after another among them; per GPU, the
#       partitions proved and the busy fraction, in $OUT/multi.log.
#       MULTI_BIG / MULTI_SMALL change the sizes (24 / 20), MULTI_JOBS
#       the number of 10-partition jobs (4).
#   MAX_BATCH=N sets the engine's max_batch_size (default 1: a GPU worker
#   takes each partition as soon as it is synthesized).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${1:-}" = "--prepare" ]; then
    nvcc_bin="$(bash scripts/install-nvcc.sh | tail -n 1)"
    export PATH="$nvcc_bin:$PATH"
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
    cargo build --release -p cuzk-cli --features cuda
    mkdir -p .gpu-daemon
    cp "$CARGO_TARGET_DIR/release/cuzk" .gpu-daemon/
    strip .gpu-daemon/cuzk
    cp scripts/gpu-daemon-bench.sh .gpu-daemon/
    ls -l .gpu-daemon
    exit 0
fi

quick=0
capped=0
sweep=0
multi=0
[ "${1:-}" = "--quick" ] && quick=1
[ "${1:-}" = "--multi" ] && multi=1
[ "${1:-}" = "--sweep" ] && sweep=1
# --capped: issue 11's failure case, 3 workers under a 1 GiB VRAM cap,
# porep-like-22 jobs of 4 partitions beside porep-like-18 jobs.
[ "${1:-}" = "--capped" ] && capped=1
workers=2
limit_line=""
sizes="[20, 22, 24]"
big="${MULTI_BIG:-24}"
small="${MULTI_SMALL:-20}"
if [ "$multi" = 1 ]; then
    sizes="[$small, $big]"
fi
if [ "$capped" = 1 ]; then
    workers=3
    limit_line='gpu_vram_limit = "1GiB"'
    sizes="[18, 20, 22]"
fi
out="${OUT:-/tmp}"
work="$(mktemp -d /tmp/cuzk-daemon-bench.XXXXXX)"
cuzk="$root/.gpu-daemon/cuzk"
sock="$work/cuzk.sock"
cat > "$work/cuzk.toml" <<EOF
[server]
unix_socket = "$sock"
http_listen = "127.0.0.1:9821"
max_message_bytes = "64MiB"

[engine]
gpu_workers_per_device = $workers
$limit_line
max_batch_size = ${MAX_BATCH:-1}
verify_proofs = true

[params]
dir = "$work/params"
check_points = false

[kinds]
porep_like_log_sizes = $sizes
porep_like_max_partitions = 16
EOF
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1 | tee "$out/gpu-daemon.log"
"$cuzk" daemon --config "$work/cuzk.toml" > "$out/daemon-stdout.log" 2> "$out/daemon-stderr.log" &
daemon=$!
for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.2; done
passed=0
failed=0
run() {
    local name="$1"
    shift
    echo "== $name: cuzk bench batch $*" | tee -a "$out/gpu-daemon.log"
    local t0=$(date +%s.%N)
    if "$cuzk" bench batch --daemon "unix:$sock" --json "$@" > "$out/$name.json" 2>> "$out/gpu-daemon.log"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "   FAILED" | tee -a "$out/gpu-daemon.log"
    fi
    echo "   wall $(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN{print b-a}") s" | tee -a "$out/gpu-daemon.log"
    head -c 3000 "$out/$name.json" | tee -a "$out/gpu-daemon.log"
    echo | tee -a "$out/gpu-daemon.log"
}
if [ "$sweep" = 1 ]; then
    kill "$daemon" 2>/dev/null
    wait "$daemon" 2>/dev/null
    params="$work/params"
    for limit in ${SWEEP_LIMITS:-1GiB 2GiB 4GiB 16GiB none}; do
        for w in ${SWEEP_WORKERS:-1 2 3}; do
            line=""
            [ "$limit" != none ] && line="gpu_vram_limit = \"$limit\""
            sed -e "s/^gpu_workers_per_device = .*/gpu_workers_per_device = $w/" \
                -e "/^gpu_vram_limit/d" "$work/cuzk.toml" > "$work/sweep.toml"
            [ -n "$line" ] && sed -i "s/^\[engine\]$/[engine]\n$line/" "$work/sweep.toml"
            rm -f "$sock"
            "$cuzk" daemon --config "$work/sweep.toml" > "$out/sweep-daemon-$limit-$w.log" 2>&1 &
            daemon=$!
            for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.2; done
            tag="$limit-w$w"
            "$cuzk" bench batch --daemon "unix:$sock" --json --kind porep-like-24 --count 2 --concurrency 2 > "$work/s24.json" 2>/dev/null &
            b24=$!
            "$cuzk" bench batch --daemon "unix:$sock" --json --kind porep-like-22 --partitions 2 --count 4 --concurrency 4 > "$work/s22.json" 2>/dev/null &
            b22=$!
            "$cuzk" bench batch --daemon "unix:$sock" --json --kind porep-like-20 --count 16 --concurrency 8 > "$work/s20.json" 2>/dev/null
            r20=$?
            wait "$b22"; r22=$?
            wait "$b24"; r24=$?
            curl -s "http://127.0.0.1:9821/status" > "$work/sstatus.json" 2>/dev/null
            mkdir -p "$out/sweep/$tag"
            cp "$work"/s20.json "$work"/s22.json "$work"/s24.json "$work"/sstatus.json "$out/sweep/$tag/" 2>/dev/null
            summary="$(python3 "$root/scripts/daemon-bench-summary.py" sweep "$work" 2>&1)"
            echo "$tag $summary rc $r20/$r22/$r24" | tee -a "$out/sweep.log"
            if [ "$r20$r22$r24" = 000 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
            kill "$daemon" 2>/dev/null
            wait "$daemon" 2>/dev/null
        done
    done
    rm -rf "$work"
    tar -czf "$out/sweep.tgz" -C "$out" sweep sweep-daemon-*.log 2>/dev/null && rm -rf "$out/sweep" "$out"/sweep-daemon-*.log
    echo "$passed passed, $failed failed" | tee -a "$out/sweep.log"
    exit 0
fi
if [ "$capped" = 1 ]; then
    "$cuzk" bench batch --daemon "unix:$sock" --json --kind porep-like-22 --partitions 4 --count 8 \
        --concurrency 8 > "$out/capped-22x4.json" 2>> "$out/gpu-daemon.log" &
    bg=$!
    run capped-18 --kind porep-like-18 --count 24 --concurrency 8
    run capped-20 --kind porep-like-20 --count 16 --concurrency 4
    if wait "$bg"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "capped-22x4 FAILED" | tee -a "$out/gpu-daemon.log"; fi
    head -c 3000 "$out/capped-22x4.json" | tee -a "$out/gpu-daemon.log"; echo
    "$cuzk" status --daemon "unix:$sock" --json > "$out/status-capped.json" 2>&1
    kill "$daemon" 2>/dev/null
    wait "$daemon" 2>/dev/null
    rm -rf "$work"
    echo "$passed passed, $failed failed" | tee -a "$out/gpu-daemon.log"
    exit 0
fi
if [ "$multi" = 1 ]; then
    nvidia-smi -L 2>&1 | tee -a "$out/multi.log"
    echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-<all>}" | tee -a "$out/multi.log"
    # Warm-up: parameters generated (GPU 0), constraints compiled, every
    # GPU's resident copy uploaded.
    run warm-big --kind porep-like-$big --partitions 10 --count 1 --concurrency 1
    run warm-small --kind porep-like-$small --count 4 --concurrency 4
    "$cuzk" status --daemon "unix:$sock" --json > "$out/status-warm.json" 2>&1
    "$cuzk" bench batch --daemon "unix:$sock" --json --kind porep-like-$big --partitions 10 \
        --count "${MULTI_JOBS:-4}" --concurrency 4 --trace "$out/trace-multi.json" \
        > "$out/multi-big.json" 2>> "$out/gpu-daemon.log" &
    bg=$!
    sleep 3
    run multi-critical --kind porep-like-$small --count 10 --concurrency 1 --priority critical
    if wait "$bg"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "multi-big FAILED" | tee -a "$out/gpu-daemon.log"; fi
    head -c 3000 "$out/multi-big.json" | tee -a "$out/gpu-daemon.log"; echo
    "$cuzk" status --daemon "unix:$sock" --json > "$out/status-multi.json" 2>&1
    python3 "$root/scripts/daemon-bench-summary.py" multi "$out" 2>&1 | tee -a "$out/multi.log"
    kill "$daemon" 2>/dev/null
    wait "$daemon" 2>/dev/null
    rm -rf "$work"
    tar -czf "$out/daemon-multi.tgz" -C "$out" $(cd "$out" && ls *.json 2>/dev/null) 2>/dev/null
    echo "$passed passed, $failed failed" | tee -a "$out/gpu-daemon.log" "$out/multi.log"
    exit 0
fi
# Warm-up: parameters generated (on the GPU) and constraints compiled.
run warm-20 --kind porep-like-20 --count 8 --concurrency 8
run porep20 --kind porep-like-20 --count 200 --concurrency 16 --trace "$out/trace-porep20.json"
"$cuzk" status --daemon "unix:$sock" --json > "$out/status-after-20.json" 2>&1
if [ "$quick" = 0 ]; then
    run warm-24 --kind porep-like-24 --count 1 --concurrency 1
    run porep24x10 --kind porep-like-24 --partitions 10 --count 5 --concurrency 5 --trace "$out/trace-porep24.json"
    run warm-22 --kind porep-like-22 --count 2 --concurrency 2
    # Two kinds interleaved, CRITICAL jobs among NORMAL ones.
    "$cuzk" bench batch --daemon "unix:$sock" --json --kind porep-like-22 --count 60 --concurrency 12 \
        > "$out/mixed-22.json" 2>> "$out/gpu-daemon.log" &
    bg=$!
    sleep 2
    run mixed-critical-20 --kind porep-like-20 --count 20 --concurrency 2 --priority critical
    if wait "$bg"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "mixed-22 FAILED" | tee -a "$out/gpu-daemon.log"; fi
    head -c 3000 "$out/mixed-22.json" | tee -a "$out/gpu-daemon.log"; echo
fi
"$cuzk" status --daemon "unix:$sock" --json > "$out/status-end.json" 2>&1
curl -s "http://127.0.0.1:9821/status" > "$out/http-status-end.json" 2>/dev/null
kill "$daemon" 2>/dev/null
wait "$daemon" 2>/dev/null
rm -rf "$work"
# One archive of the traces and status files (the device tool returns a
# limited number of files).
tar -czf "$out/daemon-bench.tgz" -C "$out" $(cd "$out" && ls *.json 2>/dev/null) 2>/dev/null
echo "$passed passed, $failed failed" | tee -a "$out/gpu-daemon.log"
