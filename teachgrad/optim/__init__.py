"""`tg.optim` gives a program what `torch.optim` gives it: SGD, Adam, AdamW, ... and `lr_scheduler`.

Each optimizer is torch's own, taught to also take Variables as parameters:

    w = tg.randn(3, requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    loss(w).backward(); opt.step(); opt.zero_grad()

torch's optimizers update torch tensors in place, reading each one's `.grad`. For a Variable the
optimizer is handed the Variable's data (the tensor itself, so the update lands in the Variable), and
before each step that tensor's `.grad` is pointed at the Variable's gradient; `zero_grad` clears the
Variables' `.grad` as torch clears a tensor's. torch tensors (a torch module's parameters) are passed
through untouched. `param_groups` therefore lists the Variables' data tensors.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeAlias

import torch
import torch.optim as _torch_optim

from ..core.variable import Variable
from . import lr_scheduler, swa_utils   # torch's own, at torch's paths (teachgrad.optim.optimizer imports this module)

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor
    # what an optimizer trains, as torch.optim's ParamsT says it, Variables included: tensors, param groups (dicts
    # with a "params" entry), or (name, tensor) pairs as named_parameters() gives them
    Params: TypeAlias = Iterable[TensorLike] | Iterable[dict[str, Any]] | Iterable[tuple[str, TensorLike]]



class _TakesVariables:
    """Mixed into each torch optimizer: Variables among the parameters are trained through their data."""

    def __init__(self, params: Params, *args: Any, **kwargs: Any) -> None:
        if isinstance(params, Variable):   # torch refuses a lone tensor (it would iterate its rows)
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + params.type())
        self._variables = []   # (Variable, the tensor the optimizer updates for it)
        super().__init__(params, *args, **kwargs)
        # before every step, also that of a subclass that writes its own `step`
        self.register_step_pre_hook(_hand_over_grads)

    def __getstate__(self) -> dict[str, Any]:   # (copy.deepcopy and pickle keep which tensor stands for which Variable)
        return {**super().__getstate__(), "_variables": self._variables}

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)   # torch's starts with no hooks: the hand-over is registered again
        self.register_step_pre_hook(_hand_over_grads)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        params = param_group["params"]
        if isinstance(params, Variable):
            param_group["params"] = [self._tensor_for(params)]
        elif not isinstance(params, (torch.Tensor, set)):
            param_group["params"] = [self._tensor_for(p) for p in params]
        super().add_param_group(param_group)

    def _tensor_for(self, param):
        """What the optimizer updates for `param`: a Variable's data; anything else as it is."""
        if isinstance(param, tuple) and len(param) == 2:   # (name, parameter), as named_parameters() gives
            return param[0], self._tensor_for(param[1])
        if not isinstance(param, Variable):
            return param
        if not (param.is_leaf or param.retains_grad):
            raise ValueError("can't optimize a non-leaf Tensor")
        self._variables.append((param, param.data))
        return param.data

    def _hand_over_grads(self):
        """Point each Variable's tensor's `.grad` at the Variable's gradient (after `v.data = ...`, follow it)."""
        for i, (variable, tensor) in enumerate(self._variables):
            if variable.data is not tensor:
                self._swap_tensor(tensor, variable.data)
                self._variables[i] = (variable, variable.data)
                tensor = variable.data
            grad = variable._grad
            tensor.grad = None if grad is None else grad.data

    def _swap_tensor(self, old, new):
        for group in self.param_groups:
            group["params"] = [new if p is old else p for p in group["params"]]
        if old in self.state:
            self.state[new] = self.state.pop(old)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        torch_step = _without_step_hooks(super().step.__func__).__get__(self)
        if closure is None:
            return torch_step()

        def closure_then_grads():   # (LBFGS calls the closure several times in one step)
            loss = closure()
            self._hand_over_grads()
            return loss

        return torch_step(closure_then_grads)

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none)
        for variable, _ in self._variables:
            grad = variable._grad
            if grad is None:
                continue
            if set_to_none:
                variable.grad = None
            else:   # as torch zeroes a tensor's .grad: cut off from any graph, then zeroed in place
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()



def _without_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """torch's step, without the step hooks and profiler range torch wraps its class's step in once an optimizer of
    that class is made (`hooked`): this class's step is wrapped in them too, and they run once a step. The wrappers
    are read down `__wrapped__`: torch.compile wraps some optimizers' steps again (LBFGS's, in dynamo's `disable`),
    above the hooked one; what lies below it (the step's no_grad) is kept."""
    below = step
    layer = step
    while layer is not None:
        if getattr(layer, "hooked", False):
            below = layer.__wrapped__
        layer = getattr(layer, "__wrapped__", None)
    return below

def _hand_over_grads(optimizer, args, kwargs):
    """The step pre-hook: the Variables' gradients, where the optimizer reads them."""
    optimizer._hand_over_grads()


def _taking_variables(torch_optimizer):
    cls = type(torch_optimizer.__name__, (_TakesVariables, torch_optimizer), {"__module__": __name__})
    cls.__doc__ = f"torch.optim.{torch_optimizer.__name__}, which also trains Variables (see teachgrad.optim)."
    return cls


Optimizer = _taking_variables(_torch_optim.Optimizer)   # subclass it to write an optimizer of your own
SGD = _taking_variables(_torch_optim.SGD)
Adam = _taking_variables(_torch_optim.Adam)
AdamW = _taking_variables(_torch_optim.AdamW)
Adagrad = _taking_variables(_torch_optim.Adagrad)
Adadelta = _taking_variables(_torch_optim.Adadelta)
Adamax = _taking_variables(_torch_optim.Adamax)
Adafactor = _taking_variables(_torch_optim.Adafactor)
ASGD = _taking_variables(_torch_optim.ASGD)
LBFGS = _taking_variables(_torch_optim.LBFGS)
NAdam = _taking_variables(_torch_optim.NAdam)
RAdam = _taking_variables(_torch_optim.RAdam)
RMSprop = _taking_variables(_torch_optim.RMSprop)
Rprop = _taking_variables(_torch_optim.Rprop)
SparseAdam = _taking_variables(_torch_optim.SparseAdam)
Muon = _taking_variables(_torch_optim.Muon)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "Adafactor", "ASGD", "LBFGS", "NAdam",
           "RAdam", "RMSprop", "Rprop", "SparseAdam", "Muon", "lr_scheduler", "swa_utils"]
