"""Batching rules: for each op, where the batch dims go, as JAX's Autodidax keeps `vmap_rules` in a table.

A rule is called as `rule(op, args, levels)` while vmap's mode word is off: `args` are the op's arguments, some
of them BatchedVariables (their data has one batch dim per vmap level in front), and `levels` are all the levels
among them, outermost first. The rule runs the op on the physical data, the batch dims in front, and says which
of its outputs are batched (`BatchedVariable.of(output, levels)`). Four kinds cover most ops:

- **pointwise** (sin, +, where, ...): each batched argument gets a dim per level (size 1 where it is not batched at
  one) and size-1 dims that line its example up with the others' (broadcasting), then the op runs as it is.
- **along a dim** (sum(dim), softmax, transpose, cat, ...): the op runs with its dim arguments moved past the
  batch dims (`dim + number of levels`).
- **reshaping** (view, expand, matmul, ...): the op's shape arguments get the batch sizes in front.
- **matrices** (torch.linalg's det, solve, svd, ...): ops on the last two dims, which take a batch in front as
  they are.

An op missing from RULES raises, naming the op: never a loop over the batch, never a wrong number.

Guarded by tests/test_vmap.py, tests/test_vmap_layers.py (convolution, pooling, batch norm, losses) and
tests/test_vmap_more_ops.py (the ops of torch's op database: amax, prod, median, addmv, pads, adaptive pools, ...).
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from .. import ops
from ..core import function
from ..core.variable import Variable
from ..rules import batching, torch_leaves

from .batched_variable import BatchedVariable, aligned_shape, batch_sizes, levels_of, wrap_dim

Rule = Callable[[type, tuple, tuple], Any]



# --- moving the batch dims: on the physical Variables, recorded in the graph -----------------------------------

def _is_tensor(x: Any) -> bool:
    return isinstance(x, (Variable, torch.Tensor))


def align(x: Any, levels: tuple, rank: int | None = None, expand: bool = False) -> Any:
    """x with a leading dim for each of `levels` (size 1 where x is not batched at one, or the batch size with
    `expand`), and its example's dims padded in front to `rank`: a plain Variable (or x's torch tensor)."""
    data = x._data if isinstance(x, Variable) else x
    shape = aligned_shape(data.shape, levels_of(x), levels, rank)
    if isinstance(x, BatchedVariable):
        x = ops.Alias.apply(x)                 # a plain Variable on the same data and graph
    if list(data.shape) != shape:
        x = ops.reshape(x, shape) if isinstance(x, Variable) else x.reshape(shape)
    if expand:
        sizes = [batch_sizes[level] for level in levels] + [-1] * (len(shape) - len(levels))
        x = ops.Expand.apply(x, sizes) if isinstance(x, Variable) else x.expand(sizes)
    return x


def _out(result: Any, levels: tuple) -> Any:
    """An op's output(s), batched at `levels` (None and non-tensors pass)."""
    if isinstance(result, tuple):
        return tuple(_out(r, levels) for r in result)
    return BatchedVariable.of(result, levels) if isinstance(result, Variable) else result


def _logical_dim(x: Any) -> int:
    return x.dim() if not isinstance(x, Variable) else x._data.dim() - len(levels_of(x))


def _shift(dim: Any, ndim: int, k: int) -> Any:
    """A dim argument (int, or a sequence of them) of an example with `ndim` dims, past `k` batch dims."""
    if isinstance(dim, (tuple, list)):
        return type(dim)(wrap_dim(d, ndim) + k for d in dim)
    return wrap_dim(dim, ndim) + k


# --- the kinds of rule ------------------------------------------------------------------------------------------

def pointwise(op: type, args: tuple, levels: tuple) -> Any:
    """Element by element, with broadcasting: each batched argument lined up (a dim per level, its example's
    dims padded in front), the unbatched ones left as they are (they broadcast from the right)."""
    rank = max(_logical_dim(a) for a in args if _is_tensor(a))
    physical = [align(a, levels, rank) if levels_of(a) else a for a in args]
    return _out(op.apply(*physical), levels)


def same_shape(op: type, args: tuple, levels: tuple) -> Any:
    """Pointwise, for an op whose tensors must have one shape (masked_fill's input, a loss's pair): every tensor
    argument expanded to the batch and to the broadcast example shape."""
    expanded = iter(_expanded(tuple(a for a in args if _is_tensor(a)), levels))
    return _out(op.apply(*[next(expanded) if _is_tensor(a) else a for a in args]), levels)


