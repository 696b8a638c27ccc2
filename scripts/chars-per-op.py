#!/usr/bin/env python3
"""Characters per op statement in nn IR files (docs/dialect.md).

Usage: scripts/chars-per-op.py examples/*.mlir

An op statement is an nn op inside a graph (not nn.graph or nn.parameter)
with its continuation lines joined; comments and indentation are not
counted.
"""
import re
import sys

OP_START = re.compile(r'^(%[\w:#]+(, %[\w:#]+)* = )?nn\.(?!graph|parameter)')


def statements(text):
    current = ''
    for line in text.split('\n'):
        line = re.sub(r'//.*', '', line).strip()
        if not line:
            continue
        if OP_START.match(line):
            if current:
                yield current
            current = line
        elif current and not line.startswith(('nn.graph', '}', '%')):
            current += ' ' + line
        elif current:
            yield current
            current = ''
    if current:
        yield current


def main(paths):
    ops = chars = 0
    for path in paths:
        with open(path) as f:
            for statement in statements(f.read()):
                ops += 1
                chars += len(statement)
    print(f'{ops} ops, {chars} chars, {chars / max(ops, 1):.1f} chars/op')


if __name__ == '__main__':
    main(sys.argv[1:])
