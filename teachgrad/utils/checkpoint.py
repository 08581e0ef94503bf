"""Checkpointing: trade compute for memory (`tg.utils.checkpoint`, as `torch.utils.checkpoint`).

A checkpointed segment keeps none of the tensors its ops save for backward, only its inputs.
When backward needs one of those tensors, the segment runs again (same inputs, same random
numbers) and hands over what the second run saved.

    y = checkpoint(block, x, use_reentrant=False)   # block's activations are not kept
    y.sum().backward()                               # block runs a second time, inside backward

Two ways to do it, as in torch:
- non-reentrant (`use_reentrant=False`, the one to pick): saved-tensor hooks replace each saved
  tensor by a placeholder; the first unpack in a backward pass runs the segment again;
- reentrant (`use_reentrant=True`): the segment is one Function whose forward runs without
  recording and whose backward runs it again with recording on and calls backward on that.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterable
import warnings

import torch

from ..core import engine
from ..features import saved_tensor_hooks
from ..rules import grad_mode
from ..core.function import Function
from ..features import custom_function
from ..core.variable import Variable

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]

_DEFAULT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, "
    "but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to "
    "docs for more details on the differences between the two variants."
)


class CheckpointError(RuntimeError):
    """A checkpointed segment could not be recomputed as it ran the first time."""


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[..., Any] | None = None, determinism_check: str = "default", debug: bool = False,
               **kwargs: Any) -> Any:
    """Run `function(*args)` without keeping what it saves for backward; backward runs it again."""
    if use_reentrant is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _reentrant(function, preserve, args)
    frame = _Segment(function, args, kwargs, preserve)
    with saved_tensor_hooks.saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Iterable[Callable[..., Any]], segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run `functions` one after another, checkpointing all but the last of `segments` chunks."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
            "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    functions = list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# --- non-reentrant: placeholders, filled by running the segment again ----------------------------

class _Placeholder:
    """What the graph keeps instead of a tensor saved inside a checkpointed segment."""

    __slots__ = ("index", "__weakref__")

    def __init__(self, index):
        self.index = index


class _Segment:
    """One checkpointed call: its inputs, its random state, and the tensors each rerun saved.

    The input tensors are kept as saved tensors of a node of their own (as torch does), so hooks
    around the checkpoint (`save_on_cpu`, say) apply to them too.
    """

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, list(args), kwargs
        self.rng = _RngState(args) if preserve_rng_state else None
        self.count = 0
        self.recomputed = {}      # backward pass id -> tensors the rerun saved (None once handed over)
        self.positions = [i for i, a in enumerate(args) if isinstance(a, (Variable, torch.Tensor))]
        dummy = Variable(torch.empty(0), requires_grad=True)
        self.saver = _NoopSaveInputs.apply(dummy, *[args[i] for i in self.positions]).grad_fn
        if self.saver is not None:
            for i in self.positions:
                self.args[i] = None

    def inputs(self):
        """The segment's arguments, its tensors unpacked from where they were saved."""
        if self.saver is None:
            return self.args
        args = list(self.args)
        for i, tensor in zip(self.positions, self.saver.saved_tensors):
            args[i] = tensor
        return args

    def pack(self, tensor):
        self.count += 1
        return _Placeholder(self.count - 1)

    def unpack(self, placeholder):
        task = engine.current_graph_task()
        if task is None:                        # read outside backward (node._saved_*): run again each time
            return self._run_again()[placeholder.index]
        key = task.id
        if key not in self.recomputed:
            self.recomputed[key] = self._run_again()
        tensors = self.recomputed[key]
        tensor = tensors[placeholder.index]
        if tensor is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                "If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please "
                "open an issue with details on your use case.")
        tensors[placeholder.index] = None
        if all(t is None for t in tensors):
            del self.recomputed[key]
        return tensor

    def _run_again(self):
        saved = []

        def keep(tensor):
            saved.append(tensor.data)

        with grad_mode.enable_grad():
            args = self.inputs()
        with _restored(self.rng), grad_mode.enable_grad(), saved_tensor_hooks.saved_tensors_hooks(keep, _never):
            self.function(*args, **self.kwargs)
        if len(saved) != self.count:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {self.count}\n"
                f"Number of tensors saved during recomputation: {len(saved)}.")
        return saved


class _NoopSaveInputs(custom_function.Function, node="_NoopSaveInputsBackward"):
    """Keeps a checkpoint's input tensors as its saved tensors; never part of a backward pass."""

    @staticmethod
    def forward(ctx, dummy, *tensors):
        ctx.save_for_backward(*tensors)
        return dummy

    @staticmethod
    def backward(ctx, grad):
        raise AssertionError("did not expect to backward on this graph")

    @staticmethod
    def jvp(ctx, *tangents):
        return None     # its output is a placeholder: no tangent (the segment's own ops carry them)


def _never(_):
    raise CheckpointError("torch.utils.checkpoint: a tensor saved during recomputation was unpacked")


# --- reentrant: one Function around the segment --------------------------------------------------

def _reentrant(function, preserve_rng_state, args):
    if not any(isinstance(a, Variable) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


class CheckpointFunction(Function, node="CheckpointFunctionBackward"):
    """The whole segment as one node: forward without recording, backward = run again + backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _RngState(args) if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, torch.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, torch.Tensor)])
        outputs = run_function(*[Variable._make(a) if isinstance(a, torch.Tensor) else a for a in args])
        if isinstance(outputs, tuple):
            return tuple(o.data if isinstance(o, Variable) else o for o in outputs)
        return outputs.data if isinstance(outputs, Variable) else outputs

    @staticmethod
    def backward(ctx, *grads):
        task = engine.current_graph_task()
        if task is not None and not task.whole_graph:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            data = tensor.data if isinstance(tensor, Variable) else tensor
            inputs[i] = Variable(data.detach(), requires_grad=ctx.needs_input_grad[i + 2])
        with _restored(ctx.rng), grad_mode.enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Variable) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad.data if isinstance(x, Variable) and x.grad is not None else None
                                    for x in inputs)


# --- random numbers: the rerun draws what the first run drew -------------------------------------

class _RngState:
    """torch's random state (CPU, and the CUDA devices of the inputs) when the segment first ran."""

    def __init__(self, args):
        self.cpu = torch.get_rng_state()
        datas = [a.data if isinstance(a, Variable) else a for a in args]
        self.cuda_devices = sorted({d.device.index or 0 for d in datas if isinstance(d, torch.Tensor) and d.is_cuda})
        self.cuda = [torch.cuda.get_rng_state(i) for i in self.cuda_devices]


@contextlib.contextmanager
def _restored(rng):
    """Run a block with the random state of `rng` (None: leave it alone), then put the state back."""
    if rng is None:
        yield
        return
    with torch.random.fork_rng(devices=rng.cuda_devices):
        torch.set_rng_state(rng.cpu)
        for device, state in zip(rng.cuda_devices, rng.cuda):
            torch.cuda.set_rng_state(state, device)
        yield
