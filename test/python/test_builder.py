"""The model builder (python/nn/graph.py, ops.py, layers.py): each op
function against the op written by hand (both printed by nn-opt), the
shipped examples rewritten in Python (examples/python/) against their
.mlir files (the printed IR, then bit-identical losses and gradients), and
the errors for dims that do not fit."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("NN_BIN_DIR", ROOT / "build" / "bin"))

# The Python examples and the .mlir files they restate, with the graph
# whose losses are compared.
EXAMPLES = [
    ("blstm_ce_ctc", "examples/blstm_ce_ctc.mlir", "blstm_am"),
    ("conv_encoder_decoupled_loss", "examples/conv_encoder_decoupled_loss.mlir",
     "criterion"),
    ("shared_tail_two_losses", "examples/shared_tail_two_losses.mlir", "two_heads"),
    ("conformer_ctc", "examples/speech/conformer_ctc.mlir", "ctc"),
    ("conformer_transducer", "examples/speech/conformer_transducer.mlir", "rnnt"),
    ("mwer", "examples/recipe/mwer.mlir", "mwer"),
]


def printed(text):
    """`text` as nn-opt prints it (SSA names and spacing normalized)."""
    run = subprocess.run([str(BIN / "nn-opt")], input=text, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


def parameters_first(printed_module):
    """The module's nn.parameter lines first (where a file declares a
    parameter does not matter; a Program declares them all first)."""
    lines = printed_module.splitlines()
    return ([line for line in lines if "nn.parameter" in line] +
            [line for line in lines if "nn.parameter" not in line])


def example(name):
    # The examples import each other (conformer_transducer.py builds on
    # conformer_ctc.py).
    if str(ROOT / "examples" / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "examples" / "python"))
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "examples" / "python" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_python_examples_print_the_mlir_examples():
    for name, mlir, _ in EXAMPLES:
        program = example(name).build()
        assert parameters_first(printed(str(program))) == parameters_first(
            printed((ROOT / mlir).read_text())), name


def random_inputs(manifest, rng, batch=2, lengths=None):
    """Inputs for every input of `manifest`, each root sequence dim of
    length 5 or 3 (labels: 2 or 1), values within their classes."""
    lengths = lengths or {}
    sizes = {}
    for dim in manifest.root_dims:
        spec = next(d for d in manifest.dims if d.name == dim)
        if spec.kind == "batch":
            sizes[dim] = batch
        else:
            lengths.setdefault(dim, [5, 3] if dim.startswith("T") else [2, 1])
            sizes[dim] = max(lengths[dim])
    for spec in manifest.dims:
        if spec.kind == "seq" and spec.source and spec.name not in sizes:
            n = lengths[spec.source] if spec.source in lengths else None
            if n is not None:
                lengths[spec.name] = [-(-x // spec.factor) + spec.offset for x in n]
                sizes[spec.name] = max(lengths[spec.name])
    inputs = {}
    for spec in manifest.inputs:
        shape = [sizes[a] if isinstance(a, str) else a for a in spec.axes]
        if spec.dtype.startswith("f"):
            inputs[spec.name] = rng.standard_normal(shape).astype(
                np.float32 if spec.dtype == "f32" else np.float64) + 1.5
        else:
            high = spec.classes or 5
            inputs[spec.name] = rng.integers(1, high, shape).astype(
                np.int32 if spec.dtype == "i32" else np.int64)
    return inputs, {d: lengths[d] for d in manifest.root_dims if d in lengths}


@pytest.mark.parametrize("name,mlir,entry", EXAMPLES)
def test_python_examples_give_bit_identical_losses_and_gradients(name, mlir, entry):
    from_python = nn.compile(example(name).build(), entry=entry, grads=True).load()
    from_mlir = nn.compile_file(str(ROOT / mlir), entry=entry, grads=True).load()
    params = nn.init_parameters(from_mlir.manifest, seed=11)
    inputs, lengths = random_inputs(from_mlir.manifest, np.random.default_rng(3))
    a = from_python.run(inputs, lengths, params)
    b = from_mlir.run(inputs, lengths, params)
    assert [l.name for l in a.losses] == [l.name for l in b.losses]
    for x, y in zip(a.losses, b.losses):
        assert np.isfinite(x.value)
        assert (x.sum, x.normalization, x.value) == (y.sum, y.normalization, y.value)
    assert sorted(a.gradients) == sorted(params)
    for parameter, gradient in b.gradients.items():
        np.testing.assert_array_equal(a.gradients[parameter], gradient)


B = nn.batch_dim("B")
T = nn.seq_dim("T", B)
U = nn.seq_dim("U", B)


def one_graph(function, parameters=None, results=True, **inputs):
    """A program of one graph @g over `inputs`; `parameters` are set on
    the model by name."""
    model = nn.Module()
    for name, parameter in (parameters or {}).items():
        setattr(model, name, parameter)
    program = nn.Program(model)
    program.graph("g", lambda **values: function(model, **values), **inputs)
    return str(program)


X = dict(x=nn.Input([B, T, 4]))
F32 = "!nn.tensor<[B, T, 4], f32>"

# (builder, its parameters, its inputs, the graph written by hand).
CASES = [
    (lambda m, x: nn.linear(x, m.w, m.b), dict(w=nn.Parameter(3, 4),
                                               b=nn.Parameter(3)), X, f"""
