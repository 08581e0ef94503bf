"""`tg.nn.init` mirrors `torch.nn.init`: each function fills a tensor in place, without recording.

Handed a Variable it fills the Variable's data (torch's function, run on the tensor underneath)
and returns the Variable; handed a torch tensor it is torch's function itself.
"""
import functools

import torch.nn.init as _torch_init

from ..core.variable import Variable

__all__ = [name for name in dir(_torch_init) if not name.startswith("_") and callable(getattr(_torch_init, name))
           and getattr(getattr(_torch_init, name), "__module__", None) == _torch_init.__name__]


def _fills_variables(torch_fn):
    """torch's init function, run on a Variable's data when given one (initialising is never recorded)."""

    @functools.wraps(torch_fn)
    def fill(tensor, *args, **kwargs):
        if not isinstance(tensor, Variable):
            return torch_fn(tensor, *args, **kwargs)
        torch_fn(tensor.data, *args, **kwargs)
        return tensor

    return fill


calculate_gain = _torch_init.calculate_gain
for _name in __all__:
    if _name != "calculate_gain":
        globals()[_name] = _fills_variables(getattr(_torch_init, _name))
