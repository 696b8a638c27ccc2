"""Assembles every .ptx file of a directory with ptxas for one architecture.

Prints one line per file that fails (with ptxas's message) and a summary
line "ptxas -arch=ARCH: N kernel modules, M failed"; exits 1 when any
failed or none was found.
"""
import pathlib
import subprocess
import sys


def main():
    ptxas, arch, directory = sys.argv[1:4]
    files = sorted(pathlib.Path(directory).glob("*.ptx"))
    failed = 0
    for path in files:
        run = subprocess.run(
            [ptxas, f"-arch={arch}", str(path), "-o", "/dev/null"],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            failed += 1
            print(f"FAILED {path.name}: {run.stderr.strip()}")
    print(f"ptxas -arch={arch}: {len(files)} kernel modules, {failed} failed")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
