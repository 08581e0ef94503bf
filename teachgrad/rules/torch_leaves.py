"""torch tensors that require grad, as leaves of teachgrad's graph.

A learner brings torch with them: `torch.nn.Linear(3, 2)(x)` hands teachgrad's ops the module's
`nn.Parameter`s. Each such tensor is a leaf of teachgrad's graph, as it would be of torch's:

    lin = torch.nn.Linear(3, 2)
    loss = lin(x).sum()           # x a Variable: teachgrad records AddmmBackward0, with an edge
    loss.backward()               # to an AccumulateGrad for lin.weight and for lin.bias
    lin.weight.grad               # a plain torch tensor, as torch.optim expects it

Inside an op the tensor stands as a `TorchLeaf` (a Variable of its detached data, so torch's own
autograd records nothing inside teachgrad's ops; the class is at the end of teachgrad/core/variable.py); its
edge leads to the one `AccumulateGrad` node of that tensor, which adds the gradient into the tensor's
own `.grad` as torch's does: the first gradient stored (copied unless nobody else holds it), later
ones added in place.

Hooks registered through torch's `register_post_accumulate_grad_hook` run after the tensor's `.grad` is
filled, as torch's AccumulateGrad runs them (an optimizer step in backward, a data-parallel reducer).

What teachgrad cannot do as torch does, it refuses, saying why: a torch tensor computed by torch's
autograd (it has a grad_fn), a `.grad` that records a graph (create_graph=True), hooks registered on the
tensor through torch's `register_hook`, and a module run inside torch's own `DistributedDataParallel`
(its reducer waits on hooks in torch's engine, which never runs for teachgrad's graph: each process would
keep its own gradient; teachgrad.nn.parallel.DistributedDataParallel does the same work on teachgrad's engine).

Guarded by tests/test_torch_boundary.py (nn.Parameters' gradients, torch.optim, the refusals) and
tests/test_data_parallel.py (torch's DistributedDataParallel refused).
"""
import torch
from torch.nn.parallel import DistributedDataParallel as TorchDDP

from . import grad_layout, grad_mode
from . import variable_class

NOT_A_LEAF = (
    "a torch tensor that torch's autograd computed (grad_fn=<{}>) was passed to a teachgrad op: teachgrad takes "
    "torch tensors that require grad only as leaves of its graph (an nn.Parameter, torch.ones(2, requires_grad=True)), "
    "because its engine cannot run torch's graph. Compute this tensor with teachgrad instead (from the leaf itself), "
    "or pass tensor.detach() if no gradient should reach it"
)
CREATE_GRAPH = (
    "teachgrad cannot accumulate into a torch tensor's .grad with create_graph=True: torch would give that .grad a "
    "graph of torch's own, which teachgrad's engine does not build. Make this leaf a teachgrad Variable "
    "(tg.tensor(...) or tg.Variable(t.detach(), requires_grad=True)), or backward without create_graph"
)
TORCH_HOOKS = (
    "a hook was registered on this torch tensor through torch (Tensor.register_hook), and teachgrad's engine "
    "does not run torch's hooks: remove it (handle.remove()), or keep the leaf as a teachgrad Variable and "
    "register the hook there"
)
TORCH_DDP = (
    "torch.nn.parallel.DistributedDataParallel cannot train a model that runs on teachgrad: torch's reducer "
    "all-reduces gradients from hooks in torch's own autograd engine, which never runs for teachgrad's graph, so "
    "every process would silently keep its own gradient. Wrap the model in "
    "teachgrad.nn.parallel.DistributedDataParallel instead (the same arguments): it reduces on teachgrad's engine"
)

def leaf(tensor):
    """The Variable that stands for `tensor` (a torch tensor that requires grad) inside a teachgrad op."""
    if tensor.grad_fn is not None:
        raise RuntimeError(NOT_A_LEAF.format(tensor.grad_fn.name()))
    if TorchDDP._active_ddp_module is not None:   # inside torch's DDP forward (set by its _inside_ddp_forward)
        raise RuntimeError(TORCH_DDP)
    stand_in = variable_class.TorchLeaf._make(tensor.detach())   # shares storage and version counter: no copy
    stand_in._requires_grad = True
    stand_in.tensor = tensor
    return stand_in


def as_variable(tensor):
    """A torch tensor as a Variable: a TorchLeaf when it requires grad and grad mode is on, else a plain wrap."""
    if tensor.requires_grad:
        return leaf(tensor) if grad_mode.is_grad_enabled() else variable_class.Variable._make(tensor.detach())
    return variable_class.Variable._make(tensor)


def accumulate(tensor, grad, owned):
    """Add `grad` into `tensor.grad`, as torch's AccumulateGrad does outside create_graph.

    The first gradient is stored as it is when nobody else holds it and it is laid out as the tensor
    is; else it is copied into a tensor with the tensor's strides. Later gradients are added in place.
    """
    if grad_mode.is_grad_enabled():
        raise RuntimeError(CREATE_GRAPH)
    if not isinstance(grad, torch.Tensor):
        grad = grad.data   # a Variable (under a forward-mode level): its plain data
    current = tensor.grad
    if current is None:
        tensor.grad = grad_layout.first_grad(tensor, grad, owned)
    else:
        current += grad


def check_no_torch_hooks(tensor):
    """A torch leaf has no teachgrad hooks (None); hooks registered through torch's register_hook are refused."""
    if tensor._backward_hooks:
        raise RuntimeError(TORCH_HOOKS)
    return None


def call_post_accumulate_grad_hooks(tensor):
    """The hooks registered with torch's `tensor.register_post_accumulate_grad_hook`, each given the tensor once
    its `.grad` holds the new gradient, in the order they were registered; as torch, each must return None."""
    for hook in list(tensor._post_accumulate_grad_hooks.values()):
        if hook(tensor) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
