"""What torch refuses on a tensor's autograd attributes, with torch's messages, kept beside teachgrad/core/variable.py.

- `requires_grad` on an integer tensor, on one made in inference mode (outside it), or False on a non-leaf; `requires_grad_(1)`
  and `requires_grad = 1` (a bool, nothing else);
- `.grad` assigned something that is not a tensor, the Variable itself, or a tensor of another dtype,
  device or size;
- `.grad` read on a non-leaf that does not retain it (a warning, as torch's);
- `.data` set to something that is not a tensor, or to an integer tensor while requiring grad; `del x.data`.

Guarded by tests/test_engine.py, tests/test_engine_fidelity.py and tests/test_fidelity_corpus.py (messages),
tests/test_inference_mode.py (inference tensors), tests/test_autograd_api.py and tests/test_torch_boundary.py
(`.grad` assignment), tests/test_namespaces.py and tests/test_fidelity_corpus.py (`.data`).
"""
from __future__ import annotations

import torch

from . import grad_mode

NON_LEAF_GRAD = (
    "The .grad attribute of a Variable that is not a leaf Variable is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for "
    "a non-leaf Variable, use .retain_grad() on the non-leaf Variable. If you access the non-leaf Variable "
    "by mistake, make sure you access the leaf Variable instead."
)
NOT_LEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


def check_can_require_grad(data: torch.Tensor, first_word: str = "only") -> None:
    """Whether a tensor may require grad: a floating-point or complex one, not made in inference mode.

    (torch's constructor says "Only Tensors ...", its setter "only Tensors ...".)"""
    if not (data.is_floating_point() or data.is_complex()):
        raise RuntimeError(f"{first_word} Tensors of floating point and complex dtype can require gradients")
    check_not_inference(data)


def check_requires_grad_call(variable: object, requires_grad: object) -> None:
    """What `requires_grad_(requires_grad)` refuses before it sets the flag: an argument that is not a bool (1 or
    None is a mistake, not a truth value), and True for a leaf whose dtype cannot require grad."""
    if not isinstance(requires_grad, bool):
        raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                        f"{type(requires_grad).__name__}")
    if requires_grad and variable.grad_fn is None:
        if not (variable.data.is_floating_point() or variable.data.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")


def check_requires_grad_value(value: object) -> None:
    """What setting `x.requires_grad = value` refuses first, on a leaf or not: a value that is not a bool."""
    if type(value) is not bool:
        raise RuntimeError("requires_grad must be a bool")


def check_not_inference(data: torch.Tensor) -> None:
    if data.is_inference() and not grad_mode.is_inference_mode_enabled():
        raise RuntimeError(grad_mode.INFERENCE_REQUIRES_GRAD)


_CPP_DTYPE = {torch.float32: "float", torch.float64: "double", torch.float16: "c10::Half",
              torch.bfloat16: "c10::BFloat16", torch.int64: "long int", torch.int32: "int", torch.int16: "short int",
              torch.int8: "signed char", torch.uint8: "unsigned char", torch.bool: "bool",
              torch.complex64: "c10::complex<float>", torch.complex128: "c10::complex<double>"}
_SCALAR_TYPE = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
                torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
                torch.bool: "Bool", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble"}


def check_assigned_grad(variable: object, value: object, grad: object) -> None:
    """What torch checks when `.grad` is assigned `value` (`grad`: its tensor, the data of a Variable): a tensor,
    not the variable itself, of the same dtype, device and size."""
    if not isinstance(grad, torch.Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
    if value is variable:
        raise RuntimeError("can't assign Variable as its own grad")
    data = variable.data
    if grad.dtype != data.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_CPP_DTYPE.get(grad.dtype, grad.dtype)}' to a tensor with "
            f"grad_dtype '{_SCALAR_TYPE.get(data.dtype, data.dtype)}'. The gradient must match the tensor's grad_dtype "
            "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or "
            "None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
            "may break downstream systems that assume they match."
        )
    if grad.device.type != data.device.type:
        raise RuntimeError(f"attempting to assign a gradient with device type '{grad.device.type}' to a tensor with "
                           f"device type '{data.device.type}'. Please ensure that the gradient and the tensor are on "
                           "the same device")
    if grad.device != data.device:
        raise RuntimeError(f"attempting to assign a gradient located on device with index '{grad.device.index}' to a "
                           f"tensor located on device with index '{data.device.index}'. Please ensure that the "
                           "gradient and the tensor are on the same device")
    if grad.shape != data.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of size "
                           f"'{list(data.shape)}'. Please ensure that the gradient and the tensor are the same size")


def check_new_data(variable, value):
    """`variable.data = value` (a Variable given as its data): a tensor, floating point if it requires grad."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    if variable.requires_grad and not (value.is_floating_point() or value.is_complex()):
        raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
    return value


def refuse_deleting_data(variable):
    raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")
