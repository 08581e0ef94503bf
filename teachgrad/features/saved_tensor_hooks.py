"""What autograd keeps: hooks on the tensors a graph saves for backward (`tg.autograd.graph`).

Every node saves what its backward will need (`MulBackward0` both factors, `ExpBackward0` its result)
and keeps it until backward has run. Saved-tensor hooks decide *how* it is kept:

    def pack(x):                 # called when an op saves x
        return x.to("cpu")       # ... whatever is returned is kept instead of x
    def unpack(kept):            # called each time backward (or node._saved_*) reads it
        return kept.to("cuda")

    with tg.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = model(x)          # every tensor saved in here goes through pack

Only the innermost pair of hooks applies, as in torch. The stack the pairs are pushed on lives in
teachgrad/rules/saved_tensors.py, where every op's saved tensors are packed: the rule reads it, and never imports
this feature.

Guarded by tests/test_saved_tensors_hooks.py (the hooks' order, what they see, torch's messages) and
tests/test_checkpoint.py (checkpoint, which is built on them).
"""
import functools

import torch

from ..rules.saved_tensors import hooks_state as _state   # the hooks' stack, read where ops save tensors

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through `pack_hook`, and come back
    through `unpack_hook` when backward needs them."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _state.disabled is not None:
            raise RuntimeError(_state.disabled)
        _state.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _state.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU and bring them back to their device for backward.

    GPU memory then holds no activations between forward and backward; the price is two copies.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            packed = torch.empty(tensor.size(), dtype=tensor.dtype, pin_memory=torch.cuda.is_available())
            packed.copy_(tensor.data)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager and decorator: entering `saved_tensors_hooks` inside it raises `error_message`."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._previous = _state.disabled
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.disabled = self._previous

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper
