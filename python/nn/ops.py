"""The ops of the nn dialect as Python functions over graph values.

Each function checks what its result's type depends on (nn.DimError names
the op and what does not fit), works out that type and appends the op
to the graph being built, spelled as the dialect's assembly format spells
it (docs/dialect.md has each op's semantics). The dialect's verifier
checks the rest when the program compiles, its diagnostics at the Python
line of the op. Ops without a function here are reachable through nn.op,
in MLIR's generic form.
"""

import math

from nn.dims import Dim, DimError, computed_dim
from nn.graph import Parameter, TensorType, Value, current_graph


def _float(value):
    """A float as MLIR reads it (a literal with a '.')."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{value}: attributes must be finite")
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _values(op, *operands):
    """The graph of the operands (Parameters become their param_ref)."""
    graph = current_graph()
    values = []
    for operand in operands:
        if isinstance(operand, Parameter):
            operand = graph.param(operand)
        graph.check(operand)
        values.append(operand)
    return graph, values


def _fail(op, message):
    raise DimError(f"nn.{op}: {message}")


def _axes(value):
    return "[" + ", ".join(a.name if isinstance(a, Dim) else str(a)
                           for a in value.axes) + "]"


def _same_axis(a, b):
    return a is b or (not isinstance(a, Dim) and not isinstance(b, Dim) and a == b)


def _float_operand(op, value, what):
    if value.dtype not in ("f32", "f64"):
        _fail(op, f"{what} must be a float tensor, got {value.dtype}")


def _integer_operand(op, value, what):
    if value.dtype not in ("i32", "i64"):
        _fail(op, f"{what} must be an integer tensor, got {value.dtype}")


def _types(*values):
    return ", ".join(v.type.text() for v in values)


def _one(graph, text, type, hint):
    return graph.emit(text, [type], hint)[0]


# -- Frame-wise ops ---------------------------------------------------------


def linear(x, weight, bias=None):
    """x W^T + b over the last axis: x [..., F], weight [O, F], bias [O]."""
    operands = (x, weight) + ((bias,) if bias is not None else ())
    graph, values = _values("linear", *operands)
    x, weight = values[0], values[1]
    _float_operand("linear", x, "the input")
    if len(weight.axes) != 2 or not _same_axis(weight.axes[1], x.axes[-1]):
        _fail("linear", f"weight {_axes(weight)} does not map the input's last "
                        f"axis (input {_axes(x)})")
    if bias is not None and (len(values[2].axes) != 1 or
                             not _same_axis(values[2].axes[0], weight.axes[0])):
        _fail("linear", f"bias {_axes(values[2])} is not [{weight.axes[0]}]")
    names = ", ".join(v.name for v in values)
    result = TensorType(x.axes[:-1] + [weight.axes[0]], x.dtype)
    return _one(graph, f"nn.linear {names} : {_types(*values)}", result, "linear")


def _unary(op, x):
    graph, (x,) = _values(op, x)
    _float_operand(op, x, "the input")
    return _one(graph, f"nn.{op} {x.name} : {x.type.text()}", x.type, op)


def relu(x):
    return _unary("relu", x)


def tanh(x):
    return _unary("tanh", x)


def sigmoid(x):
    return _unary("sigmoid", x)


def gelu(x):
    return _unary("gelu", x)


def silu(x):
    return _unary("silu", x)


def softmax(x):
    """Softmax over the last axis."""
    return _unary("softmax", x)


def log_softmax(x):
    """Log-softmax over the last axis."""
    return _unary("log_softmax", x)


def _binary(op, a, b):
    graph, (a, b) = _values(op, a, b)
    if a.type != b.type:
        _fail(op, f"operands of one type expected, got {a.type.text()} and "
                  f"{b.type.text()}")
    return _one(graph, f"nn.{op} {a.name}, {b.name} : {a.type.text()}", a.type, op)


def add(a, b):
    return _binary("add", a, b)


def mul(a, b):
    return _binary("mul", a, b)


def scale(x, factor):
    """x times a constant."""
    graph, (x,) = _values("scale", x)
    _float_operand("scale", x, "the input")
    return _one(graph, f"nn.scale {x.name} by {_float(factor)} : {x.type.text()}",
                x.type, "scale")


def concat(*values):
    """Concatenation along the last axis."""
    graph, values = _values("concat", *values)
    if len(values) < 2:
        _fail("concat", "needs at least two operands")
    first = values[0]
    for value in values[1:]:
        if (value.dtype != first.dtype or len(value.axes) != len(first.axes) or
                not all(_same_axis(a, b)
                        for a, b in zip(value.axes[:-1], first.axes[:-1]))):
            _fail("concat", f"operands must agree but on the last axis: "
                            f"{_axes(first)} and {_axes(value)}")
        if isinstance(value.axes[-1], Dim):
            _fail("concat", "the last axis must be a static size")
    width = sum(v.axes[-1] for v in values)
    names = ", ".join(v.name for v in values)
    return _one(graph, f"nn.concat {names} : {_types(*values)}",
                TensorType(first.axes[:-1] + [width], first.dtype), "concat")


def glu(x):
    """The gated linear unit over the last axis: a * sigmoid(b), halving it."""
    graph, (x,) = _values("glu", x)
    _float_operand("glu", x, "the input")
    width = x.axes[-1]
    if isinstance(width, Dim) or width % 2:
        _fail("glu", f"the last axis must be an even size, got {_axes(x)}")
    return _one(graph, f"nn.glu {x.name} : {x.type.text()}",
                TensorType(x.axes[:-1] + [width // 2], x.dtype), "glu")


def dropout(x, rate):
    """Drops units with probability `rate` in training (scaling the others by
    1 / (1 - rate)); the identity otherwise."""
    if not 0 <= rate < 1:
        raise ValueError(f"nn.dropout: rate {rate} is not in [0, 1)")
    graph, (x,) = _values("dropout", x)
    _float_operand("dropout", x, "the input")
    return _one(graph, f"nn.dropout {x.name} rate {_float(rate)} : "
                       f"{x.type.text()}", x.type, "dropout")


def layer_norm(x, gain, bias):
    """Layer normalization over the last axis, with a gain and a bias."""
    graph, (x, gain, bias) = _values("layer_norm", x, gain, bias)
    _float_operand("layer_norm", x, "the input")
    for what, value in (("gain", gain), ("bias", bias)):
        if len(value.axes) != 1 or not _same_axis(value.axes[0], x.axes[-1]):
            _fail("layer_norm", f"the {what} {_axes(value)} is not "
                                f"[{x.axes[-1]}]")
    return _one(graph, f"nn.layer_norm {x.name}, {gain.name}, {bias.name} : "
                       f"{_types(x, gain, bias)}", x.type, "norm")


def embedding(indices, table):
    """Rows of `table` [V, E] by index: indices [...] -> [..., E]."""
    graph, (indices, table) = _values("embedding", indices, table)
    _integer_operand("embedding", indices, "the indices")
    if len(table.axes) != 2:
        _fail("embedding", f"the table must be [V, E], got {_axes(table)}")
    return _one(graph, f"nn.embedding {indices.name}, {table.name} : "
                       f"{_types(indices, table)}",
                TensorType(indices.axes + [table.axes[1]], table.dtype), "embed")


# -- Sequence-mixing ops ----------------------------------------------------


def _stride(op, stride):
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1:
        raise ValueError(f"nn.{op}: stride {stride!r} is not an integer >= 1")
    return stride


def _time_axis(op, x):
    """The sequence axis of x [B, T, F]."""
    if len(x.axes) != 3 or not isinstance(x.axes[1], Dim) or not x.axes[1].is_seq:
        _fail(op, f"expected an input [B, T, F] over a sequence dim, got {_axes(x)}")
    return x.axes[1]


def lstm(x, input_weight, recurrent_weight, bias, direction="forward"):
    """An LSTM over the sequence axis of x [B, T, F], on real frames only.
    forward/backward: weights [4H, F], [4H, H], [4H] -> [B, T, H];
    bidirectional: [2, 4H, F], [2, 4H, H], [2, 4H] -> [B, T, 2H]."""
    if direction not in ("forward", "backward", "bidirectional"):
        raise ValueError(f"nn.lstm: direction {direction!r} is not forward, "
                         "backward or bidirectional")
    graph, values = _values("lstm", x, input_weight, recurrent_weight, bias)
    x, wi, wh, b = values
    _time_axis("lstm", x)
    stacked = 1 if direction == "bidirectional" else 0
    if len(wh.axes) != 2 + stacked:
        _fail("lstm", f"the recurrent weight {_axes(wh)} does not fit a "
                      f"{direction} LSTM")
    hidden = wh.axes[-1]
    width = hidden * (2 if stacked else 1)
    names = ", ".join(v.name for v in values)
    return _one(graph, f"nn.lstm {direction} {names} : {_types(*values)}",
                TensorType(x.axes[:-1] + [width], x.dtype), "lstm")


def conv1d(x, weight, bias=None, stride=1, groups=1):
    """A convolution over the sequence axis of x [B, T, F] with each
    sequence's own borders: weight [O, K, F / groups] -> [B, ceil(T /
    stride), O]."""
    operands = (x, weight) + ((bias,) if bias is not None else ())
    graph, values = _values("conv1d", *operands)
    x, weight = values[0], values[1]
    time = _time_axis("conv1d", x)
    if len(weight.axes) != 3:
        _fail("conv1d", f"the weight must be [O, K, F / groups], got {_axes(weight)}")
    result = TensorType([x.axes[0], time.ceildiv(_stride("conv1d", stride)),
                         weight.axes[0]], x.dtype)
    names = ", ".join(v.name for v in values)
    attrs = f" stride {stride}" + (f" groups {groups}" if groups != 1 else "")
    return _one(graph, f"nn.conv1d {names}{attrs} : ({_types(*values)}) -> "
                       f"{result.text()}", result, "conv")


def pool(x, kind, window, stride):
    """Max or average pooling over the sequence axis: [B, T, F] -> [B,
    ceil(T / stride), F]."""
    if kind not in ("max", "avg"):
        raise ValueError(f"nn.pool: kind {kind!r} is not max or avg")
    graph, (x,) = _values("pool", x)
    time = _time_axis("pool", x)
    result = TensorType([x.axes[0], time.ceildiv(_stride("pool", stride)),
                         x.axes[2]], x.dtype)
    return _one(graph, f"nn.pool {kind} {x.name} window {window} stride {stride} "
                       f": ({x.type.text()}) -> {result.text()}", result, "pool")


def reduce(x, kind, axis):
    """Max, mean or sum over axis `axis` (a sequence axis counts real
    frames only)."""
    graph, (x,) = _values("reduce", x)
    if not 0 <= axis < len(x.axes):
        _fail("reduce", f"axis {axis} of {_axes(x)}")
    result = TensorType(x.axes[:axis] + x.axes[axis + 1:], x.dtype)
    return _one(graph, f"nn.reduce {kind} {x.name} over {axis} : {x.type.text()}",
                result, "reduce")


def broadcast_seq(x, dim):
    """A per-sequence value on every frame: [B, F...] -> [B, dim, F...]."""
    graph, (x,) = _values("broadcast_seq", x)
    if not isinstance(dim, Dim) or not dim.is_seq:
        _fail("broadcast_seq", f"{dim!r} is not a sequence dim")
    result = TensorType(x.axes[:1] + [dim] + x.axes[1:], x.dtype)
    return _one(graph, f"nn.broadcast_seq {x.name} : {x.type.text()} -> "
                       f"{result.text()}", result, "bcast")


def attention(query, key, value, heads, relative=None, causal=False, scale=None,
              left_context=None, right_context=None, chunk_size=None,
              left_chunks=None, dropout=None):
    """Multi-head scaled dot-product attention within each sequence:
    query [B, Tq, H Dk], key [B, Tk, H Dk], value [B, Tk, H Dv] -> [B, Tq,
    H Dv]. `relative=(r, p)` adds Transformer-XL relative positions (p from
    nn.relative_positions)."""
    operands = [query, key, value] + (list(relative) if relative else [])
    graph, values = _values("attention", *operands)
    query, key, value = values[:3]
    result = TensorType(query.axes[:-1] + value.axes[-1:], query.dtype)
    text = f"nn.attention {query.name}, {key.name}, {value.name}"
    if relative:
        text += f" relative {values[3].name}, {values[4].name}"
    text += f" heads {heads}"
    if scale is not None:
        text += f" scale {_float(scale)}"
    if causal:
        text += " causal"
    for name, setting in (("left_context", left_context),
                          ("right_context", right_context),
                          ("chunk_size", chunk_size), ("left_chunks", left_chunks)):
        if setting is not None:
            text += f" {name} {setting}"
    if dropout is not None:
        text += f" dropout {_float(dropout)}"
    return _one(graph, f"{text} : {_types(*values)}", result, "att")


def relative_positions(weight, max_distance):
    """Projected sinusoid embeddings of the distances -c ... c (c =
    `max_distance`): weight [D, E] -> [2c + 1, D]."""
    graph, (weight,) = _values("relative_positions", weight)
    result = TensorType([2 * max_distance + 1, weight.axes[0]], weight.dtype)
    return _one(graph, f"nn.relative_positions {weight.name} : "
                       f"{weight.type.text()} -> {result.text()}", result, "pos")


def spec_augment(x, freq_masks, freq_width, time_masks, time_width,
                 time_ratio=1.0):
    """SpecAugment on x [B, T, F] in training (masks drawn per sequence
    within its own length); the identity otherwise."""
    graph, (x,) = _values("spec_augment", x)
    _time_axis("spec_augment", x)
    text = (f"nn.spec_augment {x.name} freq_masks {freq_masks} freq_width "
            f"{freq_width} time_masks {time_masks} time_width {time_width}")
    if time_ratio != 1.0:
        text += f" time_ratio {_float(time_ratio)}"
    return _one(graph, f"{text} : {x.type.text()}", x.type, "specaug")


def rotary(x, heads, base=None, inverse=False):
    """Rotary position embeddings by each frame's place in its own sequence
    (x [B, T, H Dk])."""
    graph, (x,) = _values("rotary", x)
    _time_axis("rotary", x)
    text = f"nn.rotary {x.name} heads {heads}"
    if base is not None:
        text += f" base {_float(base)}"
    if inverse:
        text += " inverse"
    return _one(graph, f"{text} : {x.type.text()}", x.type, "rot")


def pack(x):
    """The real frames of x [B, T, F...] in one row each: [N_T, F...]."""
    graph, (x,) = _values("pack", x)
    time = x.axes[1] if len(x.axes) > 1 else None
    if not isinstance(time, Dim) or not time.is_seq:
        _fail("pack", f"expected [B, T, ...] over a sequence dim, got {_axes(x)}")
    result = TensorType([time.packed()] + x.axes[2:], x.dtype)
    return _one(graph, f"nn.pack {x.name} : {x.type.text()} -> {result.text()}",
                result, "packed")


def unpack(x, batch_axes):
    """Packed rows [N_T, F...] back to [B, T, F...] (`batch_axes`: [B, T]),
    the padding zero."""
    graph, (x,) = _values("unpack", x)
    result = TensorType(list(batch_axes) + x.axes[1:], x.dtype)
    return _one(graph, f"nn.unpack {x.name} : {x.type.text()} -> {result.text()}",
                result, "unpacked")


# -- Losses and their marks -------------------------------------------------


def cross_entropy(scores, targets, input="logits", label_smoothing=None):
    """Cross entropy per position: scores [..., C] (logits or log_probs),
    targets [...] class indices -> [...]."""
    if input not in ("logits", "log_probs"):
        raise ValueError(f"nn.cross_entropy: input {input!r} is not logits or "
                         "log_probs")
    graph, (scores, targets) = _values("cross_entropy", scores, targets)
    _integer_operand("cross_entropy", targets, "the targets")
    if len(scores.axes) != len(targets.axes) + 1 or not all(
            _same_axis(a, b) for a, b in zip(scores.axes, targets.axes)):
        _fail("cross_entropy", f"scores {_axes(scores)} and targets "
                               f"{_axes(targets)} do not match")
    text = f"nn.cross_entropy {scores.name}, {targets.name} from {input}"
    if label_smoothing is not None:
        text += f" label_smoothing {_float(label_smoothing)}"
    return _one(graph, f"{text} : {_types(scores, targets)}",
                TensorType(targets.axes, scores.dtype), "ce")


def linear_cross_entropy(x, weight, targets, bias=None, label_smoothing=None):
    """The output layer and its cross entropy fused, never holding the
    logits: x [..., F], weight [C, F], targets [...] -> [...]."""
    operands = (x, weight, targets) + ((bias,) if bias is not None else ())
    graph, values = _values("linear_cross_entropy", *operands)
    x, weight, targets = values[:3]
    _integer_operand("linear_cross_entropy", targets, "the targets")
    text = f"nn.linear_cross_entropy {x.name}, {weight.name}"
    if bias is not None:
        text += f", {values[3].name}"
    text += f" targets {targets.name}"
    if label_smoothing is not None:
        text += f" label_smoothing {_float(label_smoothing)}"
    types = _types(x, weight, targets) + (
        f", {values[3].type.text()}" if bias is not None else "")
    return _one(graph, f"{text} : {types}", TensorType(targets.axes, x.dtype), "ce")


def param_norm(*parameters):
    """The summed squares of parameters (an L2 regularization loss, [])."""
    graph, values = _values("param_norm", *parameters)
    names = ", ".join(v.name for v in values)
    return _one(graph, f"nn.param_norm {names} : {_types(*values)}",
                TensorType([], "f32"), "l2")


def mse(prediction, target):
    """Squared error summed over the last axis: [..., F] -> [...]."""
    graph, (prediction, target) = _values("mse", prediction, target)
    if prediction.type != target.type:
        _fail("mse", f"prediction {prediction.type.text()} and target "
                     f"{target.type.text()} differ")
    return _one(graph, f"nn.mse {prediction.name}, {target.name} : "
                       f"{_types(prediction, target)}",
                TensorType(prediction.axes[:-1], prediction.dtype), "mse")


def frame_error(scores, targets):
    """1 where the best-scoring class is not the target, else 0."""
    graph, (scores, targets) = _values("frame_error", scores, targets)
    _integer_operand("frame_error", targets, "the targets")
    return _one(graph, f"nn.frame_error {scores.name}, {targets.name} : "
                       f"{_types(scores, targets)}",
                TensorType(targets.axes, scores.dtype), "err")


def ctc_loss(scores, labels, blank, input="logits", zero_infinity=False):
    """CTC per sequence: scores [B, T, C], labels [B, U] -> [B]."""
    graph, (scores, labels) = _values("ctc_loss", scores, labels)
    _integer_operand("ctc_loss", labels, "the labels")
    text = f"nn.ctc_loss {scores.name}, {labels.name} from {input} blank {blank}"
    if zero_infinity:
        text += " zero_infinity"
    return _one(graph, f"{text} : {_types(scores, labels)}",
                TensorType(scores.axes[:1], scores.dtype), "ctc")


def edit_distance(hypotheses, references, word_separator=None):
    """Levenshtein distance per sequence between label sequences [B, Y] and
    [B, U] (of words between `word_separator` labels when given): (errors
    [B], reference lengths [B], counts [B, 3] of S, I and D). Mark the
    errors with the lengths as a custom normalization for an error rate."""
    graph, (hyp, ref) = _values("edit_distance", hypotheses, references)
    _integer_operand("edit_distance", hyp, "the hypotheses")
    _integer_operand("edit_distance", ref, "the references")
    text = f"nn.edit_distance {hyp.name}, {ref.name}"
    if word_separator is not None:
        text += f" words separator {word_separator}"
    batch = hyp.axes[:1]
    return tuple(graph.emit(f"{text} : {_types(hyp, ref)}",
                            [TensorType(batch, "f32"), TensorType(batch, "f32"),
                             TensorType(batch + [3], "i32")], "edits"))


def mark_loss(loss, name, normalize, scale=None, as_error=False, eval_only=False,
              normalization=None, weights=None):
    """Marks `loss` as the loss `name`, normalized per_frame, per_sequence,
    sum or custom (by the values `normalization`), at `scale`; as_error
    reports it without training it."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"nn.mark_loss: the name must be a non-empty string, got "
                        f"{name!r}")
    if scale is not None and (isinstance(scale, bool) or
                              not isinstance(scale, (int, float)) or
                              not math.isfinite(scale) or scale < 0):
        raise ValueError(f"nn.mark_loss '{name}': scale {scale!r} is not a finite "
                         "number >= 0")
    if eval_only and not as_error:
        raise ValueError(f"nn.mark_loss '{name}': eval_only goes with as_error (a "
                         "loss left out of train steps cannot train)")
    if normalize not in ("per_frame", "per_sequence", "sum", "custom"):
        raise ValueError(f"nn.mark_loss: normalize {normalize!r} is not "
                         "per_frame, per_sequence, sum or custom")
    if (normalize == "custom") != (normalization is not None):
        raise ValueError("nn.mark_loss: normalize='custom' goes with "
                         "normalization=VALUES, and only it")
    operands = [loss] + [v for v in (normalization, weights) if v is not None]
    graph, values = _values("mark_loss", *operands)
    loss = values[0]
    text = f"nn.mark_loss {loss.name}"
    types = loss.type.text()
    rest = values[1:]
    if normalization is not None:
        text += f", {rest[0].name}"
        types += f", {rest[0].type.text()}"
        rest = rest[1:]
    if weights is not None:
        text += f" weights {rest[0].name}"
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    text += f' as "{quoted}" normalize {normalize}'
    if scale is not None:
        text += f" scale {_float(scale)}"
    if as_error:
        text += " as_error"
    if eval_only:
        text += " eval_only"
    if weights is not None:
        types += f" weights {rest[0].type.text()}"
    graph.emit(f"{text} : {types}")