nn.parameter @"w" : !nn.tensor<[3, 4], f32>
nn.parameter @"b" : !nn.tensor<[3], f32>
nn.graph @g(%x: {F32}) -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {{
  %w = nn.param_ref @"w" : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @"b" : !nn.tensor<[3], f32>
  %y = nn.linear %x, %w, %b : {F32}, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  nn.return %y : !nn.tensor<[B, T, 3], f32>
}}"""),
    (lambda m, x: nn.linear(x, m.w), dict(w=nn.Parameter(2, 4)), X, f"""
nn.parameter @"w" : !nn.tensor<[2, 4], f32>
nn.graph @g(%x: {F32}) -> !nn.tensor<[B, T, 2], f32> dims [B: batch, T: seq(B)] {{
  %w = nn.param_ref @"w" : !nn.tensor<[2, 4], f32>
  %y = nn.linear %x, %w : {F32}, !nn.tensor<[2, 4], f32>
  nn.return %y : !nn.tensor<[B, T, 2], f32>
}}"""),
]
for op in ("relu", "tanh", "sigmoid", "gelu", "silu", "softmax", "log_softmax"):
    CASES.append((lambda m, x, op=op: getattr(nn, op)(x), None, X, f"""
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %y = nn.{op} %x : {F32}
  nn.return %y : {F32}
}}"""))
CASES += [
    (lambda m, x: (x + x) * x, None, X, f"""
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %a = nn.add %x, %x : {F32}
  %y = nn.mul %a, %x : {F32}
  nn.return %y : {F32}
}}"""),
    (lambda m, x: 0.25 * nn.concat(x, nn.glu(nn.concat(x, x))), None, X, f"""
nn.graph @g(%x: {F32}) -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B)] {{
  %c = nn.concat %x, %x : {F32}, {F32}
  %g = nn.glu %c : !nn.tensor<[B, T, 8], f32>
  %d = nn.concat %x, %g : {F32}, {F32}
  %y = nn.scale %d by 2.500000e-01 : !nn.tensor<[B, T, 8], f32>
  nn.return %y : !nn.tensor<[B, T, 8], f32>
}}"""),
    (lambda m, x: nn.layer_norm(nn.dropout(x, 0.2), m.gain, m.b),
     dict(gain=nn.Parameter(4), b=nn.Parameter(4)), X, f"""
nn.parameter @"gain" : !nn.tensor<[4], f32>
nn.parameter @"b" : !nn.tensor<[4], f32>
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %d = nn.dropout %x rate 2.000000e-01 : {F32}
  %g = nn.param_ref @"gain" : !nn.tensor<[4], f32>
  %b = nn.param_ref @"b" : !nn.tensor<[4], f32>
  %y = nn.layer_norm %d, %g, %b : {F32}, !nn.tensor<[4], f32>, !nn.tensor<[4], f32>
  nn.return %y : {F32}
}}"""),
    (lambda m, u: nn.embedding(u, m.e), dict(e=nn.Parameter(7, 3)),
     dict(u=nn.Input([B, U], "i32")), """
