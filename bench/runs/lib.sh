# Sourced by the GPU call scripts under bench/runs (from the one of
# 2026-12-04's twelfth session on; earlier scripts carry these lines
# themselves): a time budget and its helpers.
#   . bench/runs/lib.sh SECONDS WORKDIR
# sets out (where logs go: $OUT, else /tmp) and w (WORKDIR, emptied), and
# defines left (seconds of the budget left), lim N (N, or less when less is
# left: a timeout for the next step), stamp TEXT (a dated marker line) and
# pack (the device tool brings back at most 8 files from $OUT: call 83's
# ninth and tenth logs stayed there; pack, last in a script, puts WORKDIR's
# files into WORKDIR/all.tgz when there are more than 8); g1_rows NAME BIN
# (BIN's G1 MSM rows, reps 2, into WORKDIR/g1-NAME.log) and partition27
# NAME BIN MIN (BIN's porep-like 2^27 partition, z prepared, reps 2, into
# WORKDIR/NAME-bench27.log, when at least MIN seconds are left), the steps
# calls 82, 83 and 85 share.
out="${OUT:-/tmp}"
w="$2"; rm -rf "$w"; mkdir -p "$w"
budget_s="$1"
t0=$(date +%s)
left() { echo $((budget_s - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
pack() {
    local n
    n=$(find "$w" -maxdepth 1 -type f | wc -l)
    [ "$n" -le 8 ] && return 0
    tar -czf "$w.tgz" -C "$w" . && rm -rf "$w" && mkdir -p "$w" && mv "$w.tgz" "$w/all.tgz"
    echo "packed $n files into $w/all.tgz"
}
g1_rows() {
    stamp "rows G1, $1, reps 2"
    timeout "$(lim 80)" "$2" --filter msm_g1 --reps 2 > "$w/g1-$1.log" 2>&1
    echo "rc $?"
    grep -E "^msm_g1 vram( inline-fq)? " "$w/g1-$1.log" | grep "ms (floor" | cut -c1-110
}
partition27() {
    stamp "compiled bench 27, $1, reps 2"
    if [ "$(left)" -lt "$3" ]; then
        echo "skipped: $(left) s left, the partition needs ~$3"
        return 0
    fi
    timeout "$(( $(left) - 8 ))" "$2" --bench-only --compiled-bench 27 --reps 2 --device-only \
        > "$w/$1-bench27.log" 2>&1
    echo "rc $?"
    grep -E "compiled bench 2|device path|z prepared|FAIL|passed" "$w/$1-bench27.log" | grep -v "^ok" | cut -c1-400
}
