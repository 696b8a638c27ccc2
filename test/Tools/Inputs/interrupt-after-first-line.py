"""Runs a command and sends it SIGINT once it has written its first line to
stdout (nn-train --json writes one per step), so that the interrupt lands
during training however long compiling took; passes the command's stdout
on and exits with its status (a signal's number, negated by Python,
becomes 128 + number)."""
import signal
import subprocess
import sys

child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
for line in child.stdout:
    sys.stdout.write(line)
    child.send_signal(signal.SIGINT)
    break
for line in child.stdout:
    sys.stdout.write(line)
status = child.wait()
sys.exit(128 - status if status < 0 else status)
