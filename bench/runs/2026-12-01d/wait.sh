#!/usr/bin/env bash
# Later calls: wait on the 32 GiB run (SECS, default 540).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/g32env.sh"
OUT="${OUT:-/tmp}/g32" bash .gpu-32g/gpu-32g.sh --wait "${1:-540}"