nn.parameter @"e" : !nn.tensor<[7, 3], f32>
nn.graph @g(%u: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U, 3], f32>
    dims [B: batch, U: seq(B)] {
  %e = nn.param_ref @"e" : !nn.tensor<[7, 3], f32>
  %y = nn.embedding %u, %e : !nn.tensor<[B, U], i32>, !nn.tensor<[7, 3], f32>
  nn.return %y : !nn.tensor<[B, U, 3], f32>
}"""),
    (lambda m, x: nn.lstm(nn.lstm(x, m.a, m.b, m.c, "backward"), m.d, m.e, m.f,
                          "bidirectional"),
     dict(a=nn.Parameter(8, 4), b=nn.Parameter(8, 2), c=nn.Parameter(8),
          d=nn.Parameter(2, 12, 2), e=nn.Parameter(2, 12, 3), f=nn.Parameter(2, 12)),
     X, f"""
nn.parameter @"a" : !nn.tensor<[8, 4], f32>
nn.parameter @"b" : !nn.tensor<[8, 2], f32>
nn.parameter @"c" : !nn.tensor<[8], f32>
nn.parameter @"d" : !nn.tensor<[2, 12, 2], f32>
nn.parameter @"e" : !nn.tensor<[2, 12, 3], f32>
nn.parameter @"f" : !nn.tensor<[2, 12], f32>
nn.graph @g(%x: {F32}) -> !nn.tensor<[B, T, 6], f32> dims [B: batch, T: seq(B)] {{
  %a = nn.param_ref @"a" : !nn.tensor<[8, 4], f32>
  %b = nn.param_ref @"b" : !nn.tensor<[8, 2], f32>
  %c = nn.param_ref @"c" : !nn.tensor<[8], f32>
  %h = nn.lstm backward %x, %a, %b, %c : {F32}, !nn.tensor<[8, 4], f32>,
      !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %d = nn.param_ref @"d" : !nn.tensor<[2, 12, 2], f32>
  %e = nn.param_ref @"e" : !nn.tensor<[2, 12, 3], f32>
  %f = nn.param_ref @"f" : !nn.tensor<[2, 12], f32>
  %y = nn.lstm bidirectional %h, %d, %e, %f : !nn.tensor<[B, T, 2], f32>,
      !nn.tensor<[2, 12, 2], f32>, !nn.tensor<[2, 12, 3], f32>, !nn.tensor<[2, 12], f32>
  nn.return %y : !nn.tensor<[B, T, 6], f32>
}}"""),
    (lambda m, x: nn.pool(nn.conv1d(x, m.w, stride=2, groups=2), "avg", 3, 3),
     dict(w=nn.Parameter(6, 5, 2)), X, f"""
nn.parameter @"w" : !nn.tensor<[6, 5, 2], f32>
nn.graph @g(%x: {F32}) -> !nn.tensor<[B, T_2_3, 6], f32>
    dims [B: batch, T: seq(B), T_2: seq(B) = ceildiv(T, 2),
          T_2_3: seq(B) = ceildiv(T_2, 3)] {{
  %w = nn.param_ref @"w" : !nn.tensor<[6, 5, 2], f32>
  %c = nn.conv1d %x, %w stride 2 groups 2 : ({F32}, !nn.tensor<[6, 5, 2], f32>)
      -> !nn.tensor<[B, T_2, 6], f32>
  %y = nn.pool avg %c window 3 stride 3 : (!nn.tensor<[B, T_2, 6], f32>)
      -> !nn.tensor<[B, T_2_3, 6], f32>
  nn.return %y : !nn.tensor<[B, T_2_3, 6], f32>
}}"""),
    (lambda m, x: nn.broadcast_seq(nn.reduce(x, "max", 1), T), None, X, f"""
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %m = nn.reduce max %x over 1 : {F32}
  %y = nn.broadcast_seq %m : !nn.tensor<[B, 4], f32> -> {F32}
  nn.return %y : {F32}
}}"""),
    (lambda m, x: nn.attention(
        x, x, nn.attention(x, x, x, heads=2, causal=True, left_context=3,
                           dropout=0.1),
        heads=2, scale=0.5, relative=(x, nn.relative_positions(m.p, 4)),
        chunk_size=2, left_chunks=1),
     dict(p=nn.Parameter(4, 6)), X, f"""
