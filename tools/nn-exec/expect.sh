#!/bin/sh
# expect.sh STATUS PATTERN COMMAND...: runs COMMAND and checks that it exits
# with STATUS and prints (stdout or stderr) a line matching PATTERN (grep -E).
status=$1 pattern=$2
shift 2
output=$("$@" 2>&1)
actual=$?
if [ "$actual" -ne "$status" ]; then
  printf 'exit %s, expected %s; output:\n%s\n' "$actual" "$status" "$output"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
  printf 'no line matches "%s"; output:\n%s\n' "$pattern" "$output"
  exit 1
fi
