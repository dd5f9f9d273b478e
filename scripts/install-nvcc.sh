#!/usr/bin/env bash
# Installs the pinned CUDA 13.0 compiler (nvcc) from PyPI into .cuda/ at the
# repository root, for building crates/cuzk-cuda's kernels on machines with no
# system CUDA. Idempotent: a second run with nvcc present does nothing.
#
# All five wheels are pinned to one 13.0 release: unpinned, pip mixes 13.5
# parts with 13.0 (verified 2026-11-30, see ../shared/GPU.md). The GPU
# machine's driver is 580 (CUDA 13.0), so 13.0 is also the newest PTX it JITs.
#
# Prints the bin folder to add to PATH as its last line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.cuda"
py="${PYTHON:-python3}"
pyver="$("$py" -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')"
bin="$venv/lib/$pyver/site-packages/nvidia/cu13/bin"

if [ ! -x "$bin/nvcc" ]; then
    "$py" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 \
        nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
fi
"$bin/nvcc" --version >&2
echo "$bin"
