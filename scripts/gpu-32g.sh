#!/usr/bin/env bash
# The first 32 GiB PoRep C2 on one GPU (issue 13): a synthetic C1, the
# 32 GiB parameters generated on the GPU, then every partition proved by
# cuzk and checked by filecoin-proofs' verify_seal. bench/filecoin-32g.md
# has the expected times, disk and RAM.
#
#   scripts/gpu-32g.sh --prepare
#       On a build machine (no GPU): builds `cuzk` (cuzk-cli, feature cuda)
#       and the porep_c2_bench example (feature cuzk-gpu/cuda) with the
#       pinned nvcc and copies them, stripped, with this script into
#       .gpu-32g/ (git-ignored; carry it). CUZK_CUDA_ARCHS=90 narrows the
#       kernels to the H200.
#   bash .gpu-32g/gpu-32g.sh [STAGE...]
#       On the GPU machine, from the repository root: runs the stages in the
#       foreground (default: c1 params prove).
#   bash .gpu-32g/gpu-32g.sh --background [STAGE...]
#       Starts the stages detached (setsid nohup), logging to $WORK/run.log
#       on the device's disk, and returns at once.
#   bash .gpu-32g/gpu-32g.sh --wait SECONDS
#       Polls the detached run until it ends or SECONDS pass, then prints
#       its log's tail. Chain calls (each within ~30 s of the last, so the
#       machine and its disk stay warm) until the last line says `done`.
#   bash .gpu-32g/gpu-32g.sh --status
#       The run's state and log tail, at once.
#
# Stages (each skips work already done, and records peak RSS, df, free and
# nvidia-smi before and after, in $WORK/logs/STAGE.log):
#   c1      cuzk c1 synth --sector-size $SECTOR_SIZE --seed 1 -> $WORK/c1.json
#   params  cuzk params gen --filecoin porep --sector-size $SECTOR_SIZE on
#           the GPU into $PARAMS (written as it is computed; stale temporary
#           files of killed runs removed first)
#   prove   porep_c2_bench --c1 $WORK/c1.json: all partitions, 1 warm-up
#           (parameter load, compile) and $REPEAT timed runs, compiled
#           synthesis, the compiled system written to $PARAMS as
#           cuzk-<circuit>.r1cs (~10 GB at 32 GiB; COMPILED_IN_MEMORY=1 keeps
#           it in memory only), every proof through verify_seal ->
#           $WORK/logs/prove.json
#   witness witness_bench: the PoRep witness alone (no parameters, no GPU;
#           the compiled system read from, or written to, $PARAMS)
#           of $GROUP (default 5) partitions at once on every core, then of
#           one partition on one core (RAYON_NUM_THREADS=1) -> $WORK/logs/
#           witness-*.json (bench/compiled-synthesis.md, issue 12/13)
#   daemon  `cuzk daemon` (CUDA) over $PARAMS (mapping the prove stage's
#           compiled file instead of compiling again), then `cuzk bench batch --kind
#           porep-32g --input $WORK/c1.json`: 1 proof to warm up (parameter
#           load, compile), then $DAEMON_COUNT (3) at once, every proof
#           verified by the daemon -> $WORK/logs/daemon-*.json, status and
#           metrics after each
# Every mode copies the logs (small) to $OUT when it is set.
#
# Environment: SECTOR_SIZE (default 32GiB; 2KiB for a dry run), BACKEND
# (cuda; cpu for a dry run without a GPU), WORK (/tmp/cuzk-32g), PARAMS
# (/tmp/fil-params; never under $OUT: it is ~47 GiB), REPEAT (1), GROUP
# (partitions synthesized and proved at a time; default all 10: set 5 or
# fewer if host RAM runs short),
# BIN (the folder of this script), REDO=1 to run finished stages again.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "${1:-}" = "--prepare" ]; then
    set -e
    cd "$root"
    nvcc_bin="$(bash scripts/install-nvcc.sh | tail -n 1)"
    export PATH="$nvcc_bin:$PATH"
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
    cargo build --release -p cuzk-cli --features cuda
    cargo build --release -p cuzk-filecoin --features cuzk-gpu/cuda --example porep_c2_bench \
        --example witness_bench
    mkdir -p .gpu-32g
    cp "$CARGO_TARGET_DIR/release/cuzk" "$CARGO_TARGET_DIR/release/examples/porep_c2_bench" \
        "$CARGO_TARGET_DIR/release/examples/witness_bench" .gpu-32g/
    strip .gpu-32g/cuzk .gpu-32g/porep_c2_bench .gpu-32g/witness_bench
    cp scripts/gpu-32g.sh .gpu-32g/
    ls -l .gpu-32g
    exit 0