# -- Decoding ---------------------------------------------------------------


def ctc_greedy_decode(scores, blank, input="logits", dim=None):
    """Best-path CTC decoding of scores [B, T, C]: (labels [B, Y] over a
    computed dim Y, scores [B])."""
    graph, (scores,) = _values("ctc_greedy_decode", scores)
    batch = scores.axes[0]
    if dim is None:
        dim = computed_dim(graph.fresh_dim("Y"), batch)
    labels = TensorType([batch, dim], "i32")
    score = TensorType([batch], scores.dtype)
    values = graph.emit(f"nn.ctc_greedy_decode {scores.name} from {input} blank "
                        f"{blank} : {scores.type.text()} -> {labels.text()}, "
                        f"{score.text()}", [labels, score], "hyp")
    return tuple(values)


def ctc_beam_search(scores, blank, beam, input="logits", merge="sum",
                    token_beam=None, token_threshold=None, score_beam=None,
                    length_bonus=None, nbest=False, dim=None):
    """The CTC prefix beam search over scores [B, T, C]: the best hypothesis
    [B, Y] over a computed dim and its score [B]; with `nbest`, the N-best
    list [B, K, Z] (K hypotheses per sequence, a computed dim; Z their
    labels, a computed dim of the flattened batch H = flatten(B, K)) and
    the scores [B, K]."""
    graph, (scores,) = _values("ctc_beam_search", scores)
    batch = scores.axes[0]
    text = (f"nn.ctc_beam_search {scores.name} from {input} blank {blank} beam "
            f"{beam} merge {merge}")
    if token_beam is not None:
        if isinstance(token_beam, bool) or not isinstance(token_beam, int):
            raise TypeError(f"nn.ctc_beam_search: token_beam {token_beam!r} is not "
                            "an integer")
        text += f" token_beam {token_beam}"
    for name, value in (("token_threshold", token_threshold),
                        ("score_beam", score_beam), ("length_bonus", length_bonus)):
        if value is not None:
            text += f" {name} {_float(value)}"
    if nbest:
        hypotheses = computed_dim(graph.fresh_dim("K"), batch)
        flat = hypotheses.flattened(graph.fresh_dim("H"))
        length = dim or computed_dim(graph.fresh_dim("Z"), flat)
        labels = TensorType([batch, hypotheses, length], "i32")
        score = TensorType([batch, hypotheses], scores.dtype)
    else:
        length = dim or computed_dim(graph.fresh_dim("Y"), batch)
        labels = TensorType([batch, length], "i32")
        score = TensorType([batch], scores.dtype)
    return tuple(graph.emit(f"{text} : {scores.type.text()} -> {labels.text()}, "
                            f"{score.text()}", [labels, score], "hyp"))


