#!/usr/bin/env bash
# Makes the Python the pytest tests and the plotting script run with: a
# virtual environment in the build directory (build/pytools, or
# $NN_BUILD_DIR/pytools) with pytest, tensorboard (whose reader the
# TensorBoard test uses) and matplotlib (bench/plot-tensorboard.py). Test
# and benchmark tooling only; the compiler and runtime never import Python.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="${NN_BUILD_DIR:-build}/pytools"
if "$tools/bin/python3" -c "import pytest, tensorboard, matplotlib" 2>/dev/null; then
  exit 0
fi
rm -rf "$tools"
python3 -m venv --system-site-packages "$tools"
"$tools/bin/pip" install -q --disable-pip-version-check pytest tensorboard matplotlib
