"""Building nn graphs from Python: values with named dims, modules that own
named parameters, and programs of graphs that print as the nn dialect.

    B = nn.batch_dim("B"); T = nn.seq_dim("T", B)
    model = MyModel()                       # an nn.Module
    program = nn.Program(model)
    program.graph("train", model, features=nn.Input([B, T, 80]))
    print(program)                          # MLIR text nn-opt reads
    artifact = nn.compile(program, grads=True)

Each op a graph function calls (nn.linear, nn.lstm, ..., in nn/ops.py)
appends one op to the graph being built, checking its operands' dims and
dtypes first (nn.DimError names the op and the dims) and carrying the
Python file and line that called it as its MLIR location, so that the
compiler's diagnostics point at the Python source.
"""

import inspect
import os

from nn.dims import _NAME, Dim, DimError, axis_text

DTYPES = ("f32", "f64", "i32", "i64")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class TensorType:
    """The type of a value: its axes (Dims and static sizes) and dtype."""

    def __init__(self, axes, dtype="f32"):
        axes = list(axes)
        for axis in axes:
            if isinstance(axis, bool) or not (
                    isinstance(axis, Dim) or (isinstance(axis, int) and axis >= 0)):
                raise DimError(f"axis {axis!r}: expected a Dim or a size >= 0")
        if dtype not in DTYPES:
            raise DimError(f"dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
        self.axes = axes
        self.dtype = dtype

    def text(self):
        return (f"!nn.tensor<[{', '.join(axis_text(a) for a in self.axes)}], "
                f"{self.dtype}>")

    def __eq__(self, other):
        return (isinstance(other, TensorType) and self.dtype == other.dtype
                and len(self.axes) == len(other.axes)
                and all(a is b or a == b for a, b in zip(self.axes, other.axes)))

    def __repr__(self):
        return self.text()


def Input(axes, dtype="f32"):
    """The type of a graph input (`features=nn.Input([B, T, 80])`)."""
    return TensorType(axes, dtype)


class Value:
    """A tensor of the graph being built."""

    def __init__(self, graph, name, type):
        self.graph = graph
        self.name = name
        self.type = type

    @property
    def axes(self):
        return self.type.axes

    @property
    def dtype(self):
        return self.type.dtype

    def __add__(self, other):
        from nn import ops
        return ops.add(self, other)

    def __mul__(self, other):
        from nn import ops
        if isinstance(other, (int, float)):
            return ops.scale(self, other)
        return ops.mul(self, other)

    __rmul__ = __mul__

    def __repr__(self):
        return f"Value({self.name}: {self.type.text()})"


class Parameter:
    """A trainable tensor of a module; its name is the path of attributes
    that reach it from the model ("enc.lstm1.w_ih"), the key it has in
    checkpoints."""

    def __init__(self, *shape, dtype="f32"):
        for size in shape:
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise DimError(f"parameter shape {shape}: sizes must be "
                               "integers >= 1")
        self.type = TensorType(list(shape), dtype)
        self.name = None

    @property
    def shape(self):
        return tuple(self.type.axes)

    def __repr__(self):
        return f"Parameter({self.name or '?'}: {self.type.text()})"


class Module:
    """A layer or a model: the Parameters and Modules among its attributes
    (and in lists of them) are its own, named by the attribute. Calling a
    module calls its forward()."""

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} defines no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        """(name, Parameter) for every parameter it owns, in the order its
        attributes were set."""
        seen = set()
        for name, value in vars(self).items():
            yield from _named_parameters(value, prefix + name, seen)

    def parameters(self):
        return [p for _, p in self.named_parameters()]


def _named_parameters(value, name, seen):
    if isinstance(value, Parameter):
        if id(value) not in seen:
            seen.add(id(value))
            yield name, value
    elif isinstance(value, Module):
        if id(value) not in seen:
            seen.add(id(value))
            for child, item in vars(value).items():
                yield from _named_parameters(item, f"{name}.{child}", seen)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _named_parameters(item, f"{name}.{i}", seen)


_building = []


def current_graph():
    """The graph being built (inside Program.graph)."""
    if not _building:
        raise RuntimeError("nn ops add to the graph being built: call them from "
                           "the function Program.graph builds")
    return _building[-1]


def _caller_location():
    """loc("file.py":line:1) of the first frame outside this package."""
    frame = inspect.currentframe()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if os.path.dirname(path) != _PACKAGE_DIR:
            escaped = path.replace("\\", "\\\\").replace('"', '\\"')
            return f'loc("{escaped}":{frame.f_lineno}:1)'
        frame = frame.f_back
    return ""


