"""Arguments read as torch reads them, shared by the functions written out with torch's signatures
(teachgrad/api/torch_signatures.py, op_families.py, torch_functions.py): an alias torch accepts, a list that must
hold tensors, a keyword left out. Nothing here is a torch function, so nothing here is in the `tg.` namespace.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TypeAlias

import torch

from ..rules import variable_class

if TYPE_CHECKING:   # names the hints use, never imported at run time (teachgrad/core/variable.py imports this module)
    Variable = variable_class.Variable
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


def keepdim_alias(keepdim: bool, keepdims: bool | None, name: str) -> bool:
    """torch accepts `keepdims=` for `keepdim=` (numpy's spelling), but not both at once."""
    if keepdims is None:
        return keepdim
    if keepdim is not False:
        raise TypeError(f"{name}() got an unexpected keyword argument 'keepdims'")
    return keepdims


def check_tensor_list(tensors: Sequence[TensorLike]) -> None:
    """A list of tensors (cat's, stack's, hstack's) holds tensors only: anything else, a list or a number among
    them, is refused with torch's TypeError, never read as data."""
    for k, x in enumerate(tensors):
        if not isinstance(x, (variable_class.Variable, torch.Tensor)):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(x).__name__}")


NOT_GIVEN = object()   # a keyword the caller left out, where None is a value torch tells apart (div's rounding_mode)
