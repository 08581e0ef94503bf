"""Capture: run a function once and write down every torch call it makes, as a small graph (the IR).

teachgrad's ops compute on plain torch tensors (`forward` on `.data`), and so do their backward formulas. So a
torch function mode (`torch.overrides.TorchFunctionMode`, what `make_fx` builds on) that sees every torch call
made on those tensors sees the whole computation: run the function on Variables under it and the forward's
kernels are recorded; run teachgrad's engine over that forward under it and the backward's kernels are recorded
too, into the same graph. That is the **joint graph** (functorch's name): primals in, tangents (the outputs'
gradients) in, the outputs and the inputs' gradients out.

    graph = trace_joint(lambda x, w: (x @ w).relu().sum(), [x, w])
    print(describe(graph))   # teachgrad/compiler/codegen.py: one line per recorded call, t2 = t1.mm(...)

What the recorder does with each call:
- a call that makes tensors becomes a `Node` (its function, its arguments with Nodes in place of tensors, the
  shape, dtype and bytes of what it made); a tuple of tensors becomes a Node and one `getitem` Node per element;
- `detach`, `alias`, `.data`, and a call that hands back a tensor it was given (`x.contiguous()` of a contiguous
  `x`) add no node: their result *is* the value they were given (no detach or alias node is replayed);
- an in-place call (`add_`, `x[i] = v`, `out=`) is a Node that makes a new version of the tensor it writes: later
  readers read that version, and the partitioner knows the storage was written; a later call that reads the same
  storage through another view (the base of `x[0].zero_()`) is ordered after the write (`Node.after`);
- a call that reads shapes, dtypes or devices is left out (the replay's guards fix those);
- a call that turns a value into Python (`bool(y.sum() > 0)`, `.item()`, `.tolist()`) or whose output's shape
  depends on values (`nonzero`, `x[mask]`) cannot be replayed on other values: the trace says so
  (`Graph.value_reads`), and the caller runs eagerly instead.

After the trace, `eliminate_dead_code` drops what no output needs (a random op and a write into an input stay:
they change state that outlives the call).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from ..core import engine
from ..rules import variable_class

# Calls that read a tensor's metadata, not its values: not recorded (the guards fix what they return).
METADATA = {"dim", "size", "stride", "numel", "nelement", "ndimension", "is_floating_point", "is_complex",
            "is_inference", "is_contiguous", "element_size", "data_ptr", "storage_offset", "untyped_storage",
            "__len__", "get_device", "is_signed", "is_conj", "is_neg", "_is_view", "is_set_to", "__hash__",
            "__format__", "_version", "__repr__", "requires_grad_", "retain_grad", "_set_grad_enabled",
            "is_grad_enabled", "_is_zerotensor", "has_names", "is_sparse", "__eq__hash", "__reduce_ex__"}
# Calls whose output is the value they were given.
ALIASES = {"detach", "alias", "data", "detach_"}
# Calls whose output's shape depends on the values.
DATA_DEPENDENT = {"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere", "bincount",
                  "nonzero_static", "repeat_interleave"}
# Calls that draw random numbers: kept even when unused (they move the generator's state, as eager does).
RANDOM = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
          "bernoulli_", "dropout", "native_dropout", "feature_dropout", "alpha_dropout", "multinomial", "normal",
          "normal_", "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_", "random_"}
INPLACE_DUNDERS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__imatmul__",
                   "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__ifloordiv__", "__imod__"}


@dataclass(eq=False)
class Node:
    """One value of the graph: a placeholder (an input), a call, or one element of a call's tuple (`getitem`)."""
    name: str                       # t0, t1, ... (placeholders: primals_1, tangents_1, as functorch names them)
    kind: str                       # "placeholder", "call", "getitem", "constant"
    target: Any = None              # the torch function called (call), the index (getitem), the tensor (constant)
    args: tuple = ()                # the call's arguments, with Nodes in place of tensors
    kwargs: dict = field(default_factory=dict)
    shape: tuple = ()
    dtype: Any = None
    nbytes: int = 0                 # what keeping this value costs
    storage: int = 0                # which storage it lives in (views and in-place writes share it)
    writes: Node | None = None      # an in-place call: the version of the tensor it writes
    after: list = field(default_factory=list)   # in-place writes into a storage it reads, made before it
    users: list = field(default_factory=list)

    @property
    def op(self) -> str:
        """The call's name: 'mm', 'relu', '__mul__', 'T' (an attribute), ..."""
        return op_name(self.target) if self.kind == "call" else self.kind

    def inputs(self) -> list:
        """The Nodes this one reads, in order (a list argument's tensors included)."""
        found = []
        _collect(self.args, found)
        _collect(tuple(self.kwargs.values()), found)
        if self.writes is not None and self.writes not in found:
            found.append(self.writes)
        return found + [w for w in self.after if w not in found]

    def __repr__(self) -> str:
        return self.name


def _collect(value: Any, found: list) -> None:
    if isinstance(value, Node):
        if value not in found:
            found.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _collect(v, found)
    elif isinstance(value, slice):
        _collect((value.start, value.stop, value.step), found)


