#!/usr/bin/env bash
# The main job: install what is missing, build, and run nn-opt on the
# bundled BLSTM example, printing the verified model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
"${NN_BUILD_DIR:-build}/bin/nn-opt" examples/blstm_ce_ctc.mlir