class Graph:
    """A graph under construction: its inputs, ops and dims."""

    def __init__(self, program, name):
        self.program = program
        self.name = name
        self.inputs = []
        self.lines = []
        self.dims = []
        self._names = set()
        self._count = 0
        self._param_values = {}

    def _note_dims(self, type):
        for axis in type.axes:
            if isinstance(axis, Dim):
                for dim in axis.roots():
                    if all(dim is not d for d in self.dims):
                        for other in self.dims:
                            if other.name == dim.name:
                                raise DimError(
                                    f"graph '{self.name}': two different dims "
                                    f"are named '{dim.name}' ({other.declaration()}"
                                    f" and {dim.declaration()})")
                        self.dims.append(dim)

    def fresh(self, hint):
        """A new SSA name like %hint3."""
        while True:
            name = f"%{hint}{self._count}"
            self._count += 1
            if name not in self._names:
                self._names.add(name)
                return name

    def fresh_dim(self, hint):
        """A dim name no dim of the graph has yet ("Y", then "Y1", ...)."""
        taken = {d.name for d in self.dims}
        name, n = hint, 0
        while name in taken:
            n += 1
            name = f"{hint}{n}"
        return name

    def add_input(self, name, type):
        if not isinstance(type, TensorType):
            raise TypeError(f"graph '{self.name}': input '{name}' must be an "
                            f"nn.Input(axes, dtype), got {type!r}")
        self._note_dims(type)
        value = Value(self, f"%{name}", type)
        self._names.add(value.name)
        self.inputs.append(value)
        return value

    def check(self, *values):
        for value in values:
            if not isinstance(value, Value):
                raise TypeError(f"expected a value of the graph, got {value!r}")
            if value.graph is not self:
                raise ValueError(f"{value.name} belongs to graph "
                                 f"'{value.graph.name}', not '{self.name}'")

    def emit(self, text, results=(), hint="v"):
        """Appends `text` (the op after `=`) producing values of the types
        `results`; returns them."""
        values = [Value(self, self.fresh(hint), t) for t in results]
        for value in values:
            self._note_dims(value.type)
        lhs = ", ".join(v.name for v in values)
        location = _caller_location()
        self.lines.append(f"  {lhs + ' = ' if values else ''}{text}"
                          f"{' ' + location if location else ''}")
        return values

    def param(self, parameter):
        """The value of `parameter`: an nn.param_ref at its first use in the
        graph, reused after."""
        if parameter.name is None:
            raise ValueError(f"{parameter!r} belongs to no module of the program's "
                             "model (assign it to a module attribute)")
        value = self._param_values.get(id(parameter))
        if value is None:
            self.program._declare(parameter)
            (value,) = self.emit(f'nn.param_ref @"{parameter.name}" : '
                                 f"{parameter.type.text()}", [parameter.type], "p")
            self._param_values[id(parameter)] = value
        return value

    def text(self, results):
        args = ", ".join(f"{v.name}: {v.type.text()}" for v in self.inputs)
        signature = f"nn.graph @{self.name}({args})"
        if len(results) == 1:
            signature += f"\n    -> {results[0].type.text()}"
        elif results:
            signature += ("\n    -> (" + ", ".join(r.type.text() for r in results)
                          + ")")
        dims = ", ".join(d.declaration() for d in self.dims)
        lines = [f"{signature}\n    dims [{dims}] {{"] + self.lines
        if results:
            lines.append("  nn.return " + ", ".join(r.name for r in results) +
                         " : " + ", ".join(r.type.text() for r in results))
        else:
            lines.append("  nn.return")
        lines.append("}")
        return "\n".join(lines)