def op_name(func: Any) -> str:
    """A torch function's own name: `torch.Tensor.mm` -> 'mm'; the getter of `.T` -> 'T'; `aten.mm` -> 'mm'."""
    if type(func).__name__ == "method-wrapper" or getattr(func, "__name__", None) == "__get__":
        return func.__self__.__name__   # a getset descriptor's getter (`x.T`, `x.data`)
    name = getattr(func, "__name__", None) or str(func)
    return name.split(".")[-1] if "." in name else name


@dataclass
class Graph:
    """The joint graph: primals and tangents in; the forward's outputs, then the primals' gradients, out."""
    nodes: list                     # every Node, in the order recorded (a topological order)
    primals: list                   # one placeholder per input
    tangents: list                  # one placeholder per output that requires grad (the gradient coming in)
    outputs: list                   # the forward's outputs (Nodes)
    grads: list                     # each primal's gradient (a Node, or None: no gradient)
    value_reads: list = field(default_factory=list)   # why this graph cannot be replayed (empty: it can)


class Recorder(TorchFunctionMode):
    """A torch function mode that turns each torch call into a Node (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list = []
        self.values: dict = {}       # id(tensor) -> the Node of its current version
        self.alive: list = []        # every tensor seen, kept alive so that no id is reused during the trace
        self.value_reads: list = []
        self.count = 0
        self.last_write: dict = {}   # storage -> the latest in-place write into it

    def placeholder(self, tensor: torch.Tensor, name: str) -> Node:
        node = self._node(name, "placeholder", tensor)
        self.values[id(tensor)] = node
        self.alive.append(tensor)
        return node

    def _node(self, name: str, kind: str, tensor: torch.Tensor, **rest: Any) -> Node:
        node = Node(name, kind, shape=tuple(tensor.shape), dtype=tensor.dtype,
                    nbytes=tensor.numel() * tensor.element_size(),
                    storage=tensor.untyped_storage().data_ptr(), **rest)
        self._order_after_writes(node)
        self.nodes.append(node)
        return node

    def _order_after_writes(self, node: Node) -> None:
        """A node that reads a storage written in place (through any view of it) comes after that write: the
        write is one of its inputs in `after`, so no pass drops it or moves the read before it."""
        for value in node.inputs():
            write = self.last_write.get(value.storage)
            if write is not None and write is not node and write not in node.inputs():
                node.after.append(write)
        if node.writes is not None and node.storage:
            self.last_write[node.storage] = node

    def _new_name(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def _as_node(self, value: Any) -> Any:
        """A call's argument with Nodes in place of tensors (a tensor never seen is a constant of the program)."""
        if isinstance(value, torch.Tensor):
            node = self.values.get(id(value))
            if node is None:
                node = self._node(self._new_name(), "constant", value, target=value)
                self.values[id(value)] = node
                self.alive.append(value)
            return node
        if type(value) in (tuple, list):
            return type(value)(self._as_node(v) for v in value)
        return value

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _holds_variable(args) or _holds_variable(tuple(kwargs.values())):
            with self:   # torch's function called on Variables (`F.linear(x, w)`): teachgrad runs it; record inside
                return variable_class.Variable.__torch_function__(func, types, args, kwargs)
        out = func(*args, **kwargs)
        name = op_name(func)
        if name in METADATA or name in ("shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn",
                                        "layout", "is_cuda", "is_meta", "ndim", "names", "grad", "_base",
                                        "is_sparse", "is_quantized", "is_mkldnn", "itemsize", "nbytes"):
            if isinstance(out, torch.Tensor) and id(out) not in self.values:   # `._base`, `.grad`: a tensor read
                self.value_reads.append(f"{name} read a tensor the trace does not know")
            return out
        tensors_in = [a for a in _flat(args) + _flat(tuple(kwargs.values())) if isinstance(a, torch.Tensor)]
        if not _is_tensors(out) and name not in INPLACE_DUNDERS:
            if tensors_in and out is not None:   # a value turned into Python: bool(t), t.item(), t.tolist()
                self.value_reads.append(f"{name}() turned a tensor's value into a Python {type(out).__name__}")
            return out
        if name in DATA_DEPENDENT or (name == "where" and len(args) == 1) or (
                name == "__getitem__" and any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)
                                              for i in _flat(args[1:]))):
            self.value_reads.append(f"{name}(): the shape of its output depends on the values")
        if name in ALIASES and tensors_in:   # the result is the value it was given: no node
            self.values[id(out)] = self._as_node(tensors_in[0])
            self.alive.append(out)
            return out
        inplace = (name.endswith("_") and not name.startswith("__")) or name in INPLACE_DUNDERS or "out" in kwargs
        if not inplace and isinstance(out, torch.Tensor) and id(out) in self.values:   # handed back what it got
            return out
        node_args, node_kwargs = self._as_node(tuple(args)), {k: self._as_node(v) for k, v in kwargs.items()}
        if inplace:
            written = kwargs["out"] if "out" in kwargs else args[0]
            node = self._node(self._new_name(), "call", written, target=func, args=node_args, kwargs=node_kwargs,
                              writes=self._as_node(written))
            self.values[id(written)] = node
            return out
        if isinstance(out, torch.Tensor):
            node = self._node(self._new_name(), "call", out, target=func, args=node_args, kwargs=node_kwargs)
            self.values[id(out)] = node
            self.alive.append(out)
            return out
        # a tuple of tensors: the call, then each element
        node = Node(self._new_name(), "call", func, node_args, node_kwargs, nbytes=0, storage=-1)
        self._order_after_writes(node)
        self.nodes.append(node)
        for i, element in enumerate(out):
            if isinstance(element, torch.Tensor):
                self.values[id(element)] = self._node(self._new_name(), "getitem", element, target=i, args=(node,))
                self.alive.append(element)
        return out


