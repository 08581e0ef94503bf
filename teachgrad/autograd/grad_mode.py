"""`tg.autograd.grad_mode` mirrors the module `torch.autograd.grad_mode`: the grad modes, at torch's path.

They are written in teachgrad/rules/grad_mode.py, below the core, which reads them on every op.
"""
from ..rules.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["enable_grad", "inference_mode", "no_grad", "set_grad_enabled"]
