"""`vmap`: run a function written for one example over a batch, as torch.func.vmap.

    vmap(torch.dot)(xs, ys)                        # one dot product per row
    vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)   # per-sample gradients

Each call opens a vmap *level* (1 for the outermost, 2 inside it, ...). The inputs mapped there become
BatchedVariables (teachgrad/features/batched_variable.py): their batch dim moves to the front of the data, and the
function sees one example's shape. While a level is open, vmap's mode word (teachgrad/rules/batching.py) is set,
and `Function.apply` sends every op to `run_batched`, which finds the op's batching rule
(teachgrad/features/batching_rules.py) and runs it with the word off: on the physical data, recorded in the one
graph as usual. On the way out each output's batch dim moves to where `out_dims` says.

A transform inside vmap works on the physical graph: `grad` (teachgrad/func.py) differentiates the sum over the
batch, which, as examples never mix, is every example's own gradient; an input that is not batched is expanded to
the batch first, so that its gradient too is one per example.

A transform of forward mode under vmap gets a *batched dual* (`batched_dual`): its tangent rides on the physical
data as the value does, so every op's jvp runs through the batching rules' ops. A random factory inside vmap draws
as `randomness` says (`draw_random`).

Guarded by tests/test_vmap.py, tests/test_vmap_forward.py (forward mode), tests/test_vmap_random.py (randomness,
backward inside vmap) and tests/test_vmap_functional.py (vectorize=True).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch
from torch.utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_unflatten

from .. import ops
from ..core.variable import Variable
from ..rules import batching, grad_mode, tangents, torch_leaves
from ..api.torch_functions import cat as _cat
from . import batching_rules
from .batched_variable import BatchedVariable, align_data, batch_sizes, levels_of, wrap_dim

__all__ = ["vmap", "run_batched", "physical_grad", "expand_to_open_levels", "batched_dual", "batched_zeros_like"]


def run_batched(op: type, args: tuple) -> Any:
    """An op called while a vmap level is open: through its batching rule, on the physical data."""
    levels = _levels_among(args)
    old = batching.set_depth(0)
    try:
        if not levels:                       # nothing batched (a backward pass's ops, constants): the op as it is
            return op.apply(*args)
        rule = batching_rules.RULES.get(op)
        if rule is None:
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} "
                                      f"({op.node_name or op.__name__}); call it outside vmap, or loop over the batch")
        return rule(op, args, levels)
    finally:
        batching.set_depth(old)


def _levels_among(args: Any) -> tuple[int, ...]:
    found = set()
    for a in args:
        if isinstance(a, (list, tuple)):
            found.update(_levels_among(a))
        else:
            found.update(levels_of(a))
    return tuple(sorted(found))


def draw_random(torch_fn: Callable[..., torch.Tensor], args: tuple, kwargs: dict) -> Variable:
    """A random factory inside vmap (no level in randomness='error'), as torch.func draws: at the levels in
    'different' one draw of the batched shape, the batch sizes in front (outermost first), which gives torch's
    values bit for bit (randperm: one permutation per example, drawn in turn); at the 'same' levels one draw of
    the example's shape, shared."""
    levels = tuple(lv for lv in range(1, batching.vmap_depth + 1) if batching.randomness[lv - 1] == "different")
    batch = [batch_sizes[lv] for lv in levels]
    requires_grad = kwargs.pop("requires_grad", False)
    if requires_grad and levels:
        raise NotImplementedError("vmap: teachgrad does not make a batched leaf that requires grad (a random factory "
                                  "with requires_grad=True under randomness='different'); draw it outside vmap")
    if torch_fn in (torch.randn_like, torch.rand_like):          # the example's shape, the batch in front
        like, rest = args[0], args[1:]
        data = like._data if isinstance(like, Variable) else like
        example = torch.empty(batch + list(data.shape[len(levels_of(like)):]), dtype=data.dtype, device=data.device)
        drawn = torch_fn(example, *rest, **kwargs)
    elif torch_fn is torch.randperm:
        drawn = torch.stack([torch.randperm(*args, **kwargs) for _ in range(_numel(batch))]).reshape(
            batch + [-1]) if batch else torch.randperm(*args, **kwargs)
    else:                                                        # randn(*size), rand(size), randint(low, high, size)
        args, kwargs = list(args), dict(kwargs)
        if "size" in kwargs:
            kwargs["size"] = tuple(batch) + tuple(kwargs["size"])
        elif torch_fn is torch.randint:
            args[-1] = tuple(batch) + tuple(args[-1])
        elif len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
            args = [tuple(batch) + tuple(args[0])]
        else:
            args = batch + args
        drawn = torch_fn(*args, **kwargs)
    return BatchedVariable.of(Variable(drawn, requires_grad=requires_grad), levels)