def along(*positions: int, new_dim: bool = False, whole: Callable | None = None) -> Rule:
    """A rule for an op whose arguments at `positions` are dims of its first tensor argument: they move past the
    batch dims. `new_dim`: the dim may also be one past the last (unsqueeze). `whole(op, x, args, levels)`: what
    the op does when its dim is None (the whole example)."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        first = next(i for i, a in enumerate(args) if _is_tensor(a))
        if any(levels_of(a) for a in args[first + 1:]):
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} with a batched "
                                      "argument after its first")
        x = align(args[first], levels)
        ndim = _logical_dim(args[first]) + new_dim
        args = list(args)
        args[first] = x
        if any(args[p] is None for p in positions):
            return whole(op, x, args, levels)
        if ndim == 0:      # a 0-dim example: dim 0 or -1, as torch allows for a scalar, along a dim of size 1
            return _along_scalar(op, args, positions, levels)
        for p in positions:
            args[p] = _shift(args[p], ndim, len(levels))
        return _out(op.apply(*args), levels)
    return rule


def _along_scalar(op: type, args: list, positions: tuple, levels: tuple) -> Any:
    """`op` along dim 0 of 0-dim examples: along a last dim of size 1, which the outputs then lose."""
    for p in positions:
        dims = args[p] if isinstance(args[p], (tuple, list)) else (args[p],)
        for d in dims:
            wrap_dim(d, 0)                                    # (torch's IndexError beyond [-1, 0])
        args[p] = type(args[p])(-1 for _ in dims) if isinstance(args[p], (tuple, list)) else -1
    args[0] = ops.Unsqueeze.apply(args[0], -1)
    k = len(levels)

    def scalar(r: Any) -> Any:
        if isinstance(r, Variable) and r._data.dim() == k + 1:
            return ops.reshape(r, list(r._data.shape[:k]))
        return r
    result = op.apply(*args)
    return _out(tuple(scalar(r) for r in result) if isinstance(result, tuple) else scalar(result), levels)


def _flat(x: Variable, levels: tuple) -> Variable:
    """x's example flattened to one dim (the batch dims kept in front)."""
    return ops.reshape(x, list(x._data.shape[:len(levels)]) + [-1])


def _whole_to_last(op: type, x: Variable, args: list, levels: tuple, position: int) -> Any:
    """`op` over the whole example: over the last dim of the flattened example."""
    args[0], args[position] = _flat(x, levels), -1
    return _out(op.apply(*args), levels)


def whole(reduce_last: Callable[[Variable], Any]) -> Rule:
    """A rule for a reduction over the whole example (sum(), mean(), max()): the example flattened, then
    `reduce_last` over its last dim."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        return _out(reduce_last(_flat(align(args[0], levels), levels)), levels)
    return rule


def unbatched_only(*positions: int) -> Rule:
    """A rule for an op that may run as it is when the arguments at `positions` are not batched (embedding's
    weight, layer_norm's weight and bias): the others carry the batch dims in front, which the op treats as more
    leading dims."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        if any(levels_of(args[p]) for p in positions):
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} with a batched "
                                      f"argument at position {positions}")
        return _out(op.apply(*[align(a, levels) if levels_of(a) else a for a in args]), levels)
    return rule


# --- rules of single ops ----------------------------------------------------------------------------------------

def _view(op: type, args: tuple, levels: tuple) -> Any:
    x, shape = align(args[0], levels), args[1]
    return _out(ops.reshape(x, list(x._data.shape[:len(levels)]) + list(shape)), levels)


def _permute(op: type, args: tuple, levels: tuple) -> Any:
    x, k = align(args[0], levels), len(levels)
    dims = [wrap_dim(d, _logical_dim(args[0])) + k for d in args[1]]
    return _out(ops.Permute.apply(x, tuple(range(k)) + tuple(dims)), levels)


def _t(op: type, args: tuple, levels: tuple) -> Any:
    x, k = align(args[0], levels), len(levels)
    if _logical_dim(args[0]) < 2:
        return _out(ops.Alias.apply(x), levels)
    return _out(ops.Transpose.apply(x, k, k + 1), levels)


def _squeeze(op: type, args: tuple, levels: tuple) -> Any:
    x, k = align(args[0], levels), len(levels)
    shape = list(x._data.shape)
    return _out(ops.reshape(x, shape[:k] + [s for s in shape[k:] if s != 1]), levels)


def _expand(op: type, args: tuple, levels: tuple) -> Any:
    shape = list(args[1])
    x = align(args[0], levels, len(shape))
    return _out(ops.Expand.apply(x, list(x._data.shape[:len(levels)]) + shape), levels)


def _indexing(op: type, args: tuple, levels: tuple) -> Any:
    """a[index] with a basic index (Select, Slice): the same index after a `:` for each batch dim."""
    index = args[1] if isinstance(args[1], tuple) else (args[1],)
    return _out(op.apply(align(args[0], levels), (slice(None),) * len(levels) + index), levels)


