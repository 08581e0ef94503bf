"""`tg.autograd` mirrors `torch.autograd`: Function, backward, grad, gradcheck, Variable, grad modes, anomaly detection."""
from . import anomaly_mode, function, grad_mode, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .check import gradcheck, gradgradcheck
from .engine import backward, grad
from .function import Function, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .variable import Variable

__all__ = ["graph", "Function", "Variable", "backward", "function", "grad", "gradcheck", "gradgradcheck",
           "once_differentiable", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "grad_mode", "anomaly_mode"]