def _beam_dims(op, x):
    """The batch and hypothesis dims (B, K) of x [B, K, ...]."""
    if (len(x.axes) < 2 or not isinstance(x.axes[1], Dim) or not x.axes[1].is_seq
            or x.axes[1].batch is not x.axes[0]):
        _fail(op, f"expected [B, K, ...] with K the hypotheses of B, got {_axes(x)}")
    return x.axes[0], x.axes[1]


def flatten_beam(x):
    """[B, K, ...] to [H, ...]: one batch entry per hypothesis."""
    graph, (x,) = _values("flatten_beam", x)
    _, hypotheses = _beam_dims("flatten_beam", x)
    result = TensorType([hypotheses.flattened()] + x.axes[2:], x.dtype)
    return _one(graph, f"nn.flatten_beam {x.name} : {x.type.text()} -> "
                       f"{result.text()}", result, "flat")


def unflatten_beam(x):
    """[H, ...] back to [B, K, ...], the padding zero."""
    graph, (x,) = _values("unflatten_beam", x)
    flat = x.axes[0]
    if not isinstance(flat, Dim) or not flat.is_flatten:
        _fail("unflatten_beam", f"expected [H, ...] over a flattened batch, got "
                                f"{_axes(x)}")
    result = TensorType([flat.source, flat.inner] + x.axes[1:], x.dtype)
    return _one(graph, f"nn.unflatten_beam {x.name} : {x.type.text()} -> "
                       f"{result.text()}", result, "beam")


