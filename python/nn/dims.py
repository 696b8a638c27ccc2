"""Named dims: the axes of nn tensors that have a meaning beyond a size.

A batch dim (`B = nn.batch_dim("B")`), the sequence dims of a batch
(`T = nn.seq_dim("T", B)`: each sequence has its own length, a run-time
input), sequence dims derived from another (`T.ceildiv(4)`, `U + 1`: their
lengths follow from the source's) and sequence dims whose lengths a graph
computes (`nn.computed_dim("Y", B)`: a decoder's hypotheses), and packed
dims (`T.packed()`: the real frames of all sequences, `T.packed(U1)`: the
(t, u) grid of a transducer joint). They are the dims of `nn.graph ...
dims [...]` (docs/dialect.md); static axes are plain integers.
"""

import re

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class DimError(ValueError):
    """Dims that do not fit together (an op given the wrong axes)."""


class Dim:
    """A named dim. Create them with batch_dim, seq_dim, computed_dim, or
    from another with ceildiv and +; derived dims are made once per source
    and rule, so `T.ceildiv(2)` is the same Dim each time."""

    def __init__(self, name, kind, batch=None, source=None, factor=1,
                 offset=0, computed=False, inner=None):
        if not isinstance(name, str) or not _NAME.match(name):
            raise DimError(f"dim name {name!r}: expected a name of letters, "
                           "digits and '_' (not starting with a digit)")
        self.name = name
        self.kind = kind
        self.batch = batch
        self.source = source
        self.factor = factor
        self.offset = offset
        self.computed = computed
        # Packed dims: `source` is the sequence dim packed, `inner` the
        # second one of a grid.
        self.inner = inner
        self._derived = {}

    @property
    def is_batch(self):
        return self.kind == "batch"

    @property
    def is_seq(self):
        return self.kind == "seq"

    @property
    def is_packed(self):
        return self.kind == "packed"

    @property
    def is_derived(self):
        """ceildiv(S, k) or S + c (not a lift)."""
        return self.kind == "seq" and self.source is not None and not self.is_lift

    @property
    def is_lift(self):
        """A sequence dim of a flattened batch that takes its source
        sequence's length (`TH: seq(H) = T`)."""
        return (self.kind == "seq" and self.source is not None and
                self.factor == 1 and self.offset == 0)

    @property
    def is_flatten(self):
        """A batch of one entry per hypothesis (`H: batch = flatten(B, K)`)."""
        return self.kind == "batch" and self.source is not None

    def flattened(self, name=None):
        """The batch of one entry per (b, k) of this sequence dim K of B:
        flatten(B, K), an N-best list's hypotheses."""
        if not self.is_seq:
            raise DimError(f"dim '{self.name}' is not a sequence dim; flatten "
                           "takes the sequence dim of the hypotheses")
        dim = self._derived.get("flatten")
        if dim is None:
            dim = Dim(name or "H", "batch", source=self.batch, inner=self)
            self._derived["flatten"] = dim
        return dim

    def lift(self, sequence, name=None):
        """On a flattened batch, the sequence dim that takes `sequence`'s
        length for each entry (a dim of the batch it flattens)."""
        if not self.is_flatten:
            raise DimError(f"dim '{self.name}' is not a flattened batch")
        if not isinstance(sequence, Dim) or not sequence.is_seq or \
                sequence.batch is not self.source:
            raise DimError(f"lift onto '{self.name}': {sequence!r} is not a "
                           f"sequence dim of {self.source.name}")
        key = ("lift", id(self))
        dim = sequence._derived.get(key)
        if dim is None:
            dim = Dim(name or sequence.name + self.name, "seq", batch=self,
                      source=sequence)
            sequence._derived[key] = dim
        return dim

    def packed(self, inner=None, name=None):
        """The packed dim of this sequence dim's real frames (N_T), or with
        `inner` of the (t, u) grid of this dim and `inner` (J)."""
        if not self.is_seq:
            raise DimError(f"dim '{self.name}' is not a sequence dim; only "
                           "sequence dims pack")
        if inner is not None and (not isinstance(inner, Dim) or not inner.is_seq
                                  or inner.batch is not self.batch):
            raise DimError(f"packed({self.name}, {inner!r}): the inner dim must "
                           f"be a sequence dim of {self.batch.name}")
        key = ("packed", id(inner))
        dim = self._derived.get(key)
        if dim is None:
            dim = Dim(name or ("J" if inner is not None else f"N_{self.name}"),
                      "packed", batch=self.batch, source=self, inner=inner)
            self._derived[key] = dim
        elif name is not None and name != dim.name:
            raise DimError(f"dim '{dim.name}' exists already; it cannot also be "
                           f"named '{name}'")
        return dim

    def _derive(self, factor, offset, name):
        if not self.is_seq:
            raise DimError(f"dim '{self.name}' is a batch dim; only sequence "
                           "dims derive others")
        key = (factor, offset)
        dim = self._derived.get(key)
        if dim is None:
            if name is None:
                name = (f"{self.name}_{factor}" if factor > 1
                        else f"{self.name}{offset}" if offset > 0 else None)
            dim = Dim(name, "seq", batch=self.batch, source=self,
                      factor=factor, offset=offset)
            self._derived[key] = dim
        elif name is not None and name != dim.name:
            raise DimError(f"dim '{dim.name}' = {dim.rule()} exists already; "
                           f"it cannot also be named '{name}'")
        return dim

    def ceildiv(self, factor, name=None):
        """The sequence dim of length ceil(len / factor) per sequence (a
        stride or a subsampling by `factor`); itself for factor 1."""
        if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
            raise DimError(f"ceildiv({self.name}, {factor!r}): the factor must "
                           "be an integer >= 1")
        if factor == 1:
            return self
        return self._derive(factor, 0, name)

    def plus(self, offset, name=None):
        """The sequence dim of length len + offset per sequence (`U + 1`)."""
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise DimError(f"{self.name} + {offset!r}: the offset must be an "
                           "integer >= 0")
        if offset == 0:
            return self
        return self._derive(1, offset, name)

    def __add__(self, offset):
        return self.plus(offset)

    def rule(self):
        """How the dim follows from its source ("ceildiv(T, 2)", "U + 1")."""
        if self.factor > 1:
            return f"ceildiv({self.source.name}, {self.factor})"
        return f"{self.source.name} + {self.offset}"

    def declaration(self):
        """The dim as `nn.graph ... dims [...]` declares it."""
        if self.is_flatten:
            return f"{self.name}: batch = flatten({self.source.name}, {self.inner.name})"
        if self.is_batch:
            return f"{self.name}: batch"
        if self.is_packed:
            inner = f", {self.inner.name}" if self.inner is not None else ""
            return f"{self.name}: packed({self.batch.name}, {self.source.name}{inner})"
        text = f"{self.name}: seq({self.batch.name})"
        if self.computed:
            return text + " computed"
        if self.is_lift:
            return f"{text} = {self.source.name}"
        if self.is_derived:
            return f"{text} = {self.rule()}"
        return text

    def roots(self):
        """The dims this one needs declared first, itself last."""
        needed = []
        if self.batch is not None:
            needed += self.batch.roots()
        if self.source is not None:
            needed += self.source.roots()
        if self.inner is not None:
            needed += self.inner.roots()
        return needed + [self]

    def __repr__(self):
        return f"Dim({self.declaration()})"


def batch_dim(name="B"):
    """A batch dim."""
    return Dim(name, "batch")


def seq_dim(name, batch):
    """A sequence dim of `batch`: each sequence has its own length."""
    if not isinstance(batch, Dim) or not batch.is_batch:
        raise DimError(f"seq_dim({name!r}): {batch!r} is not a batch dim")
    return Dim(name, "seq", batch=batch)


def computed_dim(name, batch):
    """A sequence dim of `batch` whose lengths the graph computes (a
    decoder's hypotheses), returned as the output `lengths:NAME`."""
    if not isinstance(batch, Dim) or not batch.is_batch:
        raise DimError(f"computed_dim({name!r}): {batch!r} is not a batch dim")
    return Dim(name, "seq", batch=batch, computed=True)


def axis_text(axis):
    """An axis as a type spells it: a dim's name or a size."""
    return axis.name if isinstance(axis, Dim) else str(axis)