fi

SECTOR_SIZE="${SECTOR_SIZE:-32GiB}"
BACKEND="${BACKEND:-cuda}"
WORK="${WORK:-/tmp/cuzk-32g}"
PARAMS="${PARAMS:-/tmp/fil-params}"
REPEAT="${REPEAT:-1}"
BIN="${BIN:-$here}"
REDO="${REDO:-0}"
logs="$WORK/logs"
mkdir -p "$logs" "$PARAMS"

# Copies the logs to $OUT: one tarball when there are many.
export_logs() {
    [ -n "${OUT:-}" ] || return 0
    mkdir -p "$OUT"
    cp "$WORK/run.log" "$OUT/" 2>/dev/null
    local n
    n=$(find "$logs" -type f | wc -l)
    if [ "$n" -gt 8 ]; then
        tar -C "$WORK" -czf "$OUT/gpu-32g-logs.tgz" logs
    else
        cp "$logs"/* "$OUT/" 2>/dev/null
    fi
    return 0
}

snapshot() { # snapshot LOG WHEN
    {
        echo "== $2: $(date -u +%FT%TZ)"
        df -h "$WORK" "$PARAMS" 2>&1 | sort -u
        free -g 2>&1
        nvidia-smi --query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv 2>&1 || true
    } >>"$1"
}

# measured LOG CMD...: runs CMD with its output in LOG, sampling its VmHWM
# (peak resident set) every 2 s and the GPU's memory use every 2 s; the
# peaks and the exit status end the log.
measured() {
    local log="$1"
    shift
    echo "== command: $*" >>"$log"
    local smi_pid=""
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader -lms 2000 \
            >"$log.vram" 2>/dev/null &
        smi_pid=$!
    fi
    local start
    start=$(date +%s)
    "$@" >>"$log" 2>&1 &
    local pid=$! hwm=0 h
    while kill -0 "$pid" 2>/dev/null; do
        h=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
        sleep 2
    done
    wait "$pid"
    local rc=$?
    [ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null
    local vram_peak="n/a"
    if [ -s "$log.vram" ]; then
        vram_peak="$(awk -F', ' '{gsub(/ MiB/,"",$2); if ($2+0>m) m=$2+0} END {print m " MiB"}' "$log.vram")"
    fi
    echo "== exit $rc after $(($(date +%s) - start)) s; peak RSS $((hwm / 1024)) MiB (sampled); peak GPU memory used $vram_peak" >>"$log"
    return "$rc"
}

stage_c1() {
    local log="$logs/c1.log"
    if [ "$REDO" != 1 ] && [ -f "$WORK/c1.done" ] && [ -s "$WORK/c1.json" ]; then
        echo "c1: done before ($WORK/c1.json)"
        return 0
    fi
    : >"$log"
    snapshot "$log" before
    measured "$log" "$BIN/cuzk" c1 synth --sector-size "$SECTOR_SIZE" --seed 1 -o "$WORK/c1.json.tmp" || return 1
    mv "$WORK/c1.json.tmp" "$WORK/c1.json" && touch "$WORK/c1.done"
    snapshot "$log" after
    echo "c1: $(grep '^== exit' "$log" | tail -n 1)"
}

stage_params() {
    local log="$logs/params.log"
    if [ "$REDO" != 1 ] && [ -f "$WORK/params.done" ]; then
        echo "params: done before ($PARAMS)"
        return 0
    fi
    : >"$log"
    # A killed generation leaves its temporary file (up to ~47 GiB).
    find "$PARAMS" -maxdepth 1 -name '*.tmp*' -print -delete >>"$log" 2>&1
    snapshot "$log" before
    # cuzk params gen skips parameters already present (complete: files
    # are renamed into place only when written whole).
    measured "$log" "$BIN/cuzk" params gen --filecoin porep --sector-size "$SECTOR_SIZE" \
        --param-cache "$PARAMS" --backend "$BACKEND" || return 1
    touch "$WORK/params.done"
    snapshot "$log" after
    ls -l "$PARAMS" >>"$log"
    echo "params: $(grep -E '^wrote|already present' "$log" | tail -n 1); $(grep '^== exit' "$log" | tail -n 1)"
}

stage_prove() {
    local log="$logs/prove.log"
    if [ "$REDO" != 1 ] && [ -f "$WORK/prove.done" ]; then
        echo "prove: done before ($logs/prove.json)"
        return 0
    fi
    [ -s "$WORK/c1.json" ] || { echo "prove: no $WORK/c1.json (run the c1 stage)"; return 1; }
    : >"$log"
    snapshot "$log" before
    measured "$log" "$BIN/porep_c2_bench" --backend "$BACKEND" --sector-size "$SECTOR_SIZE" \
        --c1 "$WORK/c1.json" --params "$PARAMS" --repeat "$REPEAT" --warmup 1 --cuzk-only \
        --synthesis compiled ${COMPILED_IN_MEMORY:+--compiled-in-memory} ${GROUP:+--partition-group "$GROUP"} \
        --json "$logs/prove.json" || return 1
    touch "$WORK/prove.done"
    snapshot "$log" after
    echo "prove: $(grep -E '^\| cuzk' "$log" | tail -n 1); $(grep '^== exit' "$log" | tail -n 1)"
}

stage_witness() {
    local log="$logs/witness.log"
    : >"$log"
    mkdir -p "$PARAMS"
    measured "$log" "$BIN/witness_bench" --sector-size "$SECTOR_SIZE" --compiled-dir "$PARAMS" \
        --partitions "${GROUP:-5}" --repeat 2 --json "$logs/witness-all.json" || return 1
    RAYON_NUM_THREADS=1 measured "$log" "$BIN/witness_bench" --sector-size "$SECTOR_SIZE" \
        --compiled-dir "$PARAMS" --partitions 1 --repeat 1 --json "$logs/witness-1core.json" || return 1
    echo "witness: $(grep -h 'us per constraint' "$log" | tr '\n' ' ')"
}

stage_daemon() {
    local log="$logs/daemon.log"
    [ -s "$WORK/c1.json" ] || { echo "daemon: no $WORK/c1.json (run the c1 stage)"; return 1; }
    : >"$log"
    snapshot "$log" before
    local sock="$WORK/cuzk.sock" kind
    kind="porep-$(echo "$SECTOR_SIZE" | tr 'A-Z' 'a-z' | sed -e 's/ib$//')"
    rm -f "$sock"
    cat >"$WORK/cuzk.toml" <<TOML
[server]
unix_socket = "$sock"
http_listen = "127.0.0.1:9822"
max_message_bytes = "256MiB"

[engine]
gpu_workers_per_device = ${DAEMON_WORKERS:-2}
synthesis_concurrency = ${DAEMON_SYNTH:-3}
# The decoded parameters (~47 GB) and the compiled system (~10 GB) are not
# in this budget: it bounds the synthesized partitions only.
host_memory_budget = "${DAEMON_HOST:-48GiB}"
verify_proofs = true

[params]
dir = "$PARAMS"
check_points = false
# The decoded parameters (47 GB) must fit the pinned tier (run 2 ran with
# this; the default is now half the RAM).
pinned_budget = "${DAEMON_PINNED:-64GiB}"

[kinds]
porep_like_log_sizes = []
synthesis = "compiled"
TOML
    cat "$WORK/cuzk.toml" >>"$log"
    measured "$log.daemon" "$BIN/cuzk" daemon --config "$WORK/cuzk.toml" &
    local daemon=$!
    for _ in $(seq 1 300); do [ -S "$sock" ] && break; sleep 0.2; done
    local rc=0 n
    for n in 1 "${DAEMON_COUNT:-3}"; do
        echo "== bench batch --count $n --concurrency $n ($(date -u +%T))" >>"$log"
        "$BIN/cuzk" bench batch --daemon "unix:$sock" --kind "$kind" --input "$WORK/c1.json" \
            --count "$n" --concurrency "$n" --json >"$logs/daemon-$n.json" 2>>"$log" || rc=1
        head -c 4000 "$logs/daemon-$n.json" >>"$log"
        echo >>"$log"
        curl -s "http://127.0.0.1:9822/status" >"$logs/daemon-status-$n.json" 2>/dev/null
        [ "$rc" = 0 ] || break
    done
    curl -s "http://127.0.0.1:9822/metrics" >"$logs/daemon-metrics.txt" 2>/dev/null
    pkill -INT -f "cuzk daemon --config $WORK/cuzk.toml" 2>/dev/null
    wait "$daemon" 2>/dev/null
    tail -n 3 "$log.daemon" >>"$log"
    snapshot "$log" after
    echo "daemon: $(grep -o '"ok":[a-z]*' "$logs/daemon-${DAEMON_COUNT:-3}.json" 2>/dev/null | head -n 1) rc $rc; $(tail -n 1 "$log.daemon")"
    return "$rc"
}

run_stages() {
    [ $# -gt 0 ] || set -- c1 params prove
    echo "gpu-32g: stages $* at $SECTOR_SIZE on $BACKEND, work $WORK, params $PARAMS ($(date -u +%FT%TZ))"
    local s
    for s in "$@"; do
        case "$s" in
            c1 | params | prove | witness | daemon) ;;
            *) echo "unknown stage $s (c1, params, prove, witness, daemon)"; return 2 ;;
        esac
        if ! "stage_$s"; then
            echo "FAILED at stage $s; log tail:"
            tail -n 15 "$logs/$s.log"
            return 1
        fi
    done
    echo "done"
}

running() {
    [ -f "$WORK/run.pid" ] && kill -0 "$(cat "$WORK/run.pid")" 2>/dev/null
}

case "${1:-}" in
    --background)
        shift
        if running; then
            echo "already running (pid $(cat "$WORK/run.pid")); use --wait"
            exit 1
        fi
        setsid nohup bash "$BIN/gpu-32g.sh" --run "$@" >"$WORK/run.log" 2>&1 </dev/null &
        echo $! >"$WORK/run.pid"
        sleep 2
        echo "started pid $(cat "$WORK/run.pid"); log $WORK/run.log"
        cat "$WORK/run.log"
        export_logs
        ;;
    --wait | --status)
        secs=0
        [ "$1" = --wait ] && secs="${2:-540}"
        deadline=$(($(date +%s) + secs))
        while running && [ "$(date +%s)" -lt "$deadline" ]; do
            sleep 5
        done
        for f in "$logs"/*.log; do
            [ -f "$f" ] && echo "-- $(basename "$f"): $(grep '^== exit' "$f" | tail -n 1 || true)"
        done
        echo "-- run.log (tail):"
        tail -n 25 "$WORK/run.log" 2>/dev/null
        # The generator's and the bench's own progress lines, latest first.
        for f in "$logs"/params.log "$logs"/prove.log; do
            [ -f "$f" ] && grep -E '^\[|cuzk (warm-up|run)' "$f" | tail -n 3
        done
        [ -f "$logs/daemon.log" ] && grep -E '^== bench|bench batch:' "$logs/daemon.log" | tail -n 4
        if running; then echo "still running (pid $(cat "$WORK/run.pid"))"; else echo "not running"; fi
        export_logs
        ;;
    --run)
        shift
        run_stages "$@"
        rc=$?
        export_logs
        exit "$rc"
        ;;
    *)
        run_stages "$@" 2>&1 | tee -a "$WORK/run.log"
        rc=${PIPESTATUS[0]}
        export_logs
        exit "$rc"
        ;;
esac
