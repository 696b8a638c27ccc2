#!/usr/bin/env bash
# The untrusted-input checks: a clang build with AddressSanitizer, UBSan and
# libFuzzer coverage (build-fuzz/, or $NN_FUZZ_BUILD_DIR) of the runtime,
# its readers, nn-exec and the IR front end; then, through ctest,
#   - the runtime, reader and audio tests and nn-exec's tool tests under
#     ASan+UBSan (labels runtime, sanitize), and
#   - each fuzz target for NN_FUZZ_SMOKE_SECONDS (default 60) on a copy of
#     its seed corpus (label fuzz).
# A long campaign: docs/runtime.md ("Fuzzing").
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NN_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${NN_FUZZ_SMOKE_SECONDS:-60}

scripts/install-deps.sh
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -G Ninja -S . -B "$build" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DNN_ENABLE_SANITIZERS=ON -DNN_ENABLE_FUZZERS=ON
fi
cmake -S . -B "$build" -DNN_FUZZ_SMOKE_SECONDS="$seconds" >/dev/null
cmake --build "$build" --target nn-fuzz-npy nn-fuzz-npz nn-fuzz-manifest \
  nn-fuzz-ir nn-fuzz-stages nn-fuzz-dataset nn-fuzz-checkpoint \
  nn-runtime-tests nn-audio-tests nn-not-an-artifact nn-exec
cd "$build"
ctest --output-on-failure -j"$(nproc)" -L 'runtime|sanitize|fuzz'
