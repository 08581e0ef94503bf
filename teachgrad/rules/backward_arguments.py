"""What `backward()` and `grad()` accept, checked as torch checks it, and what `grad()` returns
(torch/autograd/__init__.py: `_make_grads`, `_tensor_or_tensors_to_tuple`, and grad's own checks).

- `inputs`: a tensor or a sequence of them, not empty; a torch tensor that requires grad stands as its
  TorchLeaf (see teachgrad/rules/torch_leaves.py);
- the output gradients: ones for a scalar output given none (a non-scalar or integer one is refused), a given
  one of the output's shape, cast to its dtype, a scalar moved to its device;
- grad(is_grads_batched=True): a batch of gradients per output (batched_grad_outputs);
- grad(): every output and input requires grad; an unused input is an error, or None (`allow_unused=True`), or
  zeros (`materialize_grads=True`); a torch tensor's gradient comes back as a torch tensor.

Guarded by tests/test_engine.py, tests/test_engine_fidelity.py (messages, dtypes, devices),
tests/test_fidelity_corpus.py (allow_unused, materialize_grads), tests/test_autograd_api.py and
tests/test_torch_boundary.py (torch tensors as inputs), tests/test_legacy_and_small.py (is_grads_batched, only_inputs).
"""
from __future__ import annotations

from typing import Any

import torch


from . import torch_leaves
from .hooks import as_variable, typename
from .validate_outputs import fit_device, fit_dtype
from . import variable_class
from . import grad_mode


def as_tuple(x: Any) -> tuple:
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def checked_inputs(inputs: Any, caller: str) -> tuple:
    """`inputs` as a tuple of Variables, refused as torch refuses them when empty or not tensors.

    A torch tensor that requires grad is a leaf of teachgrad's graph: its TorchLeaf stands for it."""
    if isinstance(inputs, (variable_class.Variable, torch.Tensor)):
        inputs = (inputs,)
    else:
        inputs = tuple(inputs)   # as torch: anything else must be iterable (None or a number is a TypeError)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{caller}()` cannot be empty.")
    for x in inputs:
        if not isinstance(x, (variable_class.Variable, torch.Tensor)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(x).__name__}")
    return tuple(_input_variable(x) if isinstance(x, torch.Tensor) else x for x in inputs)


def _input_variable(tensor):
    return torch_leaves.leaf(tensor) if tensor.requires_grad else variable_class.Variable._make(tensor)


def make_grads(outputs: tuple, grads: tuple, create_graph: bool) -> list:
    """Check the given output gradients, and make ones for scalar outputs given none."""
    Variable = variable_class.Variable
    made = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Variable):
            raise TypeError(f"expected a teachgrad Variable, got {type(out).__name__}")
        if g is None:
            if out.requires_grad and out.data.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.requires_grad and not out.data.is_floating_point():
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            data = torch.ones_like(out.data)   # (its memory_format is preserve_format)
        else:
            if not isinstance(g, (Variable, torch.Tensor)):
                raise TypeError(f"gradients can be either Tensors or None, but got {typename(g)}")
            data = g.data if isinstance(g, Variable) else g
            if data.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {data.shape} and output[{i}] "
                    f"has a shape of {out.shape}."
                )
            if data.dtype.is_complex != out.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
                    f"in dtype: grad_output[{i}] has a dtype of {data.dtype} and output[{i}] has a dtype of "
                    f"{out.dtype}.")
            data = fit_dtype(data, out.dtype)
            data = fit_device(data, out.device, lambda message: message, i)
            if isinstance(g, Variable) and data is g.data:
                data = g
        if create_graph or grad_mode.forward_level >= 0:   # a dual level: gradients carry tangents too
            made.append(data if isinstance(data, Variable) else Variable._make(data))
        else:
            made.append(data.data if isinstance(data, Variable) else data)
    if len(made) != len(outputs):   # (as torch, gradients are paired with outputs: extra ones are not read)
        raise RuntimeError(f"got {len(outputs)} tensors and {len(made)} gradients")
    return made


ONLY_INPUTS_IGNORED = ("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                       "gradient for other parts of the graph, please use torch.autograd.backward.")
BATCHED_CREATE_GRAPH = ("teachgrad does not support grad(is_grads_batched=True) with create_graph=True (torch "
                        "records the batched backward under vmap); call grad once per batch element instead")


def batched_grad_outputs(outputs: tuple, grad_outputs: tuple) -> list[tuple]:
    """grad(is_grads_batched=True)'s grad_outputs, checked as torch checks them, cut into one tuple per batch element.

    Each given gradient is a batch of gradients of its output's shape; one left out is ones for a scalar
    output, and like torch (whose vmap then finds no dimension to map) it is refused as unbatched."""
    made = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            make_grads((out,), (None,), False)   # a non-scalar output's implicit gradient is refused as without a batch
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
                             "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0.")
        data = g.data if isinstance(g, variable_class.Variable) else g
        if not isinstance(data, torch.Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {typename(g)}")
        first = data[0]   # (torch reads the first element, so an empty or 0-dim batch is refused by indexing it)
        if first.shape != out.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {first.shape[1:]} and "
                f"output[{i}] has a shape of {out.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
        made.append(data)
    sizes = [d.shape[0] for d in made]
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return [tuple(d[b] for d in made) for b in range(sizes[0])]


def checked_grad_call(outputs: Any, inputs: Any, allow_unused: bool | None,
                      materialize_grads: bool) -> tuple[tuple, tuple, bool]:
    """grad()'s arguments checked as torch checks them; returns (outputs, inputs, allow_unused) as tuples and a bool."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = as_tuple(outputs)
    inputs_tuple = checked_inputs(inputs, "grad")
    for i, out in enumerate(outputs):   # as torch: the outputs are checked before the inputs
        if isinstance(out, variable_class.Variable) and not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for x in inputs_tuple:
        if not x.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    return outputs, inputs_tuple, allow_unused


def grad_results(captured: list, inputs_tuple: tuple, allow_unused: bool, materialize_grads: bool,
                 create_graph: bool) -> tuple:
    """What grad() returns for the gradients the engine caught: one per input, as Variables (a torch tensor's:
    a torch tensor); an input the outputs do not depend on is refused, or gets None or zeros."""
    result = []
    for k, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
        if g is None and materialize_grads:
            g = variable_class.Variable(torch.zeros_like(inputs_tuple[k].data), requires_grad=create_graph)
        if isinstance(inputs_tuple[k], variable_class.TorchLeaf):   # a torch tensor's gradient: a torch tensor
            if create_graph:
                raise RuntimeError(torch_leaves.CREATE_GRAPH)
            result.append(None if g is None else _plain_tensor(g))
        else:
            result.append(None if g is None else as_variable(g))
    return tuple(result)


def _plain_tensor(g):
    return g.data if isinstance(g, variable_class.Variable) else g
