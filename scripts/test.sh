#!/usr/bin/env bash
# Builds (installing what is missing) and runs the whole test suite: lit
# regression tests and GoogleTest unit tests, all through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd "${NN_BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
