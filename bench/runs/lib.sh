# Sourced by the GPU call scripts under bench/runs (from the one of
# 2026-12-04's twelfth session on; earlier scripts carry these lines
# themselves): a time budget and its helpers.
#   . bench/runs/lib.sh SECONDS WORKDIR
# sets out (where logs go: $OUT, else /tmp) and w (WORKDIR, emptied), and
# defines left (seconds of the budget left), lim N (N, or less when less is
# left: a timeout for the next step) and stamp TEXT (a dated marker line).
out="${OUT:-/tmp}"
w="$2"; rm -rf "$w"; mkdir -p "$w"
budget_s="$1"
t0=$(date +%s)
left() { echo $((budget_s - $(date +%s) + t0)); }
lim() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
stamp() { echo "== $1 $(date +%T) (+$(( $(date +%s) - t0 )) s, $(left) s left)"; }
