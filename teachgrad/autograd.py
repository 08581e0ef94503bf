"""`tg.autograd` mirrors `torch.autograd`: Function, backward, grad, gradcheck, forward_ad, functional."""
import sys

from . import autograd_functional as functional
from . import forward_ad, graph
from .check import gradcheck, gradgradcheck
from .engine import backward, grad
from .function import Function, once_differentiable
from .grad_mode import enable_grad, no_grad, set_grad_enabled

# `import teachgrad.autograd.forward_ad as fwAD` works, as it does for torch
sys.modules[__name__ + ".forward_ad"] = forward_ad
sys.modules[__name__ + ".functional"] = functional

__all__ = ["graph", "Function", "backward", "forward_ad", "functional", "grad", "gradcheck", "gradgradcheck",
           "once_differentiable", "no_grad", "enable_grad", "set_grad_enabled"]
