# lit configuration for the nn regression tests (driven by ctest).
import os
import sys

import lit.formats

config.name = "nn"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# Inputs/ holds what tests read (models, scripts), not tests.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nn_obj_root, "test")
config.substitutions.append(("%nn_src", config.nn_src_root))
# Sanitizer settings reach the tools (see NN_TEST_ENVIRONMENT in CMake).
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
config.environment["PATH"] = os.pathsep.join(
    [config.nn_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)

# Tests that write .npz files need a Python with numpy (Debian: python3-numpy);
# the interpreter running lit may be another one (pyenv, venv).
import subprocess

for python in (sys.executable, "/usr/bin/python3"):
    if subprocess.call([python, "-c", "import numpy"], stderr=subprocess.DEVNULL) == 0:
        config.substitutions.append(("%python", python))
        config.available_features.add("numpy")
        break

# The Python front end's package (python/nn with its bindings), for the
# tests that print a model from examples/python with `%python`. Sanitizer
# builds have no bindings: those tests are unsupported there.
import glob

nn_python_path = os.path.join(config.nn_obj_root, "python")
config.substitutions.append(("%nn_python_path", nn_python_path))
if "numpy" in config.available_features and glob.glob(
        os.path.join(nn_python_path, "nn", "_nn*.so")):
    config.available_features.add("python-frontend")

# Helper scripts without third-party imports run with lit's own Python.
config.substitutions.append(("%pyexe", sys.executable))

# GPU code generation tests assemble the generated PTX with the CUDA
# toolkit's ptxas when it is installed (no GPU needed).
import shutil

cuda_root = os.environ.get("CUDA_ROOT", os.environ.get("CUDA_HOME", "/usr/local/cuda"))
ptxas = shutil.which("ptxas") or shutil.which("ptxas", path=os.path.join(cuda_root, "bin"))
if ptxas:
    config.substitutions.append(("%ptxas", ptxas))
    config.available_features.add("ptxas")
# Compiling for --target=cuda needs libdevice (the compiler searches the
# same places).
for root in [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]:
    if root and os.path.exists(os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")):
        config.available_features.add("cuda-toolkit")
        break
