#!/usr/bin/env bash
# 2026-12-03, call 1: the 32 GiB PoRep C2 with the native witness (issues 12/13).
# Carries .gpu-32g (built at the commit this file was added in).
set -x
date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
df -h /tmp; free -g; nproc
export GROUP=5 REPEAT=2
bash .gpu-32g/gpu-32g.sh --background c1 params witness prove daemon
bash .gpu-32g/gpu-32g.sh --wait ${WAIT:-520}