def _numel(sizes: list) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


batching.hand_over(run_batched, draw_random)


# --- vmap -------------------------------------------------------------------------------------------------------

def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """`func` mapped over a dim of its inputs (`in_dims`: an int, or per argument a nested structure of ints and
    None for not mapped), its outputs stacked along `out_dims`. `randomness`: 'error' (a random op raises),
    'different' (one draw per example) or 'same' (one draw for all). `chunk_size`: the batch is run that many
    examples at a time."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        name = getattr(func, "__name__", repr(func))
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is unsupported.")
        flat_args, spec = tree_flatten(args)
        flat_dims = _flat_in_dims(name, in_dims, args, spec)
        size = _batch_size(name, in_dims, flat_args, flat_dims)
        if chunk_size is None or chunk_size >= size:
            return _run_level(func, name, flat_args, flat_dims, spec, kwargs, size, out_dims, randomness)
        pieces = []
        for start in range(0, size, chunk_size):
            length = min(chunk_size, size - start)
            chunk = [a if d is None else a.narrow(d, start, length) for a, d in zip(flat_args, flat_dims)]
            pieces.append(_run_level(func, name, chunk, flat_dims, spec, kwargs, length, out_dims, randomness))
        return _join_chunks(pieces, out_dims)
    return wrapped


def _flat_in_dims(name, in_dims, args, spec):
    if isinstance(in_dims, int):
        return [in_dims] * spec.num_leaves
    if not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    flat = _broadcast_to_and_flatten(in_dims, spec)
    if flat is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    return flat


def _batch_size(name, in_dims, flat_args, flat_dims):
    sizes = []
    for a, d in zip(flat_args, flat_dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be a (potentially "
                             f"nested) tuple of ints or None, got {type(d)}")
        if not isinstance(a, (Variable, torch.Tensor)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                             f"input is of type {type(a)}. We cannot vmap over non-Tensor arguments, please use None "
                             "as the respective in_dim")
        n = a.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        sizes.append(a.shape[d])
    if not sizes:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be mapped "
                         "(in_dims all None)")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _run_level(func, name, flat_args, flat_dims, spec, kwargs, size, out_dims, randomness):
    """Open a level, call func on the batched inputs, close the level and move the batch dims to out_dims."""
    level = batching.vmap_depth + 1
    batch_sizes[level] = size
    batching.randomness.append(randomness)
    try:
        batched = [a if d is None else _enter(a, d, level) for a, d in zip(flat_args, flat_dims)]
        old = batching.set_depth(level)
        try:
            output = func(*tree_unflatten(batched, spec), **kwargs)
        finally:
            batching.set_depth(old)
        flat_out, out_spec = tree_flatten(output)
        if isinstance(out_dims, int) or out_dims is None:
            flat_out_dims = [out_dims] * len(flat_out)
        else:
            flat_out_dims = _broadcast_to_and_flatten(out_dims, out_spec)
            if flat_out_dims is None:
                raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                                 f"the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                                 f"outputs has structure {out_spec}.")
        old = batching.set_depth(0)
        try:
            unwrapped = [_exit(o, d, level, size, name) for o, d in zip(flat_out, flat_out_dims)]
        finally:
            batching.set_depth(old)
        return tree_unflatten(unwrapped, out_spec)
    finally:
        batching.randomness.pop()
        del batch_sizes[level]


def _enter(x, dim, level):
    """x with its dim `dim` mapped at `level`: the dim moved just after x's batch dims, x batched at one more level."""
    old = batching.set_depth(0)
    try:
        if isinstance(x, torch.Tensor):
            x = torch_leaves.as_variable(x) if x.requires_grad else Variable._make(x)
        own = levels_of(x)
        k = len(own)
        physical = wrap_dim(dim, x.dim()) + k
        order = [d for d in range(x._data.dim()) if d != physical]
        order.insert(k, physical)
        if order != sorted(order):
            moved = ops.Permute.apply(ops.Alias.apply(x) if own else x, tuple(order))
        elif x.requires_grad or (grad_mode.forward_level >= 0 and tangents.tangent_of(x) is not None):
            moved = ops.Alias.apply(x)          # (a dual keeps its tangent: the alias carries it)
        else:
            moved = Variable._make(x._data)
        return BatchedVariable.of(moved, own + (level,))
    finally:
        batching.set_depth(old)