def repeat_beam(x, flat):
    """x [B, S..., F...] for each entry of the flattened batch `flat`
    (flatten(B, K)): [H, SH..., F...], each sequence dim lifted onto H."""
    graph, (x,) = _values("repeat_beam", x)
    if not isinstance(flat, Dim) or not flat.is_flatten or x.axes[0] is not flat.source:
        _fail("repeat_beam", f"{flat!r} does not flatten the batch of {_axes(x)}")
    axes = [flat] + [flat.lift(a) if isinstance(a, Dim) and a.is_seq else a
                     for a in x.axes[1:]]
    result = TensorType(axes, x.dtype)
    return _one(graph, f"nn.repeat_beam {x.name} : {x.type.text()} -> "
                       f"{result.text()}", result, "rep")


def sum_beam(x):
    """The adjoint of repeat_beam: [H, SH..., F...] to [B, S..., F...],
    summed over each sequence's hypotheses."""
    graph, (x,) = _values("sum_beam", x)
    flat = x.axes[0]
    if not isinstance(flat, Dim) or not flat.is_flatten:
        _fail("sum_beam", f"expected [H, ...] over a flattened batch, got {_axes(x)}")
    axes = [flat.source] + [a.source if isinstance(a, Dim) and a.is_lift else a
                            for a in x.axes[1:]]
    result = TensorType(axes, x.dtype)
    return _one(graph, f"nn.sum_beam {x.name} : {x.type.text()} -> "
                       f"{result.text()}", result, "sum")


