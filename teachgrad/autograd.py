"""`tg.autograd` mirrors `torch.autograd`: Function, backward, grad, gradcheck, Variable, graph."""
from . import function, graph
from .check import gradcheck, gradgradcheck
from .engine import backward, grad
from .function import Function, once_differentiable
from .grad_mode import enable_grad, no_grad, set_grad_enabled
from .variable import Variable

__all__ = ["graph", "Function", "Variable", "backward", "function", "grad", "gradcheck", "gradgradcheck",
           "once_differentiable", "no_grad", "enable_grad", "set_grad_enabled"]