nn.parameter @"p" : !nn.tensor<[4, 6], f32>
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %a = nn.attention %x, %x, %x heads 2 causal left_context 3 dropout 1.000000e-01
      : {F32}, {F32}, {F32}
  %p = nn.param_ref @"p" : !nn.tensor<[4, 6], f32>
  %r = nn.relative_positions %p : !nn.tensor<[4, 6], f32> -> !nn.tensor<[9, 4], f32>
  %y = nn.attention %x, %x, %a relative %x, %r heads 2 scale 5.000000e-01
      chunk_size 2 left_chunks 1 : {F32}, {F32}, {F32}, {F32}, !nn.tensor<[9, 4], f32>
  nn.return %y : {F32}
}}"""),
    (lambda m, x: nn.spec_augment(x, 1, 2, 3, 4, time_ratio=0.5), None, X, f"""
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %y = nn.spec_augment %x freq_masks 1 freq_width 2 time_masks 3 time_width 4
      time_ratio 5.000000e-01 : {F32}
  nn.return %y : {F32}
}}"""),
]


def _losses(m, x, y, u, n, w):
    nn.mark_loss(nn.cross_entropy(x, y, label_smoothing=0.1), "ce",
                 normalize="per_frame", weights=w)
    lp = nn.log_softmax(x)
    nn.mark_loss(nn.cross_entropy(lp, y, input="log_probs"), "ce2",
                 normalize="sum", scale=0.5)
    nn.mark_loss(nn.frame_error(x, y), "fer", normalize="per_frame",
                 as_error=True)
    nn.mark_loss(nn.mse(x, x), "mse", normalize="per_sequence", as_error=True,
                 eval_only=True)
    c = nn.ctc_loss(lp, u, blank=0, input="log_probs", zero_infinity=True)
    nn.mark_loss(c, "ctc", normalize="custom", normalization=n)
    hyp, score = nn.ctc_greedy_decode(x, blank=0)
    e, r, _ = nn.edit_distance(hyp, u, word_separator=1)
    nn.mark_loss(e, "wer", normalize="custom", normalization=r, as_error=True)
    return hyp, score


CASES.append((_losses, None, dict(x=nn.Input([B, T, 4]), y=nn.Input([B, T], "i32"),
                                  u=nn.Input([B, U], "i32"), n=nn.Input([B]),
                                  w=nn.Input([B, T])), f"""
