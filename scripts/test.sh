#!/usr/bin/env bash
# Builds (installing what is missing) and runs the whole test suite: lit
# regression tests, GoogleTest unit tests and pytest tests, all through
# ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
scripts/python-tools.sh
cd "${NN_BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