def _index(op: type, args: tuple, levels: tuple) -> Any:
    """a[tensors]: unbatched index tensors, next to each other, after a `:` for each batch dim."""
    indices = list(args[1])
    if any(levels_of(i) for i in indices):
        raise NotImplementedError("vmap: teachgrad has no batching rule for Index with a batched index tensor")
    used = [k for k, i in enumerate(indices) if i is not None]
    if used != list(range(used[0], used[-1] + 1)):
        raise NotImplementedError("vmap: teachgrad has no batching rule for Index with index tensors that are not "
                                  "next to each other")
    return _out(op.apply(align(args[0], levels), [None] * len(levels) + indices), levels)


def _join(op: type, args: tuple, levels: tuple) -> Any:
    """cat and stack: every tensor expanded to the batch, the dim past the batch dims."""
    dim, tensors = args[0], args[1:]
    ndim = _logical_dim(tensors[0]) + (op is ops.Stack)
    physical = [align(t, levels, expand=True) for t in tensors]
    return _out(op.apply(_shift(dim, ndim, len(levels)), *physical), levels)


def _matmul(op: type, args: tuple, levels: tuple) -> Any:
    """mm and bmm: torch's matmul broadcasts the batch dims in front."""
    a, b = (align(x, levels) for x in args)   # (size 1 at a level one of them is not batched at: it broadcasts)
    return _out(ops.matmul(a, b), levels)


def _mv(op: type, args: tuple, levels: tuple) -> Any:
    a, v = align(args[0], levels), align(args[1], levels)
    return _out(ops.matmul(a, ops.Unsqueeze.apply(v, -1)).squeeze(-1), levels)


def _dot(op: type, args: tuple, levels: tuple) -> Any:
    product = ops.Mul.apply(align(args[0], levels, 1), align(args[1], levels, 1))
    return _out(ops.SumDim.apply(product, -1, False), levels)


def _addmm(op: type, args: tuple, levels: tuple) -> Any:
    bias, a, b = args
    product = _matmul(ops.Mm, (a, b), levels)
    return pointwise(ops.Add, (bias, product), levels)


def _loss_then_reduce(reduction_position: int) -> Rule:
    """A rule for a loss: element by element ('none'), then each example reduced as `reduction` says (torch's
    losses take it as a string, or as the enum 0, 1, 2 for none, mean, sum)."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        reduction = args[reduction_position]
        args = list(args)
        args[reduction_position] = 0 if isinstance(reduction, int) else "none"
        losses = same_shape(op, tuple(args), levels)
        if reduction in ("none", 0):
            return losses
        flat = _flat(align(losses, levels), levels)
        mean = reduction in ("mean", 1)
        return _out(ops.MeanDim.apply(flat, -1, False) if mean else ops.SumDim.apply(flat, -1, False), levels)
    return rule


def _nll_loss(op: type, args: tuple, levels: tuple) -> Any:
    """nll_loss: the batch dims flattened into the samples of one call ('none'), then each example reduced."""
    input, target, weight, ignore_index, reduction = args
    if levels_of(weight):
        raise NotImplementedError("vmap: teachgrad has no batching rule for NllLoss with a batched weight")
    x = align(input, levels, expand=True)
    k, classes = len(levels), x._data.shape[-1]
    t = align(target, levels, expand=True)
    t_data = t._data if isinstance(t, Variable) else t
    losses = op.apply(ops.reshape(x, [-1, classes]), t_data.reshape(-1), weight, ignore_index, "none")
    losses = ops.reshape(losses, list(t_data.shape))
    if reduction == "none":
        return _out(losses, levels)
    total = ops.SumDim.apply(_flat(losses, levels), -1, False)
    if reduction == "sum":
        return _out(total, levels)
    valid = (t_data != ignore_index).to(x._data.dtype)
    weights = valid if weight is None else (weight.data if isinstance(weight, Variable) else weight)[
        t_data.where(t_data != ignore_index, 0)] * valid
    return _out(ops.Div.apply(total, Variable._make(weights.reshape(*weights.shape[:k], -1).sum(-1))), levels)


def _dropout(op: type, args: tuple, levels: tuple) -> Any:
    """Dropout draws a mask: refused in randomness='error', one mask per example ('different'), or one mask for
    the whole batch ('same')."""
    mode = batching.randomness[-1]
    if mode == "error":
        raise RuntimeError(batching.RANDOM)
    x = align(args[0], levels, expand=True)
    if mode == "different":
        return _out(op.apply(x, *args[1:]), levels)
    example = list(x._data.shape[len(levels):])
    mask = op.apply(Variable._make(torch.ones(example, dtype=x._data.dtype)), *args[1:])[0]
    return _out((ops.Mul.apply(x, mask), None), levels)


def on_last_dims(min_rank: Callable[[tuple], int]) -> Rule:
    """A rule for an op that works on its input's last dims (tril, triu, constant_pad_nd): the batch dims in front
    are more leading dims to it. An example with fewer than `min_rank(args)` dims gets torch's own error, from the
    op run on one example."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        if any(levels_of(a) for a in args[1:]):
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} with a batched "
                                      "argument after its first")
        x = align(args[0], levels)
        if _logical_dim(args[0]) < min_rank(args):
            op.apply(Variable._make(x._data[(0,) * len(levels)]), *args[1:])   # (raises torch's error)
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} on an example of "
                                      f"{_logical_dim(args[0])} dims")
        return _out(op.apply(x, *args[1:]), levels)
    return rule