def _holds_variable(values: tuple) -> bool:
    Variable = variable_class.Variable
    return any(isinstance(v, Variable) or type(v) in (tuple, list) and _holds_variable(v) for v in values)


def _flat(values: tuple) -> list:
    found = []
    for v in values:
        if type(v) in (tuple, list):
            found += _flat(v)
        elif isinstance(v, slice):
            found += [v.start, v.stop, v.step]
        else:
            found.append(v)
    return found


def _is_tensors(out: Any) -> bool:
    """A tensor, or a tuple of them (a named one too: `max(dim)`'s values and indices; some may be None)."""
    if isinstance(out, torch.Tensor):
        return True
    return (isinstance(out, (tuple, list)) and any(isinstance(o, torch.Tensor) for o in out)
            and all(o is None or isinstance(o, torch.Tensor) for o in out))


def trace_joint(call: Callable, inputs: list, needs_grad: list[bool] | None = None) -> tuple[Graph, Any]:
    """Run `call(*leaves)` on fresh leaves sharing `inputs`' data, then teachgrad's engine over it, recording both.

    `needs_grad[i]`: whether input i requires grad (default: as `inputs[i]` does). Returns the graph and what the
    call returned (Variables: its values are the eager values of this call). Grad mode off, or nothing requiring
    grad: the graph has no tangents and no backward.
    """
    Variable = variable_class.Variable
    needs_grad = [x.requires_grad for x in inputs] if needs_grad is None else needs_grad
    leaves = [Variable(x.data, requires_grad=r) for x, r in zip(inputs, needs_grad)]
    recorder = Recorder()
    primals = [recorder.placeholder(leaf.data, f"primals_{i + 1}") for i, leaf in enumerate(leaves)]
    with recorder:
        result = call(*leaves)
    outs = result if isinstance(result, tuple) else (result,)
    if not all(isinstance(o, Variable) for o in outs):
        recorder.value_reads.append(f"the function returned {type(result).__name__}, not Variables")
        return Graph(recorder.nodes, primals, [], [], [], recorder.value_reads), result
    out_nodes = [recorder._as_node(o.data) for o in outs]
    differentiable = [o for o in outs if o.requires_grad]
    outside = _leaves_reached(differentiable, leaves)
    if outside:   # a gradient would go to a leaf the program has no input for: it would be lost
        recorder.value_reads.append(f"a tensor that requires grad and is not an input (a closure or a global, "
                                    f"shape {tuple(outside[0].shape)}): pass it as an argument")
    wrt = [leaf for leaf in leaves if leaf.requires_grad]
    tangents, grads = [], [None] * len(leaves)
    if differentiable and wrt and not recorder.value_reads:
        seeds = [torch.ones_like(o.data) for o in differentiable]
        tangents = [recorder.placeholder(s, f"tangents_{i + 1}") for i, s in enumerate(seeds)]
        with recorder:
            found = engine.grad(differentiable, wrt, seeds, allow_unused=True)
        found = iter(found)
        for i, leaf in enumerate(leaves):
            if leaf.requires_grad:
                g = next(found)
                grads[i] = None if g is None else recorder._as_node(g.data)
    graph = Graph(recorder.nodes, primals, tangents, out_nodes, grads, recorder.value_reads)
    eliminate_dead_code(graph)
    return graph, result


def _leaves_reached(outputs: list, leaves: list) -> list:
    """The leaves (each AccumulateGrad's variable) the outputs' graph reaches, other than `leaves`."""
    mine = {id(leaf) for leaf in leaves}
    seen, todo, found = set(), [o.grad_fn for o in outputs if o.grad_fn is not None], []
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in mine:
            found.append(variable)
        todo += node._next_nodes
    return found


def eliminate_dead_code(graph: Graph) -> None:
    """Drop every call no output needs, except random draws and writes into a placeholder's storage."""
    placeholder_storages = {p.storage for p in graph.primals}
    live = set()
    todo = [n for n in graph.outputs + graph.grads if n is not None]
    todo += [n for n in graph.nodes if n.kind == "call" and (
        op_name(n.target) in RANDOM or n.writes is not None and n.storage in placeholder_storages)]
    while todo:
        node = todo.pop()
        if node in live:
            continue
        live.add(node)
        todo += node.inputs()
    graph.nodes = [n for n in graph.nodes if n in live or n.kind == "placeholder"]
    for n in graph.nodes:
        n.users = []
    for n in graph.nodes:
        for i in n.inputs():
            i.users.append(n)