def expected_risk(nll, errors, baseline="mean"):
    """Minimum expected risk (MWER) of an N-best list: nll and errors [B, K]
    -> [B], sum_k P(y_k) (err_k - baseline)."""
    if baseline not in ("mean", "none"):
        raise ValueError(f"nn.expected_risk: baseline {baseline!r} is not mean or "
                         "none")
    graph, (nll, errors) = _values("expected_risk", nll, errors)
    return _one(graph, f"nn.expected_risk {nll.name}, {errors.name} baseline "
                       f"{baseline} : {_types(nll, errors)}",
                TensorType(nll.axes[:1], nll.dtype), "risk")


def viterbi_align(scores, labels, blank, topology="ctc", input="logits",
                  prior=None):
    """The best path of `labels` through scores [B, T, C] (CTC or RNA
    topology): (the label of each frame [B, T], the path's score [B])."""
    operands = (scores, labels) + ((prior,) if prior is not None else ())
    graph, values = _values("viterbi_align", *operands)
    scores, labels = values[:2]
    text = (f"nn.viterbi_align {scores.name}, {labels.name} from {input} "
            f"topology {topology} blank {blank}")
    if prior is not None:
        text += f" prior {values[2].name}"
    results = [TensorType(scores.axes[:2], "i32"),
               TensorType(scores.axes[:1], scores.dtype)]
    return tuple(graph.emit(f"{text} : {_types(*values)}", results, "align"))


