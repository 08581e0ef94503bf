"""Generate: a program (inputs, the Nodes to run, outputs) written out as Python source, then compiled.

One line per op, in the order recorded, each value freed (`del`) after its last use, as `torch.fx`'s
`GraphModule.code` reads:

    def forward(primals_1, primals_2):
        t1 = primals_1.mm(primals_2)
        del primals_2
        t2 = t1.relu()
        del t1
        return (t2, primals_1)

The lines call torch's kernels on plain tensors: no Variable, no node, no bookkeeping between them, which is
where the speed comes from. A method is written as a method (`t1.relu()`), an operator as an operator
(`t1 * t2`), a function at its torch path (`torch.nn.functional.linear(...)`); anything else (a constant tensor,
a device) is a name bound in the program's globals, listed in `Program.constants`. Python's own `compile` turns
the source into the function `Program.fn`; `print(program)` shows the source.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from .capture import Graph, Node, op_name

BINARY = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__matmul__": "@", "__pow__": "**",
          "__floordiv__": "//", "__mod__": "%", "__and__": "&", "__or__": "|", "__xor__": "^", "__gt__": ">",
          "__lt__": "<", "__ge__": ">=", "__le__": "<=", "__eq__": "==", "__ne__": "!="}
REFLECTED = {"__radd__": "+", "__rsub__": "-", "__rmul__": "*", "__rtruediv__": "/", "__rmatmul__": "@",
             "__rpow__": "**", "__rfloordiv__": "//"}
UNARY = {"__neg__": "-", "__invert__": "~", "__pos__": "+"}
AUGMENTED = {"__iadd__": "+=", "__isub__": "-=", "__imul__": "*=", "__itruediv__": "/=", "__ipow__": "**="}


class Program:
    """A generated program: its source (`code`), the compiled function (`fn`), the globals its source names."""

    def __init__(self, name: str, code: str, constants: dict) -> None:
        self.name, self.code, self.constants = name, code, constants
        scope = {"torch": torch, "_setitem": _setitem, **constants}
        exec(compile(code, f"<teachgrad.compile {name}>", "exec"), scope)
        self.fn = scope[name]

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __str__(self) -> str:
        return self.code


def _setitem(tensor: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """`tensor[index] = value`, as an expression: the written tensor."""
    tensor[index] = value
    return tensor


class _Writer:
    """Writes one program's lines, naming the constants it meets."""

    def __init__(self) -> None:
        self.constants: dict = {}

    def constant(self, value: Any) -> str:
        for name, known in self.constants.items():
            if known is value:
                return name
        name = f"_c{len(self.constants)}"
        self.constants[name] = value
        return name

    def arg(self, value: Any) -> str:
        """An argument written as Python: a Node by its name, a plain value as its literal, anything else by a name."""
        if isinstance(value, Node):
            return self.constant(value.target) if value.kind == "constant" else value.name
        if value is None or value is Ellipsis or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float:
            return repr(value) if math.isfinite(value) else f"float('{value}')"
        if type(value) is slice:
            return f"slice({self.arg(value.start)}, {self.arg(value.stop)}, {self.arg(value.step)})"
        if type(value) is tuple:
            return "(" + "".join(self.arg(v) + ", " for v in value).rstrip(" ") + ")" if value else "()"
        if type(value) is list:
            return "[" + ", ".join(self.arg(v) for v in value) + "]"
        if isinstance(value, torch.Size):
            return repr(tuple(value))
        if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
            return str(value)
        return self.constant(value)

    def call(self, node: Node) -> str:
        """The expression that computes `node`."""
        if node.kind == "getitem":
            return f"{node.args[0].name}[{node.target}]"
        func, name = node.target, op_name(node.target)
        args = [self.arg(a) for a in node.args]
        kwargs = [f"{k}={self.arg(v)}" for k, v in node.kwargs.items()]
        if name in BINARY and len(args) == 2 and not kwargs:
            return f"{args[0]} {BINARY[name]} {args[1]}"
        if name in REFLECTED and len(args) == 2 and not kwargs:
            return f"{args[1]} {REFLECTED[name]} {args[0]}"
        if name in UNARY and len(args) == 1:
            return f"{UNARY[name]}{args[0]}"
        if name == "__getitem__":
            return f"{args[0]}[{args[1]}]"
        if name == "__setitem__":
            return f"_setitem({args[0]}, {args[1]}, {args[2]})"
        if name in AUGMENTED:
            return f"{args[0]}.{name}({args[1]})"
        if type(func).__name__ == "method-wrapper" or getattr(func, "__name__", None) == "__get__":
            return f"{args[0]}.{name}"   # an attribute: x.T
        qualified = getattr(func, "__qualname__", "")
        if qualified.startswith(("TensorBase.", "Tensor.")) and args:
            return f"{args[0]}.{name}({', '.join(args[1:] + kwargs)})"
        for path, module in (("torch", torch), ("torch.nn.functional", torch.nn.functional),
                             ("torch._C._nn", torch._C._nn), ("torch.special", torch.special),
                             ("torch.linalg", torch.linalg), ("torch.fft", torch.fft)):
            if getattr(module, name, None) is func:
                return f"{path}.{name}({', '.join(args + kwargs)})"
        if isinstance(func, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
            return f"torch.ops.{func}({', '.join(args + kwargs)})"
        return f"{self.constant(func)}({', '.join(args + kwargs)})   # {name}"


def generate(name: str, inputs: list, nodes: list, outputs: list) -> Program:
    """The program `name(*inputs) -> tuple(outputs)` that runs `nodes` in order, freeing each value after its
    last use (an output, or None where an output has no value)."""
    writer = _Writer()
    last_use = {}
    for i, node in enumerate(nodes):
        for value in node.inputs():
            last_use[value] = i
    kept = set(o for o in outputs if o is not None)
    lines = [f"def {name}({', '.join(n.name for n in inputs)}):"]
    for i, node in enumerate(nodes):
        lines.append(f"    {node.name} = {writer.call(node)}")
        dead = [v for v in node.inputs() if last_use.get(v) == i and v not in kept and v.kind != "constant"]
        if dead:
            lines.append(f"    del {', '.join(v.name for v in dead)}")
    written = [writer.arg(o) for o in outputs]
    lines.append(f"    return ({''.join(w + ', ' for w in written).rstrip(' ')})")
    return Program(name, "\n".join(lines) + "\n", writer.constants)


def describe(graph: Graph) -> str:
    """The joint graph as one readable program: primals and tangents in, outputs and gradients out."""
    program = generate("joint", graph.primals + graph.tangents, [n for n in graph.nodes if n.kind != "placeholder"
                       and n.kind != "constant"], graph.outputs + graph.grads)
    return program.code
