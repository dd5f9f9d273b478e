#!/usr/bin/env bash
# Sums the "test result:" lines of a `cargo test` log into one line,
# `N passed, M failed`, as the GPU scripts end. Usage:
#   scripts/test-summary.sh LOG [CARGO_STATUS]
# With CARGO_STATUS non-zero and no failed test counted (a build error, or
# a test binary that crashed before its result line), a line before the
# summary says so. Exits 0; the caller keeps cargo's status.
set -euo pipefail
log="$1"
status="${2:-0}"
read -r passed failed < <(awk '
    /^test result:/ {
        for (i = 1; i < NF; i++) {
            if ($(i + 1) ~ /^passed;?$/) p += $i
            if ($(i + 1) ~ /^failed;?$/) f += $i
        }
    }
    END { printf "%d %d\n", p, f }
' "$log")
if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
    echo "cargo test exited with status $status before every test reported (a build error or a crash; see above)"
fi
echo "$passed passed, $failed failed"