# -- Transducers ------------------------------------------------------------


def prepend_start(labels, start):
    """The prediction network's input: `start`, then the labels: [B, U] ->
    [B, U + 1]."""
    graph, (labels,) = _values("prepend_start", labels)
    _integer_operand("prepend_start", labels, "the labels")
    result = TensorType([labels.axes[0], labels.axes[1] + 1], labels.dtype)
    return _one(graph, f"nn.prepend_start {labels.name} start {start} : "
                       f"{labels.type.text()} -> {result.text()}", result, "start")


def transducer_join(encoder, prediction):
    """Encoder frames [B, T, D] plus prediction states [B, U1, D] on the
    packed (t, u) grid of each sequence: [J, D]."""
    graph, (encoder, prediction) = _values("transducer_join", encoder, prediction)
    time = _time_axis("transducer_join", encoder)
    labels = _time_axis("transducer_join", prediction)
    result = TensorType([time.packed(labels)] + encoder.axes[2:], encoder.dtype)
    return _one(graph, f"nn.transducer_join {encoder.name}, {prediction.name} : "
                       f"{_types(encoder, prediction)} -> {result.text()}",
                result, "joint")


def transducer_loss(joint, labels, blank, topology="rnnt", input="logits",
                    zero_infinity=False):
    """The RNN-T or RNA loss per sequence of the joint [J, V] (packed) or
    [B, T, U1, V]: [B]."""
    graph, (joint, labels) = _values("transducer_loss", joint, labels)
    text = (f"nn.transducer_loss {joint.name}, {labels.name} from {input} "
            f"topology {topology} blank {blank}")
    if zero_infinity:
        text += " zero_infinity"
    return _one(graph, f"{text} : {_types(joint, labels)}",
                TensorType(labels.axes[:1], joint.dtype), "loss")