def _repeat(op: type, args: tuple, levels: tuple) -> Any:
    repeats = tuple(args[1])
    if len(repeats) < _logical_dim(args[0]):
        op.apply(Variable._make(args[0]._data[(0,) * len(levels_of(args[0]))]), repeats)   # (torch's error)
    x = align(args[0], levels, len(repeats))
    return _out(op.apply(x, (1,) * len(levels) + repeats), levels)


def _roll_whole(op: type, x: Variable, args: list, levels: tuple) -> Any:
    """roll without dims: the example flattened, rolled, and given its shape back."""
    rolled = op.apply(_flat(x, levels), args[1], -1)
    return _out(ops.reshape(rolled, list(x._data.shape)), levels)


def _gather_scatter(op: type, args: tuple, levels: tuple) -> Any:
    """gather(a, dim, index) and scatter(a, dim, index, src or value): every tensor expanded to the batch (an index
    of one example goes with that example's input), the dim past the batch dims."""
    a, dim, rest = args[0], args[1], args[2:]
    physical = [align(t, levels, expand=True) if _is_tensor(t) else t for t in rest]
    if isinstance(physical[0], Variable):    # (an index is read as data: no edge)
        physical[0] = physical[0]._data
    return _out(op.apply(align(a, levels, expand=True), _shift(dim, _logical_dim(a), len(levels)), *physical), levels)


def _masked_fill_tensor(op: type, args: tuple, levels: tuple) -> Any:
    if levels_of(args[2]):
        raise NotImplementedError("vmap: teachgrad has no batching rule for MaskedFillTensor with a batched value")
    return _out(op.apply(*_expanded(args[:2], levels), args[2]), levels)


def _expanded(tensors: tuple, levels: tuple) -> list:
    shape = torch.broadcast_shapes(*[tuple(a.shape) for a in tensors])
    result = []
    for a in tensors:
        a = align(a, levels, len(shape), expand=True)
        sizes = [-1] * len(levels) + list(shape)
        result.append(ops.Expand.apply(a, sizes) if isinstance(a, Variable) else a.expand(sizes))
    return result


# --- layers: the batch folded into the op's own batch (N) or channels ------------------------------------------

def _batch_numel(levels: tuple) -> int:
    n = 1
    for level in levels:
        n *= batch_sizes[level]
    return n


def _refuse_rank(op: type, args: tuple, ranks: tuple) -> None:
    """An example whose rank the op does not take: torch's own error, from the op run on one example."""
    x = args[0]
    if _logical_dim(x) not in ranks:
        op.apply(Variable._make(x._data[(0,) * len(levels_of(x))]), *args[1:])
        raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} on an example of "
                                  f"{_logical_dim(x)} dims")


def _into_n(op: type, args: tuple, levels: tuple, n_dims: int = 1) -> Any:
    """An op on (N, C, ...) whose samples never mix along N (pooling; convolution with an unbatched weight): the
    batch dims folded into N (with the example's own N, `n_dims=1`, or as the N of an example without one), and
    taken out of each output again."""
    x = align(args[0], levels)
    outer = list(x._data.shape[:len(levels) + n_dims])
    result = op.apply(ops.reshape(x, [-1] + list(x._data.shape[len(outer):])), *args[1:])

    def unfold(r: Any) -> Any:
        return ops.reshape(r, outer + list(r._data.shape[1:])) if isinstance(r, Variable) else r
    return _out(tuple(unfold(r) for r in result) if isinstance(result, tuple) else unfold(result), levels)


def _pool(op: type, args: tuple, levels: tuple) -> Any:
    """max_pool2d / avg_pool2d of (C, H, W) or (N, C, H, W) examples: the batch folded into N."""
    if any(levels_of(a) for a in args[1:]):
        raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} with a batched option")
    _refuse_rank(op, args, (3, 4))
    return _into_n(op, args, levels, n_dims=_logical_dim(args[0]) - 3)


