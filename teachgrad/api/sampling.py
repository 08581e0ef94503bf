"""Random samples, as torch draws them: `tg.normal`, `tg.multinomial` (and `generator=` everywhere).

The numbers come from torch's own kernels with torch's own `Generator`, so a seeded program draws
exactly what it draws under torch. torch does not differentiate through sampling: a sample from
`normal(mean, std)` records a node whose gradients for `mean` and `std` are zeros (derivatives.yaml,
`normal.Tensor_float`, `normal.float_Tensor`, `normal.Tensor_Tensor`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, TypeAlias

import torch

from ..core.function import Function
from ..rules import variable_class

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    Variable = variable_class.Variable
    Number: TypeAlias = int | float | bool           # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


class _Normal(Function):
    """A sample of N(mean, std²) for tensor mean and/or std. The gradient is zero for each tensor."""

    @staticmethod
    def forward(ctx, mean, std, generator):
        ctx.shapes = tuple(x.shape if isinstance(x, torch.Tensor) else None for x in (mean, std))
        return torch.normal(mean, std, generator=generator)

    @staticmethod
    def backward(ctx, grad):
        return tuple(None if shape is None else grad.new_zeros(shape) for shape in ctx.shapes) + (None,)

    @staticmethod
    def jvp(ctx, t_mean, t_std, _generator):
        return torch.zeros_like(ctx._result)


class NormalTensorFloat(_Normal, node="NormalBackward1"):
    """normal(mean tensor, std number)."""


class NormalFloatTensor(_Normal, node="NormalBackward2"):
    """normal(mean number, std tensor)."""


class NormalTensorTensor(_Normal, node="NormalBackward3"):
    """normal(mean tensor, std tensor)."""


def normal(mean: Number | TensorLike, std: Number | TensorLike = 1.0, size: Sequence[int] | None = None, *,
           generator: torch.Generator | None = None, requires_grad: bool = False, **kwargs: Any) -> Variable:
    """Samples of N(mean, std²): `mean` and `std` tensors or numbers; with two numbers, `size` gives the shape."""
    mean_is_tensor = isinstance(mean, (variable_class.Variable, torch.Tensor))
    std_is_tensor = isinstance(std, (variable_class.Variable, torch.Tensor))
    if not (mean_is_tensor or std_is_tensor):   # a factory: a new leaf
        args = (mean, std) if size is None else (mean, std, size)
        if generator is not None:   # (passed only when given, so a wrong call reads as torch's message)
            kwargs["generator"] = generator
        return variable_class.Variable(torch.normal(*args, **kwargs), requires_grad=requires_grad)
    if kwargs:   # (out=, dtype=, ... exist only for the factory form)
        raise TypeError(f"normal() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if mean_is_tensor and std_is_tensor:
        return NormalTensorTensor.apply(mean, std, generator)
    if mean_is_tensor:
        return NormalTensorFloat.apply(mean, std, generator)
    return NormalFloatTensor.apply(mean, std, generator)


def multinomial(input: TensorLike, num_samples: int, replacement: bool = False, *,
                generator: torch.Generator | None = None) -> Variable:
    """Indices drawn from the rows of `input` as (unnormalised) probabilities; integers, so no gradient."""
    data = input.data if isinstance(input, variable_class.Variable) else input
    return variable_class.Variable._make(torch.multinomial(data, num_samples, replacement, generator=generator))