def _transducer_search(op, encoder, predictor, joiner, blank, start, topology,
                       beam, max_symbols, dim):
    graph, (encoder,) = _values(op, encoder)
    batch = encoder.axes[0]
    dim = dim or computed_dim(graph.fresh_dim("Y"), batch)
    text = (f"nn.{op} {encoder.name} predictor @{predictor.name} joiner "
            f"@{joiner.name} topology {topology} blank {blank} start {start}")
    if beam is not None:
        text += f" beam {beam}"
    if max_symbols is not None:
        text += f" max_symbols {max_symbols}"
    labels = TensorType([batch, dim], "i32")
    score = TensorType([batch], encoder.dtype)
    return tuple(graph.emit(f"{text} : {encoder.type.text()} -> {labels.text()}, "
                            f"{score.text()}", [labels, score], "hyp"))


def transducer_greedy_decode(encoder, predictor, joiner, blank, start,
                             topology="rnnt", max_symbols=None, dim=None):
    """Greedy transducer decoding of encoder frames [B, T, D] with the
    graphs the training graph calls (`predictor`, `joiner`: what
    Program.graph returned): (labels [B, Y], scores [B])."""
    return _transducer_search("transducer_greedy_decode", encoder, predictor,
                              joiner, blank, start, topology, None, max_symbols,
                              dim)


