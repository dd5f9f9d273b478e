# Sourced by the GPU call scripts under bench/runs (from the one of
# 2026-12-04's twelfth session on; earlier scripts carry these lines
# themselves): a time budget and its helpers.
#   . bench/runs/lib.sh SECONDS WORKDIR
# sets out (where logs go: $OUT, else /tmp) and w (WORKDIR, emptied), and
# defines left (seconds of the budget left), lim N (N, or less when less is
# left: a timeout for the next step), stamp TEXT (a dated marker line) and
# pack (the device tool brings back at most 8 files from $OUT: call 83's
# ninth and tenth logs stayed there; pack, last in a script, puts WORKDIR's
# files into WORKDIR/all.tgz when there are more than 8).
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