nn.graph @g(%x: {F32}, %y: !nn.tensor<[B, T], i32>, %u: !nn.tensor<[B, U], i32>,
            %n: !nn.tensor<[B], f32>, %w: !nn.tensor<[B, T], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {{
  %ce = nn.cross_entropy %x, %y from logits label_smoothing 1.000000e-01
      : {F32}, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce weights %w as "ce" normalize per_frame
      : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  %lp = nn.log_softmax %x : {F32}
  %ce2 = nn.cross_entropy %lp, %y from log_probs : {F32}, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce2 as "ce2" normalize sum scale 5.000000e-01 : !nn.tensor<[B, T], f32>
  %fe = nn.frame_error %x, %y : {F32}, !nn.tensor<[B, T], i32>
  nn.mark_loss %fe as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  %mse = nn.mse %x, %x : {F32}, {F32}
  nn.mark_loss %mse as "mse" normalize per_sequence as_error eval_only
      : !nn.tensor<[B, T], f32>
  %c = nn.ctc_loss %lp, %u from log_probs blank 0 zero_infinity
      : {F32}, !nn.tensor<[B, U], i32>
  nn.mark_loss %c, %n as "ctc" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %hyp, %score = nn.ctc_greedy_decode %x from logits blank 0
      : {F32} -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %e, %r, %k = nn.edit_distance %hyp, %u words separator 1
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %r as "wer" normalize custom as_error
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %hyp, %score : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}}"""))
def _more(m, x, y, u):
    r = nn.rotary(x, heads=2, base=100.0)
    p = nn.pack(r)
    q = nn.unpack(p, [B, T])
    ce = nn.linear_cross_entropy(q, m.w, y, bias=m.b, label_smoothing=0.1)
    nn.mark_loss(ce, "ce", normalize="per_frame")
    nn.mark_loss(nn.param_norm(m.w, m.b), "l2", normalize="sum", scale=0.01)
    path, _ = nn.viterbi_align(q, u, blank=0, topology="rna", prior=m.prior)
    hyp, score = nn.ctc_beam_search(x, blank=0, beam=4, merge="max", token_beam=3,
                                    score_beam=10)
    return path, hyp


CASES.append((_more, dict(w=nn.Parameter(5, 4), b=nn.Parameter(5),
                          prior=nn.Parameter(4)),
              dict(x=nn.Input([B, T, 4]), y=nn.Input([B, T], "i32"),
                   u=nn.Input([B, U], "i32")), f"""
nn.parameter @"w" : !nn.tensor<[5, 4], f32>
nn.parameter @"b" : !nn.tensor<[5], f32>
nn.parameter @"prior" : !nn.tensor<[4], f32>
nn.graph @g(%x: {F32}, %y: !nn.tensor<[B, T], i32>, %u: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B, Y], i32>)
    dims [B: batch, T: seq(B), U: seq(B), N_T: packed(B, T), Y: seq(B) computed] {{
  %r = nn.rotary %x heads 2 base 1.000000e+02 : {F32}
  %p = nn.pack %r : {F32} -> !nn.tensor<[N_T, 4], f32>
  %q = nn.unpack %p : !nn.tensor<[N_T, 4], f32> -> {F32}
  %w = nn.param_ref @"w" : !nn.tensor<[5, 4], f32>
  %b = nn.param_ref @"b" : !nn.tensor<[5], f32>
  %ce = nn.linear_cross_entropy %q, %w, %b targets %y label_smoothing 1.000000e-01
      : {F32}, !nn.tensor<[5, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[5], f32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %n = nn.param_norm %w, %b : !nn.tensor<[5, 4], f32>, !nn.tensor<[5], f32>
  nn.mark_loss %n as "l2" normalize sum scale 1.000000e-02 : !nn.tensor<[], f32>
  %pr = nn.param_ref @"prior" : !nn.tensor<[4], f32>
  %a, %s = nn.viterbi_align %q, %u from logits topology rna blank 0 prior %pr
      : {F32}, !nn.tensor<[B, U], i32>, !nn.tensor<[4], f32>
  %h, %hs = nn.ctc_beam_search %x from logits blank 0 beam 4 merge max token_beam 3
      score_beam 1.000000e+01
      : {F32} -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %a, %h : !nn.tensor<[B, T], i32>, !nn.tensor<[B, Y], i32>
}}"""))

def _beam(m, x):
    nbest, scores = nn.ctc_beam_search(x, blank=0, beam=2, nbest=True)
    flat = nn.flatten_beam(nbest).axes[0]
    return nn.sum_beam(nn.repeat_beam(x, flat)), scores


CASES.append((_beam, None, X, f"""
nn.graph @g(%x: {F32}) -> ({F32}, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Z: seq(H) computed, TH: seq(H) = T] {{
  %n, %s = nn.ctc_beam_search %x from logits blank 0 beam 2 merge sum
      : {F32} -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
  %f = nn.flatten_beam %n : !nn.tensor<[B, K, Z], i32> -> !nn.tensor<[H, Z], i32>
  %r = nn.repeat_beam %x : {F32} -> !nn.tensor<[H, TH, 4], f32>
  %y = nn.sum_beam %r : !nn.tensor<[H, TH, 4], f32> -> {F32}
  nn.return %y, %s : {F32}, !nn.tensor<[B, K], f32>
}}"""))

CASES.append((lambda m, x: nn.op("nn.relu", [x], [nn.Input([B, T, 4])])[0], None,
              X, f"""
nn.graph @g(%x: {F32}) -> {F32} dims [B: batch, T: seq(B)] {{
  %y = nn.relu %x : {F32}
  nn.return %y : {F32}
}}"""))


def test_each_op_function_prints_the_op_written_by_hand():
    for i, (function, parameters, inputs, expected) in enumerate(CASES):
        built = one_graph(function, parameters, **inputs)
        assert printed(built) == printed(expected), f"case {i}:\n{built}"


def test_graphs_call_graphs_binding_their_dims():
    model = nn.Module()
    model.w = nn.Parameter(3, 4)
    program = nn.Program(model)
    U1 = U + 1
    inner = program.graph("inner", lambda x, u: (nn.linear(x, model.w), u),
                          x=nn.Input([B, T, 4]), u=nn.Input([B, U1], "i32"))
    C = nn.batch_dim("C")
    S = nn.seq_dim("S", C)
    V = nn.seq_dim("V", C)
    program.graph("outer", lambda y, v: inner(y, v),
                  y=nn.Input([C, S, 4]), v=nn.Input([C, V + 1], "i32"))
    expected = """
nn.parameter @"w" : !nn.tensor<[3, 4], f32>
nn.graph @inner(%x: !nn.tensor<[B, T, 4], f32>, %u: !nn.tensor<[B, U1], i32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %w = nn.param_ref @"w" : !nn.tensor<[3, 4], f32>
  %y = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  nn.return %y, %u : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1], i32>
}
nn.graph @outer(%y: !nn.tensor<[C, S, 4], f32>, %v: !nn.tensor<[C, V1], i32>)
    -> (!nn.tensor<[C, S, 3], f32>, !nn.tensor<[C, V1], i32>)
    dims [C: batch, S: seq(C), V: seq(C), V1: seq(C) = V + 1] {
  %a, %b = nn.call @inner(%y, %v) : (!nn.tensor<[C, S, 4], f32>,
      !nn.tensor<[C, V1], i32>) -> (!nn.tensor<[C, S, 3], f32>, !nn.tensor<[C, V1], i32>)
  nn.return %a, %b : !nn.tensor<[C, S, 3], f32>, !nn.tensor<[C, V1], i32>
}"""
    assert printed(str(program)) == printed(expected)
    with pytest.raises(nn.DimError, match="nn.call @inner: input 1"):
        program.graph("bad", lambda y, v: inner(y, v), y=nn.Input([C, S, 4]),
                      v=nn.Input([C, S], "i32"))


def test_parameters_are_named_by_their_modules_and_are_the_checkpoint_keys():
    blstm = example("blstm_ce_ctc")
    model = blstm.BlstmAM()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["lstm1.w_ih", "lstm1.w_hh", "lstm1.b", "lstm2.w_ih",
                     "lstm2.w_hh", "lstm2.b", "out.w", "out.b", "ctc.w", "ctc.b"]
    program = nn.Program(model)
    program.graph("blstm_am", model, features=nn.Input([blstm.B, blstm.T, 80]),
                  frame_labels=nn.Input([blstm.B, blstm.T], "i32"),
                  labels=nn.Input([blstm.B, blstm.U], "i32"))
    manifest = nn.compile(program).manifest
    assert [p.name for p in manifest.parameters] == names
    assert model.lstm1.w_ih.shape == (2, 1024, 80)


def test_dims_derive_once_and_declare_themselves():
    assert T.ceildiv(4) is T.ceildiv(4)
    assert T.ceildiv(1) is T and U + 0 is U
    assert (U + 1).declaration() == "U1: seq(B) = U + 1"
    assert T.ceildiv(4).declaration() == "T_4: seq(B) = ceildiv(T, 4)"
    assert nn.computed_dim("Z", B).declaration() == "Z: seq(B) computed"
    with pytest.raises(nn.DimError, match="exists already"):
        T.ceildiv(4, name="T4")
    with pytest.raises(nn.DimError, match="not a batch dim"):
        nn.seq_dim("S", T)
    with pytest.raises(nn.DimError, match="only sequence dims"):
        B.ceildiv(2)
    with pytest.raises(nn.DimError, match="dim name"):
        nn.batch_dim("2B")


def test_dims_that_do_not_fit_are_errors_naming_the_op():
    weight = dict(w=nn.Parameter(3, 5))
    with pytest.raises(nn.DimError, match=r"nn.linear: weight \[3, 5\] does not "
                       r"map the input's last axis \(input \[B, T, 4\]\)"):
        one_graph(lambda m, x: nn.linear(x, m.w), weight, **X)
    with pytest.raises(nn.DimError, match=r"nn.cross_entropy: scores \[B, T, 4\] "
                       r"and targets \[B, U\] do not match"):
        one_graph(lambda m, x, u: nn.cross_entropy(x, u), None,
                  x=nn.Input([B, T, 4]), u=nn.Input([B, U], "i32"))
    with pytest.raises(nn.DimError, match="nn.add: operands of one type"):
        one_graph(lambda m, x, u: x + u, None, x=nn.Input([B, T, 4]),
                  u=nn.Input([B, U, 4]))
    with pytest.raises(nn.DimError, match="the targets must be an integer"):
        one_graph(lambda m, x: nn.cross_entropy(x, nn.mse(x, x)), None, **X)
    with pytest.raises(nn.DimError, match="two different dims are named 'T'"):
        one_graph(lambda m, x, y: x, None, x=nn.Input([B, T, 4]),
                  y=nn.Input([B, nn.seq_dim("T", B), 4]))
    with pytest.raises(ValueError, match="belongs to no module"):
        one_graph(lambda m, x: nn.linear(x, nn.Parameter(3, 4)), None, **X)
    with pytest.raises(ValueError, match="eval_only goes with as_error"):
        one_graph(lambda m, x: nn.mark_loss(nn.mse(x, x), "m", "sum",
                                            eval_only=True), None, **X)
    with pytest.raises(ValueError, match="graph name 'train-step'"):
        nn.Program().graph("train-step", lambda x: None, **X)
    with pytest.raises(ValueError, match="nn.conv1d: stride 0"):
        one_graph(lambda m, x: nn.conv1d(x, m.w, stride=0),
                  dict(w=nn.Parameter(3, 3, 4)), **X)
    with pytest.raises(RuntimeError, match="graph being built"):
        nn.relu(None)
    with pytest.raises(ValueError, match="graph 'w' and parameter 'w'"):
        model = nn.Module()
        model.w = nn.Parameter(3)
        nn.Program(model).graph("w", lambda x: None, **X)
    program = nn.Program()
    kept = []
    program.graph("a", lambda x: kept.append(x), **X)
    with pytest.raises(ValueError, match="belongs to graph 'a', not 'b'"):
        program.graph("b", lambda x: nn.relu(kept[0]), **X)


def test_compile_errors_point_at_the_python_line():
    line = None

    def wrong(m, x):
        nonlocal line
        import inspect
        line = inspect.currentframe().f_lineno + 1
        return nn.op("nn.relu", [x], [nn.Input([B, T, 5])])[0]

    program = one_graph(wrong, None, **X)
    with pytest.raises(nn.Error) as error:
        nn.compile(program)
    assert f"{__file__}:{line}:" in str(error.value), str(error.value)


def test_a_trainer_trains_a_program_and_writes_nn_train_checkpoints(tmp_path):
    model = nn.Module()
    model.lstm = nn.LSTM(12, 8, bidirectional=True)
    model.out = nn.Linear(16, 6)

    def train(features, frame_labels):
        logits = model.out(model.lstm(features))
        nn.mark_loss(nn.cross_entropy(logits, frame_labels), "ce",
                     normalize="per_frame")

    program = nn.Program(model)
    program.graph("am", train, features=nn.Input([B, T, 12]),
                  frame_labels=nn.Input([B, T], "i32"))
    trainer = nn.Trainer(program, synthetic="segments", steps=4, batch_size=2,
                         epoch_steps=4, dev_batches=1, save=str(tmp_path), lr=0.01,
                         bar=False)
    trainer.compile()
    assert trainer.run()
    assert trainer.state.step == 4
    ce = trainer.dev_at_end[0]
    assert ce.name == "ce" and np.isfinite(ce.value)
    saved = nn.load_checkpoint(str(tmp_path / "step-00000004.npz"))
    assert sorted(k for k in saved.parameters if "/" not in k) == [
        "lstm.b", "lstm.w_hh", "lstm.w_ih", "out.b", "out.w"]



def test_transducer_ops_print_the_ops_written_by_hand():
    model = nn.Module()
    model.table = nn.Parameter(3, 4)
    program = nn.Program(model)
    S = nn.batch_dim("S")
    R = nn.batch_dim("R")
    predictor = program.graph("pred", lambda y: nn.embedding(y, model.table),
                              y=nn.Input([S, nn.seq_dim("V", S)], "i32"))
    joiner = program.graph("join", lambda j: nn.tanh(j), j=nn.Input([R, 4]))

    def train(e, u):
        p = predictor(nn.prepend_start(u, start=0))
        logits = joiner(nn.transducer_join(e, p))
        nn.mark_loss(nn.transducer_loss(logits, u, blank=0, topology="rna",
                                        zero_infinity=True),
                     "rna", normalize="per_sequence")
        path, _ = nn.transducer_align(logits, u, blank=0, topology="rnnt")
        frames, _ = nn.transducer_align(logits, u, blank=0)
        g = nn.gather_states(e, path, blank=0, by_blanks=True)
        hyp, _ = nn.transducer_greedy_decode(e, predictor, joiner, blank=0,
                                             start=0, max_symbols=2)
        return g, frames, hyp

    program.graph("train", train, e=nn.Input([B, T, 4]), u=nn.Input([B, U], "i32"))
    expected = f"""
