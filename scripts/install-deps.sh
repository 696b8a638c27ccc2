#!/usr/bin/env bash
# Installs the Debian 12 packages nn builds against, if any are missing.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache python3
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libgtest-dev libopenblas-dev zlib1g-dev libabsl-dev
  # LLVM's OpenMP runtime: threaded generated loops (docs/performance.md).
  libomp-19-dev
  # oneDNN: the f32 GEMMs of CPU artifacts, loaded by the runtime.
  libdnnl2
  # Audio files, resampling and the FFT of log-mel features (docs/audio.md);
  # eSpeak NG speaks the spoken-word task (docs/speech-task.md).
  libsndfile1-dev libsoxr-dev libfftw3-dev libespeak-ng-dev pkg-config
  # BPE vocabularies (nn-data import --bpe-vocab-size).
  libsentencepiece-dev
  # Data-parallel training: mpirun, and the MPI library the runtime loads
  # when a run has several ranks (docs/distributed.md; nothing links it).
  openmpi-bin
  # Fuzz targets and the sanitizer build (clang's libFuzzer, ASan, UBSan).
  clang-14 libclang-rt-14-dev
  # The Python front end (python/): pybind11 and the headers of Debian's
  # Python 3, the one the bindings are built for.
  pybind11-dev python3-dev
  # Test and benchmark tooling only (python3-venv: scripts/python-tools.sh).
  python3-numpy python3-venv libbenchmark-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "Installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
