#!/usr/bin/env python3
"""Lines and characters of each model written in Python (examples/python/)
against the same model in the nn dialect (docs/python.md).

Usage: python3 bench/model-sizes.py

Counted: non-blank lines without comments or docstrings, and their
characters without indentation, so that neither file's layout or prose
weighs.
"""

import ast
import io
import os
import re
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = [
    ("blstm_ce_ctc", "examples/blstm_ce_ctc.mlir"),
    ("conv_encoder_decoupled_loss", "examples/conv_encoder_decoupled_loss.mlir"),
    ("shared_tail_two_losses", "examples/shared_tail_two_losses.mlir"),
    ("conformer_ctc", "examples/speech/conformer_ctc.mlir"),
    ("conformer_transducer", "examples/speech/conformer_transducer.mlir"),
    ("mwer", "examples/recipe/mwer.mlir"),
]


def python_code(text):
    """The lines of `text` without comments and docstrings."""
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if number in docstrings:
            continue
        if number in comments:
            line = line[:comments[number]]
        if line.strip():
            lines.append(line.strip())
    return lines


def mlir_code(text):
    lines = [re.sub(r"//.*", "", line).strip() for line in text.splitlines()]
    return [line for line in lines if line]


def main():
    print("| model | Python lines | Python chars | MLIR lines | MLIR chars | chars MLIR / Python |")
    print("|---|---|---|---|---|---|")
    for name, mlir in PAIRS:
        with open(os.path.join(ROOT, "examples", "python", name + ".py")) as f:
            py = python_code(f.read())
        with open(os.path.join(ROOT, mlir)) as f:
            ir = mlir_code(f.read())
        py_chars = sum(len(line) for line in py)
        ir_chars = sum(len(line) for line in ir)
        print(f"| {name} | {len(py)} | {py_chars} | {len(ir)} | {ir_chars} | "
              f"{ir_chars / py_chars:.1f} |")


if __name__ == "__main__":
    main()
