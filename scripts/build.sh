#!/usr/bin/env bash
# Configures (once) and builds nn into build/ (or $NN_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NN_BUILD_DIR:-build}

scripts/install-deps.sh
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
fi
cmake --build "$build"
