"""`tg.autograd` mirrors `torch.autograd`: Function, backward, grad, gradcheck."""
from . import graph
from .check import gradcheck, gradgradcheck
from .engine import backward, grad
from .function import Function, once_differentiable
from .grad_mode import enable_grad, no_grad, set_grad_enabled

__all__ = ["graph", "Function", "backward", "grad", "gradcheck", "gradgradcheck", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled"]