def transducer_beam_search(encoder, predictor, joiner, blank, start, beam,
                           topology="rnnt", max_symbols=None, dim=None):
    """Transducer beam search (hypotheses merged by label sequence) with the
    graphs the training graph calls: (labels [B, Y], scores [B])."""
    return _transducer_search("transducer_beam_search", encoder, predictor,
                              joiner, blank, start, topology, beam, max_symbols,
                              dim)


def transducer_align(joint, labels, blank, topology="rna", input="logits",
                     dim=None):
    """The best path through a packed joint [J, V]: RNA, the label of each
    frame [B, T]; RNN-T, the T + U emissions [B, A] over a computed dim.
    Returns (alignment, score [B])."""
    graph, (joint, labels) = _values("transducer_align", joint, labels)
    grid = joint.axes[0]
    if not isinstance(grid, Dim) or not grid.is_packed or grid.inner is None:
        _fail("transducer_align", f"the joint must be packed [J, V], got "
                                  f"{_axes(joint)}")
    batch = labels.axes[0]
    if topology == "rnnt":
        path = dim or computed_dim(graph.fresh_dim("A"), batch)
    else:
        path = grid.source
    results = [TensorType([batch, path], "i32"), TensorType([batch], joint.dtype)]
    return tuple(graph.emit(
        f"nn.transducer_align {joint.name}, {labels.name} from {input} topology "
        f"{topology} blank {blank} : {_types(joint, labels)} -> "
        f"{results[0].text()}, {results[1].text()}", results, "align"))


def gather_states(states, alignment, blank, by_blanks=False):
    """Each alignment position's state: states [B, S, D] at the labels
    (or, by_blanks, the frames) emitted before it: [B, A, D]."""
    graph, (states, alignment) = _values("gather_states", states, alignment)
    result = TensorType(alignment.axes + states.axes[2:], states.dtype)
    text = f"nn.gather_states {states.name}, {alignment.name} blank {blank}"
    if by_blanks:
        text += " by_blanks"
    return _one(graph, f"{text} : {_types(states, alignment)} -> {result.text()}",
                result, "gathered")


# -- Anything else ----------------------------------------------------------


def op(name, operands, results, attributes=None):
    """Any op in MLIR's generic form: `name` ("nn.foo"), operand values,
    result types (nn.Input(...)) and inherent attributes as MLIR attribute
    text ({"blank": "0 : i64"}). Returns the result values."""
    graph, values = _values(name, *operands)
    results = list(results)
    for result in results:
        if not isinstance(result, TensorType):
            raise TypeError(f"{name}: results must be types (nn.Input), got "
                            f"{result!r}")
    props = ""
    if attributes:
        props = " <{" + ", ".join(f"{k} = {v}" for k, v in attributes.items()) + "}>"
    names = ", ".join(v.name for v in values)
    out = ", ".join(r.text() for r in results)
    text = (f'"{name}"({names}){props} : ({_types(*values)}) -> '
            f"{'(' + out + ')' if len(results) != 1 else out}")
    return tuple(graph.emit(text, results, "op"))