nn.parameter @"table" : !nn.tensor<[3, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S, V], i32>) -> !nn.tensor<[S, V, 4], f32>
    dims [S: batch, V: seq(S)] {{
  %t = nn.param_ref @"table" : !nn.tensor<[3, 4], f32>
  %e = nn.embedding %y, %t : !nn.tensor<[S, V], i32>, !nn.tensor<[3, 4], f32>
  nn.return %e : !nn.tensor<[S, V, 4], f32>
}}
nn.graph @join(%j: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 4], f32>
    dims [R: batch] {{
  %t = nn.tanh %j : !nn.tensor<[R, 4], f32>
  nn.return %t : !nn.tensor<[R, 4], f32>
}}
nn.graph @train(%e: {F32}, %u: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, A, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B, Y], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1),
          A: seq(B) computed, Y: seq(B) computed] {{
  %s = nn.prepend_start %u start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %p = nn.call @pred(%s) : (!nn.tensor<[B, U1], i32>) -> !nn.tensor<[B, U1, 4], f32>
  %j = nn.transducer_join %e, %p : {F32}, !nn.tensor<[B, U1, 4], f32>
      -> !nn.tensor<[J, 4], f32>
  %l = nn.call @join(%j) : (!nn.tensor<[J, 4], f32>) -> !nn.tensor<[J, 4], f32>
  %loss = nn.transducer_loss %l, %u from logits topology rna blank 0 zero_infinity
      : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %loss as "rna" normalize per_sequence : !nn.tensor<[B], f32>
  %a, %as = nn.transducer_align %l, %u from logits topology rnnt blank 0
      : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
      -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  %f, %fs = nn.transducer_align %l, %u from logits topology rna blank 0
      : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
      -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %g = nn.gather_states %e, %a blank 0 by_blanks : {F32}, !nn.tensor<[B, A], i32>
      -> !nn.tensor<[B, A, 4], f32>
  %h, %hs = nn.transducer_greedy_decode %e predictor @pred joiner @join
      topology rnnt blank 0 start 0 max_symbols 2
      : {F32} -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %g, %f, %h : !nn.tensor<[B, A, 4], f32>, !nn.tensor<[B, T], i32>,
      !nn.tensor<[B, Y], i32>
}}"""
    assert printed(str(program)) == printed(expected), str(program)