def _convolution(op: type, args: tuple, levels: tuple) -> Any:
    """conv1d / conv2d, as torch's rule: with only the input batched, the batch folded into N; with the weight (or
    the bias) batched, each example's weight is a group of its own (groups times the batch size), the examples
    side by side along the channels."""
    input, weight, bias, stride, padding, dilation, groups = args
    if not (levels_of(weight) or levels_of(bias)):
        return _into_n(op, args, levels)
    k, n = len(levels), _batch_numel(levels)
    x = align(input, levels, expand=True)                       # (B..., N, C, *)
    x = ops.reshape(x, [n] + list(x._data.shape[k:]))           # (B, N, C, *)
    x = ops.Transpose.apply(x, 0, 1)                            # (N, B, C, *)
    samples, channels, space = x._data.shape[0], x._data.shape[2], list(x._data.shape[3:])
    x = ops.reshape(x, [samples, n * channels] + space)         # (N, B·C, *)
    w = align(weight, levels, expand=True)
    w = ops.reshape(w, [-1] + list(w._data.shape[k + 1:]))      # (B·C_out, C_in/groups, *)
    if bias is not None:
        bias = ops.reshape(align(bias, levels, 1, expand=True), [-1])
    out = op.apply(x, w, bias, stride, padding, dilation, groups * n)   # (N, B·C_out, *)
    out_space = list(out._data.shape[2:])
    out = ops.reshape(out, [samples, n, -1] + out_space)
    out = ops.Transpose.apply(out, 0, 1)                        # (B, N, C_out, *)
    return _out(ops.reshape(out, [batch_sizes[lv] for lv in levels] + list(out._data.shape[1:])), levels)


BATCH_NORM_STATS = ("Batch norm got a batched tensor as input while the running_mean or running_var, which will be "
                    "updated in place, were not batched.\nIf you are using a module and do not need eval mode, please "
                    "set `track_running_stats` to be False.If you are using a prebuilt module and do not need eval "
                    "mode, please see the functorch website for resources on how to patch your module to work with vmap")


def _batch_norm(op: type, args: tuple, levels: tuple) -> Any:
    """batch_norm: each example normalized over its own N (and spatial dims), so the batch is folded into the
    channels, weight, bias and running stats repeated to match. In training, running stats would be updated in
    place by every example: torch's error, as torch.func's."""
    input, weight, bias, running_mean, running_var, training, momentum, eps = args
    if training and (running_mean is not None or running_var is not None):
        raise RuntimeError(BATCH_NORM_STATS)
    if levels_of(running_mean) or levels_of(running_var):
        raise NotImplementedError("vmap: teachgrad has no batching rule for NativeBatchNorm with batched running stats")
    k, n = len(levels), _batch_numel(levels)
    x = align(input, levels, expand=True)
    x = ops.reshape(x, [n] + list(x._data.shape[k:]))           # (B, N, C, *)
    x = ops.Transpose.apply(x, 0, 1)                            # (N, B, C, *)
    shape = list(x._data.shape)
    x = ops.reshape(x, [shape[0], n * shape[2]] + shape[3:])    # (N, B·C, *)

    def per_channel(p: Any) -> Any:
        if p is None:
            return None
        if isinstance(p, torch.Tensor) and not isinstance(p, Variable):
            if not p.requires_grad:                   # (running stats)
                return p.repeat(n)
            p = torch_leaves.as_variable(p)           # (a module's nn.Parameter: a leaf of teachgrad's graph)
        return ops.reshape(align(p, levels, 1, expand=True), [-1])
    out = op.apply(x, per_channel(weight), per_channel(bias), per_channel(running_mean), per_channel(running_var),
                   training, momentum, eps)
    out = ops.Transpose.apply(ops.reshape(out, shape), 0, 1)    # (B, N, C, *)
    return _out(ops.reshape(out, [batch_sizes[lv] for lv in levels] + [shape[0], shape[2]] + shape[3:]), levels)


# --- the ops of torch's op database: reductions that pick or skip, products with an added term, pads, pools ------

def _all_of_example(position: int, rule: Rule) -> Rule:
    """A rule for a reduction whose dim argument at `position` may be None (or (), for amax and amin), the whole
    example, and whose last argument is keepdim (amax, aminmax, nansum, var_mean): the whole example is reduced as
    its flattened last dim, and keepdim gives a size-1 dim back for each of the example's. Other dims: `rule`."""
    def whole_rule(op: type, args: tuple, levels: tuple) -> Any:
        dim = args[position]
        if not (dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)):
            return rule(op, args, levels)
        ndim, keepdim = _logical_dim(args[0]), args[-1]
        flat = list(args)
        flat[0], flat[-1] = _flat(align(args[0], levels), levels), False
        flat[position] = -1 if op is ops.Aminmax else (-1,)       # (aminmax's dim is one int)
        result = op.apply(*flat)

        def kept(r: Any) -> Any:
            if not (keepdim and isinstance(r, Variable)):
                return r
            return ops.reshape(r, list(r._data.shape[:len(levels)]) + [1] * ndim)
        return _out(tuple(kept(r) for r in result) if isinstance(result, tuple) else kept(result), levels)
    return whole_rule


