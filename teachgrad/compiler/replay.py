"""Replay: the compiled call. Guards pick a traced program (or trace one), and the call is one node of the graph.

    step = tg.compile(model)
    loss = step(x).sum()          # first call: trace, partition, generate; later calls: replay
    loss.backward()               # one node, CompiledFunctionBackward, runs the backward program

A call reads its **guards**: each tensor input's shape, strides, dtype and device and whether it requires grad,
the other arguments' values, grad mode and the module's `training`. Each set of guards has its own entry in a
cache (torch recompiles the same way): a shape never seen traces again.

An entry is the forward program and the backward program (teachgrad/compiler/codegen.py) of one partition
(teachgrad/compiler/partition.py). The call runs `CompiledFunction.apply(call, *inputs)`: its forward runs the
forward program on the inputs' data and keeps the saved values on the node; its backward runs the backward
program. So `backward()`, `autograd.grad`, hooks on the inputs, optimizers and `no_grad` see one op, as in eager.

- Grad mode off, or no input requiring grad: the forward program alone, no node (torch's inference graph).
- A trace that turned a value into Python (`if y.sum() > 0`, `.item()`) or made a shape from values is not
  replayed: that call, and every later one with the same guards, runs eagerly, and `explain` says why.
  `fullgraph=True` makes that an error instead.
- `create_graph=True` through the node (a second derivative; torch's compiled function refuses it): the backward
  runs the function again eagerly on the same inputs and takes teachgrad's gradient of it with `create_graph`,
  so every op of the backward is recorded and can be differentiated again.
- Random draws: the trace runs with the generator's state put back afterwards, so the replay draws what eager
  would have drawn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ..core import engine
from ..core.function import Function
from ..core.node import BackwardNode
from ..func import functional_call
from ..rules import grad_mode, variable_class
from ..rules.saved_attributes import FREED_MESSAGE
from . import capture, codegen, partition


class CompiledFunctionNode(BackwardNode):
    """The node of a compiled call: it keeps the forward program's saved values until backward has run (or
    longer, with retain_graph=True), as a node keeps its saved tensors."""
    saved_values = None

    def _release(self) -> None:
        self.saved_values = None


class CompiledFunction(Function, node="CompiledFunctionBackward"):
    """A compiled call as one op: forward runs the forward program, backward the backward program."""
    _node_base = CompiledFunctionNode

    @staticmethod
    def forward(ctx: Any, call: Call, *inputs: torch.Tensor) -> Any:
        entry = call.entry
        results = entry.forward(*inputs)
        outputs = results[:entry.num_outputs]
        ctx.call, ctx.saved_values = call, results[entry.num_outputs:]
        if entry.non_differentiable:
            ctx.mark_non_differentiable(*[outputs[i] for i in entry.non_differentiable])
        return outputs if entry.returns_tuple else outputs[0]

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        call, entry = ctx.call, ctx.call.entry
        if isinstance(grads[0], variable_class.Variable) or grad_mode.is_grad_enabled():   # create_graph=True
            return (None, *call.eager_backward(grads))
        if ctx.saved_values is None:
            raise RuntimeError(FREED_MESSAGE)
        tangents = []
        for i in entry.differentiable:
            g = grads[i]
            tangents.append(torch.zeros(entry.output_shapes[i], dtype=entry.output_dtypes[i]) if g is None else g)
        return (None, *entry.backward(*ctx.saved_values, *tangents))


@dataclass
class Entry:
    """What one set of guards compiled to: the programs, or why this call runs eagerly."""
    graph: capture.Graph | None = None
    forward: Callable | None = None
    backward: Callable | None = None
    forward_program: codegen.Program | None = None
    backward_program: codegen.Program | None = None
    partition: partition.Partition | None = None
    num_outputs: int = 0
    returns_tuple: bool = False
    differentiable: tuple = ()       # the outputs that get a gradient (a tangent each)
    non_differentiable: tuple = ()
    output_shapes: tuple = ()
    output_dtypes: tuple = ()
    eager_reason: str | None = None  # set: this call runs eagerly, for that reason


@dataclass
class Call:
    """One call's inputs, kept on the node for a backward that must record (create_graph=True)."""
    entry: Entry
    compiled: CompiledCallable
    inputs: list
    args: tuple
    kwargs: dict

    def eager_backward(self, grads: tuple) -> tuple:
        """The inputs' gradients, recorded: the function run again eagerly, and teachgrad's grad of it."""
        with grad_mode.enable_grad():
            result = self.compiled.run_on(self.args, self.inputs, self.kwargs)
            outs = result if isinstance(result, tuple) else (result,)
            pairs = [(o, g) for o, g in zip(outs, grads) if o.requires_grad and g is not None]
            outs, grads = [o for o, _ in pairs], [g for _, g in pairs]
            Variable = variable_class.Variable
            wrt = [x for x in self.inputs if x.requires_grad and isinstance(x, Variable)]
            found = dict(zip(map(id, wrt), engine.grad(outs, wrt, grads, create_graph=True, retain_graph=True,
                                                      allow_unused=True)))
            # a module's torch Parameter: its gradient as eager gives it (teachgrad records no graph into a torch
            # tensor's .grad; the engine refuses that accumulation with create_graph=True, as in eager)
            torch_leaves = [x for x in self.inputs if x.requires_grad and not isinstance(x, Variable)]
            if torch_leaves:
                found.update(zip(map(id, torch_leaves), engine.grad(outs, torch_leaves, grads, retain_graph=True,
                                                                       allow_unused=True)))
            return tuple(found.get(id(x)) for x in self.inputs)


