"""Writes damaged copies of an artifact: ARTIFACT OUT_DIR.

truncated.so  the first 60% of the file (dlopen would fault past its end)
edited.so     one class count of the embedded manifest changed in place (same
              length), so the manifest no longer matches the code
"""
import os
import sys

artifact, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
data = open(artifact, "rb").read()
with open(os.path.join(out, "truncated.so"), "wb") as f:
    f.write(data[: len(data) * 6 // 10])
record = b"input y i32 6 -1 "
at = data.index(record)
edited = data[:at] + b"input y i32 9 -1 " + data[at + len(record):]
with open(os.path.join(out, "edited.so"), "wb") as f:
    f.write(edited)
