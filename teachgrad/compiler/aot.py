"""The public entry points, at torch's paths: `tg.compile` (torch.compile), and functorch's `aot_function`,
`aot_module` with their partitioners (`teachgrad.functorch.compile`, as `functorch.compile`), and `explain`
(torch._dynamo.explain).

`tg.compile` takes torch.compile's arguments and says, by name, which it honours: `backend` "inductor" (the
default) and "aot_eager" both run the generated programs (there is no kernel fusion here; the programs call
torch's kernels), "eager" runs the function eagerly; `fullgraph=True` turns a fallback to eager into an error;
`dynamic=True`, a `mode` or `options` are refused with a message, since teachgrad traces once per shape and has
no compiler settings; `disable=True` returns the function itself.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from .partition import default_partition, min_cut_rematerialization_partition
from .replay import CompiledCallable, Explanation

BACKENDS = ("inductor", "aot_eager", "eager")


class OptimizedModule(torch.nn.Module):
    """What `tg.compile(module)` returns, as torch's: the module (`_orig_mod`), its forward compiled."""

    def __init__(self, module: torch.nn.Module, compiled: CompiledCallable) -> None:
        super().__init__()
        self._orig_mod = module
        self._compiled = compiled

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """Compile a function or a module, as `torch.compile`: trace on the first call, replay after."""
    if model is None:   # @tg.compile(fullgraph=True)
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise RuntimeError("torch.compile: model must be callable")
    if disable:
        return model
    if dynamic:
        raise NotImplementedError("teachgrad.compile: dynamic=True is not supported: teachgrad traces one program "
                                  "per set of shapes (dynamic=False or None)")
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise NotImplementedError(f"teachgrad.compile: backend {backend!r} is not supported; teachgrad has "
                                  f"{', '.join(map(repr, BACKENDS))}")
    if mode not in (None, "default"):
        raise NotImplementedError(f"teachgrad.compile: mode {mode!r} is not supported (it chooses inductor's "
                                  "settings, and teachgrad has none): leave mode=None")
    if options:
        raise NotImplementedError(f"teachgrad.compile: options {sorted(options)} are not supported (they are "
                                  "inductor's settings, and teachgrad has none)")
    if isinstance(model, torch.nn.Module):
        compiled = CompiledCallable(model.forward, module=model, fullgraph=fullgraph, eager=backend == "eager")
        return OptimizedModule(model, compiled)
    return CompiledCallable(model, fullgraph=fullgraph, eager=backend == "eager")


def nop(program: Any, example_inputs: Any) -> Any:
    """The compiler that keeps the program as it is (functorch.compile.nop)."""
    return program


def aot_function(fn: Callable, fw_compiler: Callable, bw_compiler: Callable | None = None,
                 partition_fn: Callable = default_partition, decompositions: dict | None = None,
                 num_params_buffers: int = 0, keep_inference_input_mutations: bool = False,
                 inference_compiler: Callable | None = None, **refused: Any) -> CompiledCallable:
    """functorch's `aot_function`: trace the joint graph, partition it with `partition_fn`, and hand the forward
    and backward programs to `fw_compiler(program, example_inputs)` and `bw_compiler` (default: fw_compiler),
    whose results are called. A program is a `codegen.Program`: callable, its source in `.code`."""
    if decompositions:
        raise NotImplementedError("aot_function: decompositions are not supported (teachgrad records torch's "
                                  "calls as they are, without decomposing them)")
    if refused:
        raise NotImplementedError(f"aot_function: {', '.join(sorted(refused))} not supported")
    return CompiledCallable(fn, partition_fn=partition_fn, fw_compiler=fw_compiler,
                            bw_compiler=bw_compiler or fw_compiler, inference_compiler=inference_compiler)


def aot_module(mod: torch.nn.Module, fw_compiler: Callable, bw_compiler: Callable | None = None,
               partition_fn: Callable = default_partition, **kwargs: Any) -> OptimizedModule:
    """functorch's `aot_module`: `aot_function` over the module's forward, its parameters and buffers as inputs."""
    compiled = aot_function(mod.forward, fw_compiler, bw_compiler, partition_fn, **kwargs)
    compiled.module = mod
    return OptimizedModule(mod, compiled)


def explain(fn: Callable) -> Callable:
    """As `torch._dynamo.explain(fn)(*args)`: run `fn` compiled once and say how many programs it made and why
    any call fell back to eager."""
    def run(*args: Any) -> Explanation:
        compiled = compile(fn)
        target = compiled._compiled if isinstance(compiled, OptimizedModule) else compiled
        compiled(*args)
        return target.explanation
    return run


__all__ = ["compile", "aot_function", "aot_module", "default_partition", "min_cut_rematerialization_partition",
           "nop", "explain", "OptimizedModule"]