@dataclass
class Explanation:
    """What `explain` reports, with torch._dynamo.explain's names."""
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}"]
        lines += ["Break Reasons:"] + [f"  {r}" for r in self.break_reasons]
        return "\n".join(lines)


class CompiledCallable:
    """`fn` (or a module), compiled: a cache of entries by guards; each call replays one."""

    def __init__(self, fn: Callable, module: torch.nn.Module | None = None, partition_fn: Callable | None = None,
                 fw_compiler: Callable | None = None, bw_compiler: Callable | None = None,
                 inference_compiler: Callable | None = None, fullgraph: bool = False, eager: bool = False) -> None:
        self.fn, self.module = fn, module
        self.partition_fn = partition_fn or partition.min_cut_rematerialization_partition
        self.fw_compiler, self.bw_compiler = fw_compiler, bw_compiler
        self.inference_compiler = inference_compiler or fw_compiler
        self.fullgraph, self.eager = fullgraph, eager
        self.cache: dict = {}
        self.explanation = Explanation()

    # ---- the inputs: the call's Variables, then the module's parameters and buffers ----
    def _state(self) -> tuple[list, list]:
        if self.module is None:
            return [], []
        named = list(self.module.named_parameters()) + list(self.module.named_buffers())
        return [n for n, _ in named], [v for _, v in named]

    def run_on(self, args: tuple, inputs: list, kwargs: dict) -> Any:
        """The function on `args` (and `kwargs`, no tensor among them) with their tensors (then the module's state)
        replaced by `inputs`, eagerly."""
        Variable = variable_class.Variable
        k = sum(isinstance(a, Variable) for a in args)
        it = iter(inputs[:k])
        args = tuple(next(it) if isinstance(a, Variable) else a for a in args)
        if self.module is None:
            return self.fn(*args, **kwargs)
        names, _ = self._state()
        return functional_call(self.module, dict(zip(names, inputs[k:])), args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        Variable = variable_class.Variable
        if self.eager:
            return self.fn(*args, **kwargs)
        if any(isinstance(v, (Variable, torch.Tensor)) for v in kwargs.values()):
            self._break("a tensor given as a keyword argument (tensors are compiled as positional inputs)", None)
            return self.fn(*args, **kwargs)
        _, state = self._state()
        inputs = [a for a in args if isinstance(a, Variable)] + state
        grad_on = grad_mode.is_grad_enabled()
        try:
            guards = []
            for x in inputs:   # (a loop, not a generator: one Python frame fewer on every call)
                data = x._data if isinstance(x, Variable) else x   # (a module's torch Parameter is its own data)
                guards.append((data.shape, data.stride(), data.dtype, data.device, x.requires_grad))
            key = (grad_on, getattr(self.module, "training", None),
                   tuple(a if not isinstance(a, Variable) else None for a in args), tuple(guards),
                   tuple(sorted(kwargs.items())) if kwargs else ())
            hash(key)
        except TypeError:
            self._break("an argument that is not hashable (its value cannot be a guard)", None)
            return self.fn(*args, **kwargs)
        entry = self.cache.get(key)
        if entry is None:
            entry, result = self._trace(args, kwargs, inputs, grad_on)
            self.cache[key] = entry
        if entry.eager_reason is not None:
            self._break(entry.eager_reason, None)
            return self.fn(*args, **kwargs)
        if entry.backward is None:   # no gradient asked for: the forward program, no node
            outs = entry.forward(*[x.data for x in inputs])
            outs = tuple(Variable(o) for o in outs)
            return outs if entry.returns_tuple else outs[0]
        return CompiledFunction.apply(Call(entry, self, inputs, args, kwargs), *inputs)

    def _break(self, reason: str, _: Any) -> None:
        """This call runs eagerly, for `reason`: counted and said in `explanation` (an error with fullgraph=True)."""
        if self.fullgraph:
            raise RuntimeError(f"teachgrad.compile(fullgraph=True) cannot compile this call: {reason}")
        self.explanation.graph_break_count += 1
        if reason not in self.explanation.break_reasons:
            self.explanation.break_reasons.append(reason)

    def _trace(self, args: tuple, kwargs: dict, inputs: list, grad_on: bool) -> tuple[Entry, Any]:
        """Trace the joint graph for these guards, partition it, generate and compile its programs."""
        needs_grad = [x.requires_grad and grad_on for x in inputs]
        cuda = sorted({x.device.index or 0 for x in inputs if x.device.type == "cuda"})
        before = {i: x.data.clone() for i, x in enumerate(inputs) if not needs_grad[i]}   # (a buffer it may write)
        with torch.random.fork_rng(devices=cuda):   # the generators put back afterwards: the replay draws what
            with grad_mode.enable_grad() if grad_on else grad_mode.no_grad():   # eager draws
                graph, result = capture.trace_joint(lambda *leaves: self.run_on(args, list(leaves), kwargs), inputs,
                                                    needs_grad)
        for i, old in before.items():   # the trace wrote into an input (a running mean, by `add_` or inside
            if not torch.equal(inputs[i].data, old):   # native_batch_norm): undone, since the replay writes it again
                with torch.no_grad():
                    inputs[i].data.copy_(old)
        if graph.value_reads:
            return Entry(graph=graph, eager_reason="; ".join(dict.fromkeys(graph.value_reads))), result
        self.explanation.graph_count += 1
        outs = result if isinstance(result, tuple) else (result,)
        entry = Entry(graph=graph, num_outputs=len(outs), returns_tuple=isinstance(result, tuple),
                      output_shapes=tuple(tuple(o.shape) for o in outs), output_dtypes=tuple(o.dtype for o in outs))
        if not graph.tangents:
            program = codegen.generate("forward", graph.primals, [n for n in graph.nodes if n.kind in
                                       ("call", "getitem")], graph.outputs)
            entry.forward_program = program
            entry.forward = self.inference_compiler(program, inputs) if self.inference_compiler else program.fn
            return entry, result
        parts = self.partition_fn(graph)
        entry.partition = parts
        entry.differentiable = tuple(i for i, o in enumerate(outs) if o.requires_grad)
        entry.non_differentiable = tuple(i for i, o in enumerate(outs) if not o.requires_grad)
        entry.forward_program = codegen.generate("forward", graph.primals, parts.forward,
                                                 graph.outputs + parts.saved)
        entry.backward_program = codegen.generate("backward", parts.saved + graph.tangents, parts.backward,
                                                  graph.grads)
        entry.forward = (self.fw_compiler(entry.forward_program, inputs) if self.fw_compiler
                         else entry.forward_program.fn)
        entry.backward = (self.bw_compiler(entry.backward_program, inputs) if self.bw_compiler
                          else entry.backward_program.fn)
        return entry, result

    # ---- what the user can look at ----
    def entries(self) -> list:
        return [e for e in self.cache.values() if e.eager_reason is None]

    @property
    def code(self) -> str:
        """The generated forward and backward programs of the latest entry, as source."""
        entry = self.entries()[-1]
        return "\n".join(str(p) for p in (entry.forward_program, entry.backward_program) if p is not None)
