"""`tg.autograd` mirrors `torch.autograd`: Function, backward, grad, gradcheck, Variable, grad modes, anomaly
detection, forward_ad, functional, and the modules `tg.autograd.function` and `tg.autograd.graph`.

`tg.autograd.profiler` is torch's own profiler: no gradient flows through it, and what it times are the torch
kernels teachgrad's ops call (with record_function ranges as torch's)."""
import sys

from torch.autograd import enforce_grad_layout_policy, profiler  # torch's own: its switch is the one teachgrad reads

from ..features import anomaly_mode, forward_ad
from ..rules import grad_mode
from ..features.anomaly_mode import detect_anomaly, set_detect_anomaly
from .gradcheck import gradcheck, gradgradcheck
from ..core.engine import backward, grad
from ..rules.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from ..core.variable import Variable
from . import function, functional, grad_mode, graph
from .function import Function
from ..features.once_differentiable import once_differentiable

# `import teachgrad.autograd.forward_ad as fwAD` works, as it does for torch
sys.modules[__name__ + ".forward_ad"] = forward_ad
sys.modules[__name__ + ".profiler"] = profiler

__all__ = ["graph", "Function", "Variable", "function", "backward", "grad", "gradcheck", "gradgradcheck", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly", "set_detect_anomaly",
           "grad_mode", "anomaly_mode", "forward_ad", "functional", "profiler", "enforce_grad_layout_policy"]