class Program:
    """Graphs over the parameters of one model: what nn.compile takes (or
    its text, str(program))."""

    def __init__(self, model=None):
        self.model = model
        self._parameters = []
        self._graphs = []
        if model is not None:
            if not isinstance(model, Module):
                raise TypeError(f"Program(model): expected an nn.Module, got "
                                f"{type(model).__name__}")
            names = {}
            for name, parameter in model.named_parameters():
                if parameter.name is not None and parameter.name != name:
                    raise ValueError(f"parameter '{name}' is also named "
                                     f"'{parameter.name}' (by another program)")
                parameter.name = name
                names[name] = parameter
            self._parameters = list(names.values())

    def _declare(self, parameter):
        for other in self._parameters:
            if other is not parameter and other.name == parameter.name:
                raise ValueError(f"two different parameters are named "
                                 f"'{parameter.name}'")
        if all(parameter is not p for p in self._parameters):
            if any(g[0] == parameter.name for g in self._graphs):
                raise ValueError(f"graph '{parameter.name}' and parameter "
                                 f"'{parameter.name}' would be one symbol; "
                                 "rename one")
            self._parameters.append(parameter)

    def graph(self, name, function, **inputs):
        """Builds graph @name: calls `function` with a value for each input
        (by keyword, in order). `function` returns the graph's results: a
        value, a tuple of them, or None. Returns the graph, which other
        graphs of the program call (nn.call)."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"graph name {name!r}: expected letters, digits and "
                             "'_' (not starting with a digit)")
        if any(g[0] == name for g in self._graphs):
            raise ValueError(f"the program has a graph '{name}' already")
        if any(p.name == name for p in self._parameters):
            raise ValueError(f"graph '{name}' and parameter '{name}' would be "
                             "one symbol; rename one")
        graph = Graph(self, name)
        values = {key: graph.add_input(key, type) for key, type in inputs.items()}
        _building.append(graph)
        try:
            results = function(**values)
        finally:
            _building.pop()
        if results is None:
            results = ()
        elif isinstance(results, Value):
            results = (results,)
        results = tuple(results)
        graph.check(*results)
        self._graphs.append((name, graph.text(results)))
        return GraphRef(self, name, [v.type for v in graph.inputs],
                        [v.type for v in results])

    def mlir(self):
        """The program as nn dialect text."""
        lines = [f'nn.parameter @"{p.name}" : {p.type.text()}'
                 for p in self._parameters]
        text = "\n".join(lines)
        for _, graph in self._graphs:
            text += ("\n\n" if text else "") + graph
        return text + "\n"

    __str__ = mlir


class GraphRef:
    """A graph of a program; calling it from another graph of the same
    program is an nn.call, which binds the callee's dims to the caller's:
    each input axis to the argument's, and the results' derived dims to the
    caller's dims derived the same way (`T.ceildiv(2)` of the caller's T)."""

    def __init__(self, program, name, inputs, results):
        self.program = program
        self.name = name
        self.inputs = inputs
        self.results = results

    def __call__(self, *args):
        graph = current_graph()
        if graph.program is not self.program:
            raise ValueError(f"graph '{self.name}' is another program's")
        if len(args) != len(self.inputs):
            raise TypeError(f"graph '{self.name}' takes {len(self.inputs)} "
                            f"inputs, got {len(args)}")
        graph.check(*args)
        binding = {}

        def bind(callee, caller, what):
            if isinstance(callee, Dim):
                bound = binding.setdefault(id(callee), caller)
                # A callee's batch may be a caller's packed dim (rows: the
                # packed frames or a transducer's joint grid).
                fits = isinstance(caller, Dim) and (
                    caller.kind == callee.kind or
                    (callee.is_batch and caller.is_packed))
                if not fits or bound is not caller:
                    raise DimError(f"nn.call @{self.name}: {what}: its dim "
                                   f"'{callee.name}' cannot be {axis_text(caller)}")
                if callee.batch is not None:
                    bind(callee.batch, caller.batch, what)
                if callee.is_packed:
                    bind(callee.source, caller.source, what)
                    if callee.inner is not None:
                        bind(callee.inner, caller.inner, what)
                if callee.is_derived:
                    # A derived dim binds to one derived the same way, from
                    # the dim its source binds to.
                    if (not caller.is_derived or caller.factor != callee.factor
                            or caller.offset != callee.offset):
                        raise DimError(
                            f"nn.call @{self.name}: {what}: its dim "
                            f"'{callee.name}' = {callee.rule()} cannot be "
                            f"{caller.declaration()}")
                    bind(callee.source, caller.source, what)
            elif callee != caller:
                raise DimError(f"nn.call @{self.name}: {what}: size {callee} "
                               f"is not {axis_text(caller)}")

        for i, (expected, arg) in enumerate(zip(self.inputs, args)):
            if (len(expected.axes) != len(arg.axes) or
                    expected.dtype != arg.dtype):
                raise DimError(f"nn.call @{self.name}: input {i} must be "
                               f"{expected.text()}, got {arg.type.text()}")
            for callee, caller in zip(expected.axes, arg.axes):
                bind(callee, caller, f"input {i}")

        def mapped(axis):
            if not isinstance(axis, Dim):
                return axis
            if id(axis) in binding:
                return binding[id(axis)]
            if axis.is_packed:
                inner = mapped(axis.inner) if axis.inner is not None else None
                return mapped(axis.source).packed(inner)
            if axis.is_derived:
                source = mapped(axis.source)
                return (source.ceildiv(axis.factor) if axis.factor > 1
                        else source.plus(axis.offset))
            raise DimError(f"nn.call @{self.name}: its result dim '{axis.name}' "
                           "follows from no input")

        results = [TensorType([mapped(a) for a in t.axes], t.dtype)
                   for t in self.results]
        names = ", ".join(a.name for a in args)
        inputs = ", ".join(a.type.text() for a in args)
        outputs = ", ".join(r.text() for r in results)
        if len(results) != 1:
            outputs = f"({outputs})"
        values = graph.emit(f"nn.call @{self.name}({names}) : ({inputs}) -> "
                            f"{outputs}", results, "call")
        if len(values) == 1:
            return values[0]
        return tuple(values) if values else None
