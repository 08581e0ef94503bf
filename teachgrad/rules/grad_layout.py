"""The gradient layout contract, as torch keeps it: a leaf's first `.grad` is laid out as the leaf is.

A gradient nobody else holds is kept as it is when it obeys the contract: its strides are the leaf's
wherever the size is not 1 (for a leaf whose elements fill their memory without gaps or overlaps; for any
other leaf, the gradient must be contiguous). Otherwise it is copied into a new tensor laid out as the leaf.
`torch.autograd.enforce_grad_layout_policy(False)` (also `tg.autograd.enforce_grad_layout_policy`) lets a
gradient nobody else holds be kept whatever its layout. (torch/csrc/autograd/functions/accumulate_grad.h,
torch/csrc/autograd/utils/grad_layout_contract.h.)

Which gradients nobody else holds is the engine's to know: it calls `track_owner` for each gradient bound for
a leaf's AccumulateGrad or a view op's node, and keeps the answer in `watch.owned` (`watch.may_own`: nothing
records the backward).

Guarded by tests/test_engine_fidelity.py (test_first_gradient_layout_is_torchs, the gradients kept uncopied)
and tests/test_torch_boundary.py.
"""
import torch


def first_grad(leaf: torch.Tensor, grad: torch.Tensor, owned: bool) -> torch.Tensor:
    """What a leaf's `.grad` becomes when it had none: `grad`'s memory itself, or a copy laid out as the leaf."""
    if owned and ((grad.stride() == leaf.stride() and leaf.is_contiguous())   # (the usual case, without a call)
                  or not torch._C._is_grad_layout_enforcement_enabled() or obeys_contract(grad, leaf)):
        return grad.detach()   # as torch's AccumulateGrad: the same memory, in a tensor object of its own
    return clone_obey_contract(grad, leaf)


def clone_obey_contract(grad: torch.Tensor, leaf: torch.Tensor) -> torch.Tensor:
    """A copy of `grad` laid out as torch wants `leaf`'s gradient: with the leaf's strides when its elements fill
    their memory without gaps or overlaps, else contiguous (the kernels torch calls for it, too)."""
    if _non_overlapping_and_dense(leaf):
        return grad.new_empty_strided(leaf.shape, leaf.stride(), dtype=leaf.dtype, device=leaf.device).copy_(grad)
    return grad.clone(memory_format=torch.contiguous_format)


def obeys_contract(grad: torch.Tensor, leaf: torch.Tensor) -> bool:
    """Whether `grad` is laid out as torch wants the gradient of `leaf` to be."""
    if leaf.is_contiguous() and grad.stride() == leaf.stride():   # (the usual case, without the loop below)
        return True
    if not _non_overlapping_and_dense(leaf):
        return grad.is_contiguous()
    return all(g == s if n != 1 else g != 0 for g, s, n in zip(grad.stride(), leaf.stride(), grad.shape))


def _non_overlapping_and_dense(t: torch.Tensor) -> bool:
    """Whether t's elements fill one block of memory without gaps or overlaps (in some order of its dims)."""
    expected = 1
    for stride, size in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


FEW_EDGES = 8   # up to this many, a node's edges are looked through for each gradient (cheaper than counting them)


def track_owner(watch, receiver, summed, sender, g, grad_outputs, grad_inputs) -> None:
    """Whether the gradient now waiting at `receiver` is one nobody else holds: then a leaf's `.grad` can keep it
    uncopied, as torch's. The engine asks for each gradient bound for a leaf's AccumulateGrad, and for a view op's
    node, whose backward may hand on a view of it (TBackward0 of nn.Linear's weight).

    Nobody else holds a sum the engine made, or what a built-in node (`sender`) sends on this one edge only: a new
    tensor, a view of a tensor it made itself (addmm's column-major product), or a view of the gradient it was given
    when nobody else held that one either (a transpose's backward). Not a gradient passed through unchanged (Add's),
    one whose memory goes out on two edges, or any that a user's code could hold (a custom Function's, one a hook
    has seen). torch asks the tensor's use count instead (torch/csrc/autograd/functions/accumulate_grad.h)."""
    owned = summed and not watch.create_graph
    if not owned and watch.may_own and sender._trusted and not sender._post_hooks \
            and receiver._num_outputs == 1:
        memory = g if g._base is None else g._base   # (views of views all share the one base)
        given = False   # whether g's memory is that of a gradient the sender was given (a built-in's backward
        for arrived in grad_outputs:   # never returns the base of one: so only a view's is looked for)
            if arrived is memory or (memory is not g and arrived is not None and arrived._base is memory):
                given = True
        if len(grad_inputs) <= FEW_EDGES:   # on how many edges g's memory goes out: a few edges are looked through,
            sent = 0
            for other in grad_inputs:
                if other is not None and (other is memory or other._base is memory):
                    sent += 1
        else:   # many (stack's, cat's) are counted once for all the node's edges: n, not n * n
            if watch.sender is not sender:
                watch.sender, watch.sent = sender, edges_per_memory(grad_inputs)
            sent = watch.sent[id(memory)]
        if given:   # passed through, or a view of what it was given: owned if that was, and no hook has seen it
            owned = g is not memory and sent == 1 and sender in watch.owned and not (
                sender._tensor_pre_hooks or sender._pre_hooks)   # (retain_grad's hook keeps a copy: it may run)
        else:
            owned = sent == 1
    if owned:
        watch.owned.add(receiver)
    else:
        watch.owned.discard(receiver)


def edges_per_memory(grad_inputs) -> dict[int, int]:
    """On how many of a node's edges each memory (a tensor, or the base of a view) goes out, keyed by its id: counted
    once for a node, so a node with n inputs (stack's, cat's) costs n, not n * n (44 s for 20,000 stacked leaves,
    before: tests/test_scaling.py)."""
    sent = {}
    for other in grad_inputs:
        if other is not None:
            key = id(other if other._base is None else other._base)
            sent[key] = sent.get(key, 0) + 1
    return sent