def _exit(o, out_dim, level, size, name):
    """Leaving `level`: o's batch dim at that level moved to `out_dim` of what the caller sees (expanded to the
    batch if o is not batched there)."""
    if not isinstance(o, (Variable, torch.Tensor)):
        if out_dim is None:
            return o
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you mean to "
                         "set out_dims= to None for output?")
    if isinstance(o, torch.Tensor):
        o = Variable._make(o)
    own = levels_of(o)
    if out_dim is None:
        if level in own:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return o
    rest = tuple(lv for lv in own if lv != level)
    logical = o._data.dim() - len(own)
    target = len(rest) + wrap_dim(out_dim, logical + 1)
    plain = ops.Alias.apply(o) if own else o
    if level in own:
        source = own.index(level)
        order = [d for d in range(o._data.dim()) if d != source]
        order.insert(target, source)
        moved = ops.Permute.apply(plain, tuple(order))
    else:                                   # not batched here: the same value for every example
        moved = ops.Unsqueeze.apply(plain, target)
        moved = ops.Expand.apply(moved, [size if d == target else -1 for d in range(moved._data.dim())])
    return BatchedVariable.of(moved, rest)


def _join_chunks(pieces, out_dims):
    flat = [tree_flatten(p) for p in pieces]
    spec = flat[0][1]
    dims = [out_dims] * spec.num_leaves if isinstance(out_dims, int) or out_dims is None else \
        _broadcast_to_and_flatten(out_dims, spec)
    joined = []
    for i, d in enumerate(dims):
        parts = [f[0][i] for f in flat]
        joined.append(parts[0] if d is None else _cat(parts, d))
    return tree_unflatten(joined, spec)


# --- what the other transforms need under vmap (teachgrad/func.py) ----------------------------------------------

def expand_to_open_levels(x: Variable) -> Variable:
    """x batched at every open level (expanded where it is not): an input a transform differentiates under vmap
    gets one gradient per example."""
    levels = tuple(range(1, batching.vmap_depth + 1))
    if levels_of(x) == levels:
        return x
    old = batching.set_depth(0)
    try:
        return BatchedVariable.of(batching_rules.align(x, levels, expand=True), levels)
    finally:
        batching.set_depth(old)


def physical_grad(grad: Callable[..., tuple], outputs: tuple, inputs: list, grad_outputs: Any, **options: Any) -> tuple:
    """`grad(outputs, inputs, grad_outputs, **options)` under vmap: run on the physical graph (a batched output's
    gradient is ones over its batch, a given one expanded to it), the gradients batched as their inputs."""
    old = batching.set_depth(0)
    try:
        outs, seeds = [], []
        for i, o in enumerate(outputs):
            g = None if grad_outputs is None else grad_outputs[i]
            own = levels_of(o)
            if own:
                if g is None:
                    g = Variable._make(torch.ones_like(o._data))
                else:
                    g = Variable._make(align_data(g, own, o.ndim).expand(o._data.shape))
                o = ops.Alias.apply(o)
            elif g is not None and levels_of(g):
                raise NotImplementedError("vmap: teachgrad has no batching rule for a batched gradient of an "
                                          "unbatched output")
            outs.append(o)
            seeds.append(g)
        result = grad(tuple(outs), inputs, seeds, **options)
    finally:
        batching.set_depth(old)
    return tuple(BatchedVariable.of(g, levels_of(x)) if isinstance(g, Variable) else g for g, x in zip(result, inputs))


def batched_dual(primal: Variable, tangent: Any) -> Variable:
    """`make_dual(primal, tangent)` under vmap, where either is batched: a batched dual. Both are expanded to the
    levels either is batched at (an unbatched primal with a batched tangent is one primal per example, as in
    torch.func), and the tangent rides on the physical data, the batch dims in front, as the primal's value does:
    every op's jvp then runs on the physical tangents through the batching rules' ops."""
    if tangent.shape != primal.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(primal.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}.")
    levels = tuple(sorted(set(levels_of(primal)) | set(levels_of(tangent))))
    old = batching.set_depth(0)
    try:
        physical = batching_rules.align(primal, levels, expand=True)
        shape = list(physical._data.shape)
        t = batching_rules.align(tangent, levels, expand=True)
        t = (t._data if isinstance(t, Variable) else t).expand(shape).contiguous()
        dual = ops.View.apply(physical, tuple(shape))          # (make_dual is a view of the primal, as torch's)
        tangents.set_tangent(dual, t)
    finally:
        batching.set_depth(old)
    return BatchedVariable.of(dual, levels)


def batched_zeros_like(x: Variable) -> Variable:
    """Zeros shaped as x, batched as x (a tangent for an output that depends on no input)."""
    return BatchedVariable.of(Variable._make(torch.zeros_like(x._data)), levels_of(x))
