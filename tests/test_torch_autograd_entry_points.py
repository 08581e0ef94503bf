"""torch's own autograd entry points handed teachgrad Variables (issue 34): `torch.autograd.grad`,
`torch.autograd.backward`, `torch.autograd.gradcheck`, `torch.nn.Parameter`, a module's attributes,
`torch.nn.utils.clip_grad_norm_`, and the layout flags torch's code reads (`is_sparse`, ...).

`torch` below is real torch in both runs of a twin: a program that mixes the two gets torch's result, or a
clear error saying what teachgrad does not do.
"""
import warnings

import pytest
import torch

import teachgrad as tg
from tests.twins import same


def leaf(lib):
    return lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("use", [
    lambda x: torch.autograd.grad((x * x).sum(), x),
    lambda x: torch.autograd.grad((x * x).sum(), [x], create_graph=True)[0].grad_fn.name(),
    lambda x: torch.autograd.grad([(x * x).sum(), x.sum()], (x,), grad_outputs=[None, None], retain_graph=True),
    lambda x: torch.autograd.grad(x.exp(), x, torch.ones(3, dtype=torch.float64)),
    lambda x: torch.autograd.grad((x * 2).sum(), [x, x.detach()], allow_unused=True),
    lambda x: torch.autograd.grad((x * 2).sum(), [x, x.detach()], allow_unused=True, materialize_grads=True),
    lambda x: torch.autograd.grad((x * 2).sum(), [x, x.detach()]),                     # torch's error
    lambda x: torch.autograd.grad(x.sum(), x, only_inputs=True),
    lambda x: (torch.autograd.backward((x * x).sum()), x.grad),
    lambda x: (torch.autograd.backward([(x * x).sum(), x.sum()]), x.grad),
    lambda x: (torch.autograd.backward(x.exp(), grad_tensors=torch.ones(3, dtype=torch.float64)), x.grad),
    lambda x: (torch.autograd.backward((x * x).sum(), inputs=[x]), x.grad),
    lambda x: torch.autograd.backward(x.sum() * 0 + x.detach().sum()),                 # torch's error
    lambda x: torch.autograd.backward(x * 2),                                          # torch's error
], ids=["grad", "create_graph", "several", "grad_outputs", "allow_unused", "materialize", "unused-error",
        "only_inputs", "backward", "backward-several", "grad_tensors", "inputs", "no-grad-error", "non-scalar"])
def test_torch_autograd_grad_and_backward_run_teachgrads_engine(use):
    same(lambda lib: use(leaf(lib)))


def test_only_inputs_false_warns_as_torch():
    def snippet(lib):
        x = leaf(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grads = torch.autograd.grad(x.sum(), x, only_inputs=False)
        return grads, [str(w.message) for w in caught]
    same(snippet)


def test_is_grads_batched_runs_on_teachgrads_engine():
    """torch.autograd.grad(..., is_grads_batched=True) given Variables: one gradient per batch element, as torch's."""
    def snippet(lib):
        x = leaf(lib)
        return torch.autograd.grad(x * x, x, torch.eye(3, dtype=torch.float64), is_grads_batched=True)
    same(snippet)


def test_torch_autograd_grad_hands_every_argument_on_by_name():
    """allow_unused and materialize_grads reach teachgrad's grad as themselves (grad's arguments are in torch's
    order, with only_inputs and is_grads_batched among them)."""
    def snippet(lib):
        x, unused = leaf(lib), leaf(lib)
        return torch.autograd.grad((x * 2).sum(), (x, unused), allow_unused=True, materialize_grads=True)
    same(snippet)


@pytest.mark.parametrize("function", [lambda a: (a * a).sum(), lambda a: a.exp() * a, lambda a: (a.sin(), a ** 3)],
                         ids=["sum", "exp", "two-outputs"])
def test_torch_gradcheck_of_a_teachgrad_function_is_refused_clearly_and_teachgrads_checks_it(function):
    """torch's gradcheck perturbs the inputs through `.data` and relies on torch's `.data` having a version counter
    of its own; a Variable's `.data` is the tensor itself (docs/differences-from-torch.md), so the saved tensors
    would see the perturbation. The refusal says so and names teachgrad's gradcheck, which gives torch's answer."""
    with pytest.raises(RuntimeError, match=r"torch\.autograd\.gradcheck cannot check a teachgrad function.*"
                                           r"tg\.autograd\.gradcheck"):
        torch.autograd.gradcheck(function, (leaf(tg),))
    assert tg.autograd.gradcheck(function, (leaf(tg),)) is torch.autograd.gradcheck(function, (leaf(torch),)) is True


def test_torch_gradcheck_of_a_function_that_saves_nothing_is_refused_too():
    """Nothing saved is perturbed here, but torch's gradcheck keeps only gradients that are torch tensors: its
    verdict would be a wrong "Jacobian mismatch"."""
    function = lambda a: (a + 1).sum() * 2   # noqa: E731
    with pytest.raises(RuntimeError, match=r"torch\.autograd\.gradcheck cannot check a teachgrad function"):
        torch.autograd.gradcheck(function, (leaf(tg),))
    assert tg.autograd.gradcheck(function, (leaf(tg),)) is True


@pytest.mark.parametrize("flag", ["is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn", "is_nested", "layout",
                                  "is_cpu", "is_mps", "is_xpu"])
def test_layout_flags(flag):
    same(lambda lib: getattr(leaf(lib), flag))


def test_torch_parameter_of_a_variable_is_refused_clearly():
    """torch's Parameter would hand back the Variable itself, which no module registers: a parameter silently
    left out of model.parameters(). teachgrad's Parameter (a torch Parameter sharing the storage) is the way."""
    x = leaf(tg)
    with pytest.raises(TypeError, match=r"torch\.nn\.Parameter.*tg\.nn\.Parameter"):
        torch.nn.Parameter(x)
    p = tg.nn.Parameter(x)
    module = torch.nn.Module()
    module.w = p
    assert [name for name, _ in module.named_parameters()] == ["w"] and p.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("use", [
    lambda lib, m, x: setattr(m, "weight", x),                          # a parameter's place: torch's refusal
    lambda lib, m, x: m.register_parameter("p", x),
    lambda lib, m, x: (setattr(m, "extra", x), m.extra, [n for n, _ in m.named_parameters()]),   # a plain attribute
], ids=["parameter", "register_parameter", "plain-attribute"])
def test_module_attribute_set_to_a_variable(use):
    def snippet(lib):
        torch.manual_seed(0)
        return use(lib, torch.nn.Linear(3, 2, dtype=torch.float64), leaf(lib))
    ours, theirs = _outcome(snippet, tg), _outcome(snippet, torch)
    if ours[0] == "raised":   # torch names a tensor's type 'torch.DoubleTensor', a Variable's by its class
        assert ours[1][0] is theirs[1][0]
        assert ours[1][1] == theirs[1][1].replace("torch.DoubleTensor", "teachgrad.core.variable.Variable")
    else:
        same(snippet)


def _outcome(snippet, lib):
    from tests.twins import outcome
    return outcome(snippet, lib)


def test_torch_clip_grad_norm_over_parameters_whose_grads_came_from_teachgrad():
    def snippet(lib):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2, dtype=torch.float64)
        x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], dtype=lib.float64)
        (model(x) ** 2).sum().backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        value = torch.nn.utils.clip_grad_value_(model.parameters(), 0.1)
        return norm, value, [p.grad for p in model.parameters()]
    same(snippet)

