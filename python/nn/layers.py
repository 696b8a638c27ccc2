"""Layers: modules that own their parameters, named as nn's examples name
them (an LSTM's w_ih, w_hh and b; a linear layer's w and b).

Parameters are declared with their shapes only: how a fresh one is drawn
follows from the op that uses it (docs/training.md, "Initialization").
"""

from nn import ops
from nn.graph import Module, Parameter


class Linear(Module):
    """x W^T + b: [..., in_features] -> [..., out_features]."""

    def __init__(self, in_features, out_features, bias=True):
        self.w = Parameter(out_features, in_features)
        self.b = Parameter(out_features) if bias else None

    def forward(self, x):
        return ops.linear(x, self.w, self.b)


class LSTM(Module):
    """An LSTM over [B, T, in_features] -> [B, T, hidden] (2 hidden when
    bidirectional), run on real frames only."""

    def __init__(self, in_features, hidden, bidirectional=False, direction=None):
        self.direction = direction or ("bidirectional" if bidirectional else "forward")
        stack = (2,) if self.direction == "bidirectional" else ()
        self.w_ih = Parameter(*stack, 4 * hidden, in_features)
        self.w_hh = Parameter(*stack, 4 * hidden, hidden)
        self.b = Parameter(*stack, 4 * hidden)

    def forward(self, x):
        return ops.lstm(x, self.w_ih, self.w_hh, self.b, self.direction)


class Conv1d(Module):
    """A convolution over time with each sequence's own borders: [B, T,
    in_features] -> [B, ceil(T / stride), out_features]."""

    def __init__(self, in_features, out_features, kernel, stride=1, groups=1,
                 bias=True):
        if in_features % groups:
            raise ValueError(f"Conv1d: {in_features} features in {groups} groups")
        self.stride = stride
        self.groups = groups
        self.w = Parameter(out_features, kernel, in_features // groups)
        self.b = Parameter(out_features) if bias else None

    def forward(self, x):
        return ops.conv1d(x, self.w, self.b, stride=self.stride, groups=self.groups)


class LayerNorm(Module):
    """Layer normalization over the last axis, with a gain (`scale`) and a
    bias (RETURNN's names)."""

    def __init__(self, features):
        self.scale = Parameter(features)
        self.bias = Parameter(features)

    def forward(self, x):
        return ops.layer_norm(x, self.scale, self.bias)


class Embedding(Module):
    """Rows of a [vocabulary, features] table by index."""

    def __init__(self, vocabulary, features):
        self.table = Parameter(vocabulary, features)

    def forward(self, indices):
        return ops.embedding(indices, self.table)