def _first_example(x: Any) -> Any:
    """x's first example, a plain Variable (x itself where it is not batched): to get an op's own error."""
    if not levels_of(x):
        return x
    return Variable._make(x._data[(0,) * len(levels_of(x))])


def _add_product(product: Callable[[Variable, Variable], Variable]) -> Rule:
    """addmm, addmv, addr, baddbmm, addbmm as torch defines them: beta * input + alpha * product(a, b), the product
    of the factors lined up at every level (size 1 where one is not batched: matmul broadcasts). The input must
    broadcast to the product's shape (else the op's own error, from one example). With beta 0 the input is not
    read (a nan in it does not reach the result), as torch's kernels."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        input, a, b, beta, alpha = args
        try:
            result = product(align(a, levels), align(b, levels))
            shape = list(result._data.shape[len(levels):])
            fits = list(torch.broadcast_shapes(tuple(input.shape), tuple(shape))) == shape
        except RuntimeError:
            fits = False
        if not fits:
            op.apply(*[_first_example(x) for x in args])          # (raises torch's error)
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} with these shapes")
        if alpha != 1:
            result = ops.MulByNumber.apply(result, alpha)
        result = BatchedVariable.of(result, levels)
        if beta == 0:
            return _out(align(result, levels, expand=True), levels)
        if beta != 1:
            input = pointwise(ops.MulByNumber, (input, beta), levels_of(input)) if levels_of(input) \
                else ops.MulByNumber.apply(input, beta)
        return pointwise(ops.Add, (input, result), levels)
    return rule


def _outer(a: Variable, b: Variable) -> Variable:
    return ops.Mul.apply(ops.Unsqueeze.apply(a, -1), ops.Unsqueeze.apply(b, -2))


def _summed_bmm(a: Variable, b: Variable) -> Variable:
    """addbmm's product: the example's batch of matrix products, summed (its batch is the dim before the last two)."""
    return ops.SumDim.apply(ops.matmul(a, b), -3, False)


def _vdot(op: type, args: tuple, levels: tuple) -> Any:
    if any(_is_tensor(a) and a.dtype.is_complex for a in args):
        raise NotImplementedError("vmap: teachgrad has no batching rule for Vdot of complex tensors")
    return _dot(op, args, levels)


def _trace(op: type, args: tuple, levels: tuple) -> Any:
    """trace: the sum of the diagonal of each example's last two dims (an example that is no matrix: torch's error)."""
    _refuse_rank(op, args, (2,))
    diagonal = ops.Diagonal.apply(align(args[0], levels), 0, -2, -1)
    return _out(ops.SumDim.apply(diagonal, -1, False), levels)


def _spatial(d: int) -> Rule:
    """A rule for an op on its input's last `d` dims with one channel dim before them and maybe N before that
    (reflection and replication pads, adaptive pooling): the batch dims folded into N, as the pool rules do."""
    def rule(op: type, args: tuple, levels: tuple) -> Any:
        if any(levels_of(a) for a in args[1:]):
            raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} with a batched option")
        _refuse_rank(op, args, (d + 1, d + 2))
        return _into_n(op, args, levels, n_dims=_logical_dim(args[0]) - d - 1)
    return rule


def _evenly(op: type, args: tuple, levels: tuple) -> Any:
    """median() / nanmedian() of the whole example, whose gradient is shared evenly by the elements equal to it
    (torch's evenly_distribute_backward): each example's median (along its flattened last dim, as median(dim)
    finds it), then amax over the elements equal to it, the others masked to -inf; amax shares its gradient among
    ties, and they are exactly the elements equal to the median. A nan median (its gradient goes to the nan
    elements) is refused."""
    x = _flat(align(args[0], levels), levels)
    along_dim = ops.MedianDim if op is ops.Median else ops.NanmedianDim
    median = along_dim.apply(Variable._make(x._data), -1, True)[0]._data
    if bool(median.isnan().any()):
        raise NotImplementedError(f"vmap: teachgrad has no batching rule for {op.__name__} of an example with nan")
    others = x._data != median
    return _out(ops.Amax.apply(ops.MaskedFill.apply(x, others, -float("inf")), -1, False), levels)


MASKED_SELECT = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this "
                 "because for each batch this would return a differently shaped Tensor. Please file an issue at "
                 "https://github.com/pytorch/pytorch/issues if you need this feature.")


def _masked_select(op: type, args: tuple, levels: tuple) -> Any:
    """a.masked_select(mask) with one mask for the whole batch: every example gives as many elements, so the
    batch is selected at once (the mask expanded to it) and each example's elements are a row. A mask per example
    is torch's error: the examples would give different numbers of elements."""
    a, mask = args
    if levels_of(mask):
        raise RuntimeError(MASKED_SELECT)
    shape = list(torch.broadcast_shapes(tuple(a.shape), tuple(mask.shape)))
    x = ops.Expand.apply(align(a, levels, len(shape), expand=True), [-1] * len(levels) + shape)
    mask = mask._data if isinstance(mask, Variable) else mask
    picked = op.apply(x, mask.expand(list(x._data.shape)))
    return _out(ops.reshape(picked, list(x._data.shape[:len(levels)]) + [-1]), levels)


def _convolution_transpose(op: type, args: tuple, levels: tuple) -> Any:
    """conv_transpose1d / 2d with only the input batched: the batch folded into N (with a batched weight or bias,
    each example's weight would be a group of its own, as for convolution: not done here)."""
    if levels_of(args[1]) or levels_of(args[2]):
        raise NotImplementedError("vmap: teachgrad has no batching rule for ConvolutionTranspose with a batched "
                                  "weight or bias")
    return _into_n(op, args, levels)


def _ctc_loss(op: type, args: tuple, levels: tuple) -> Any:
    """ctc_loss of batched (T, N, C) log-probabilities, the targets and lengths shared: the batch folded into N
    (the sequences side by side, each batch's copy of the targets and lengths with it), the (B·N) losses cut
    back into (B, N). nn.functional.ctc_loss reduces them afterwards, example by example."""
    log_probs, targets, input_lengths, target_lengths, blank, zero_infinity = args
    if levels_of(targets):
        raise NotImplementedError("vmap: teachgrad has no batching rule for CtcLoss with batched targets")
    k, n = len(levels), _batch_numel(levels)
    x = align(log_probs, levels, expand=True)                       # (B..., T, N, C)
    steps, samples, classes = x._data.shape[k:]
    x = ops.Transpose.apply(ops.reshape(x, [n, steps, samples, classes]), 0, 1)          # (T, B, N, C)
    x = ops.reshape(x, [steps, n * samples, classes])                                    # (T, B·N, C)
    targets = targets._data if isinstance(targets, Variable) else targets
    targets = targets.repeat(n, 1) if targets.dim() == 2 else targets.repeat(n)          # (padded, or concatenated)
    loss = op.apply(x, targets, tuple(input_lengths) * n, tuple(target_lengths) * n, blank, zero_infinity)
    return _out(ops.reshape(loss, [batch_sizes[lv] for lv in levels] + [samples]), levels)


# --- the table: op -> its batching rule -------------------------------------------------------------------------

def matrices(op: type, args: tuple, levels: tuple) -> Any:
    """An op on the last two dims of each tensor argument, which takes any batch in front (torch.linalg's): every
    tensor argument gets the batch dims in front, expanded to the batch sizes, and the op runs as it is."""
    aligned = [align(a, levels, expand=True) if _is_tensor(a) else a for a in args]
    return _out(op.apply(*aligned), levels)


def declared(kind: str | tuple) -> Rule:
    """The rule an op's class line declares (`batching="pointwise"`, `"matrices"`, `batching=("along", 1)`)."""
    return pointwise if kind == "pointwise" else matrices if kind == "matrices" else along(*kind[1:])


# every op that declares its kind in its class line (teachgrad/core/function.py's DECLARED) ...
RULES: dict[type, Rule] = {op: declared(op.batching) for op in function.DECLARED if op.batching}
# ... and the ops whose rule is their own
RULES.update({
    # reductions over the whole example
    ops.Sum: whole(lambda x: ops.SumDim.apply(x, -1, False)),
    ops.Mean: whole(lambda x: ops.MeanDim.apply(x, -1, False)),
    ops.Max: whole(lambda x: ops.MaxDim.apply(x, -1, False)[0]),
    ops.Min: whole(lambda x: ops.MinDim.apply(x, -1, False)[0]),
    ops.Prod: whole(lambda x: ops.ProdDim.apply(x, -1, False)),
    # along a dim, which may be None (the whole example) or one past the last
    ops.Norm: along(2, whole=lambda op, x, args, levels: _whole_to_last(op, x, args, levels, 2)),
    ops.NormDim: along(2, whole=lambda op, x, args, levels: _whole_to_last(op, x, args, levels, 2)),
    ops.Var: along(1, whole=lambda op, x, args, levels: _whole_to_last(op, x, args, levels, 1)),
    ops.Std: along(1, whole=lambda op, x, args, levels: _whole_to_last(op, x, args, levels, 1)),
    ops.Unsqueeze: along(1, new_dim=True), ops.Roll: along(2, whole=_roll_whole),
    ops.Amax: _all_of_example(1, along(1)), ops.Amin: _all_of_example(1, along(1)),
    ops.Aminmax: _all_of_example(1, along(1)), ops.Nansum: _all_of_example(1, along(1)),
    ops.VarMean: _all_of_example(1, along(1)), ops.StdMean: _all_of_example(1, along(1)),
    ops.Median: _evenly, ops.Nanmedian: _evenly,
    # shapes
    ops.View: _view, ops.UnsafeView: _view, ops.ReshapeAlias: _view, ops.Permute: _permute, ops.T: _t,
    ops.Squeeze: _squeeze, ops.Expand: _expand, ops.Select: _indexing, ops.Slice: _indexing, ops.Index: _index,
    ops.Cat: _join, ops.Stack: _join, ops.Repeat: _repeat,
    ops.Tril: on_last_dims(lambda args: 2), ops.Triu: on_last_dims(lambda args: 2),
    ops.ConstantPadNd: on_last_dims(lambda args: len(args[1]) // 2),
    ops.ReflectionPad1d: _spatial(1), ops.ReflectionPad2d: _spatial(2), ops.ReflectionPad3d: _spatial(3),
    ops.ReplicationPad1d: _spatial(1), ops.ReplicationPad2d: _spatial(2), ops.ReplicationPad3d: _spatial(3),
    ops.AdaptiveAvgPool2d: _spatial(2), ops.AdaptiveMaxPool2d: _spatial(2),
    # resampling (teachgrad/ops/sampling_layers.py): each sample on its own, so the batch folded into N
    ops.UpsampleNearest1d: _spatial(1), ops.UpsampleNearest2d: _spatial(2), ops.UpsampleNearest3d: _spatial(3),
    ops.UpsampleNearestExact1d: _spatial(1), ops.UpsampleNearestExact2d: _spatial(2),
    ops.UpsampleNearestExact3d: _spatial(3), ops.UpsampleLinear1d: _spatial(1), ops.UpsampleBilinear2d: _spatial(2),
    ops.UpsampleTrilinear3d: _spatial(3), ops.UpsampleBicubic2d: _spatial(2), ops.UpsampleBilinear2dAa: _spatial(2),
    ops.UpsampleBicubic2dAa: _spatial(2), ops.AdaptiveAvgPool3d: _spatial(3), ops.AvgPool3d: _spatial(3),
    ops.PixelShuffle: _spatial(2), ops.PixelUnshuffle: _spatial(2), ops.Im2Col: _spatial(2), ops.Col2Im: _spatial(1),
    # matrix products
    ops.Mm: _matmul, ops.Bmm: _matmul, ops.Mv: _mv, ops.Dot: _dot, ops.Addmm: _addmm,
    ops.AddmmScaled: _add_product(ops.matmul), ops.Baddbmm: _add_product(ops.matmul),
    ops.Addmv: _add_product(lambda a, v: ops.SqueezeDim.apply(ops.matmul(a, ops.Unsqueeze.apply(v, -1)), -1)),
    ops.Addr: _add_product(_outer), ops.Addbmm: _add_product(_summed_bmm),
    ops.Vdot: _vdot, ops.Trace: _trace,
    # masks, indices and losses
    ops.MaskedFill: same_shape, ops.MaskedFillTensor: _masked_fill_tensor, ops.MaskedSelect: _masked_select,
    ops.Gather: _gather_scatter, ops.Scatter: _gather_scatter, ops.ScatterAdd: _gather_scatter,
    ops.ScatterValue: _gather_scatter,
    ops.MseLoss: _loss_then_reduce(2), ops.HuberLoss: _loss_then_reduce(2), ops.SmoothL1Loss: _loss_then_reduce(2),
    ops.SoftMarginLoss: _loss_then_reduce(2), ops.BinaryCrossEntropy: _loss_then_reduce(3),
    ops.BinaryCrossEntropyWithLogits: _loss_then_reduce(4),
    ops.NllLoss: _nll_loss, ops.CtcLoss: _ctc_loss,
    # layers
    ops.Embedding: unbatched_only(0), ops.NativeLayerNorm: unbatched_only(2, 3), ops.NativeDropout: _dropout,
    ops.Convolution: _convolution, ops.ConvolutionTranspose: _convolution_transpose,
    ops.MaxPool2d: _pool, ops.AvgPool2d: _pool, ops.NativeBatchNorm: _batch_norm,
})
