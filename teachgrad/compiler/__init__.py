"""The backward as a program: capture, partition, generate, replay (`tg.compile`).

Eager teachgrad (and eager torch) pays for bookkeeping on every op of every step: a node, its edges, its saved
tensors, the engine's queue. torch.compile removes it by doing that work once: capture the graph, split it
into a forward and a backward program, write their code, and replay it. The four steps are one module each:

1. teachgrad/compiler/capture.py: trace a function's forward and teachgrad's backward over it into one joint graph;
2. teachgrad/compiler/partition.py: split it, choosing what the forward saves for the backward (functorch's
   `default_partition` and `min_cut_rematerialization_partition`);
3. teachgrad/compiler/codegen.py: write each program as Python source, one line per op, and compile it;
4. teachgrad/compiler/replay.py: guards, a cache, and the compiled call as one node (`CompiledFunctionBackward`).

teachgrad/compiler/aot.py holds the entry points at torch's paths: `tg.compile`, `aot_function`, `aot_module`.
"""
from .aot import (OptimizedModule, aot_function, aot_module, compile, default_partition, explain,  # noqa: F401
                  min_cut_rematerialization_partition, nop)
from .capture import Graph, Node, trace_joint  # noqa: F401
from .codegen import Program, describe  # noqa: F401
from .partition import Partition  # noqa: F401
