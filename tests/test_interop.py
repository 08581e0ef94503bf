"""torch's own functions and Tensor methods called with Variables (teachgrad/api/interop.py).

A custom Function's backward gets Variables in a first-order pass (torch's gets tensors), so code that
calls torch's functions there (`torch.sigmoid(x)`) must keep working; where a graph must be recorded,
the call goes to teachgrad's op of the same name, and is refused clearly when there is none.
"""
import pytest
import torch

import teachgrad as tg
from tests.twins import same


def test_torch_functions_on_variables_that_need_no_graph_give_variables():
    x = tg.tensor([-1.0, 0.0, 2.0])
    for result, expected in [(torch.sigmoid(x), torch.sigmoid(x.data)),
                             (torch.cat([x.data, x]), torch.cat([x.data, x.data])),
                             (torch.nn.functional.softplus(x), torch.nn.functional.softplus(x.data)),
                             (x.cumsum(0), x.data.cumsum(0)),
                             (torch.where(x > 0, x, 0.0), torch.where(x.data > 0, x.data, 0.0))]:
        assert isinstance(result, tg.Variable) and not result.requires_grad
        assert torch.equal(result.data, expected)
    values, indices = torch.max(tg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
    assert isinstance(values, tg.Variable) and indices.tolist() == [1, 0]


def test_under_no_grad_torch_functions_run_on_variables_that_require_grad():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.no_grad():
        y = torch.exp(x)
    assert isinstance(y, tg.Variable) and not y.requires_grad


@pytest.mark.parametrize("expression", ["torch.sigmoid(x)", "torch.cat([plain, x])", "plain * x", "plain - x",
                                        "torch.nn.functional.relu(x)", "torch.where(plain > 1, x, plain)"])
def test_where_a_graph_is_needed_teachgrads_op_records_it(expression):
    """`torch` below is real torch in both runs: mixed code records as torch records it."""
    def snippet(lib):
        x = lib.tensor([0.5, 1.5, 2.5], requires_grad=True)
        plain = torch.tensor([1.0, 2.0, 3.0])
        y = eval(expression)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    same(snippet)


def test_an_op_teachgrad_cannot_record_is_refused_clearly():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="torch.renorm was called with a teachgrad Variable that requires grad"):
        torch.renorm(x[None], 2, 0, 1.0)
    with pytest.raises(TypeError, match="Tensor.renorm was called"):
        x[None].renorm(2, 0, 1.0)
    assert x.argmax().item() == 1 and torch.argmax(x).item() == 1   # integer results carry no gradient
    assert x.new_zeros(2).tolist() == [0.0, 0.0]


def test_an_unknown_attribute_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="'Variable' object has no attribute 'no_such_method'"):
        tg.ones(2).no_such_method
    with pytest.raises(AttributeError):
        tg.ones(2)._private_thing


def test_a_custom_backward_can_call_torch_functions_and_sees_what_torch_sees():
    """Written once with real torch inside backward: teachgrad's gets Variables there, torch's tensors."""
    def snippet(lib):
        seen = []

        class Softplus(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.nn.functional.softplus(x)

            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                seen.append((x.requires_grad, grad_output.requires_grad, x.is_leaf))
                return torch.sigmoid(x) * grad_output

        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        Softplus.apply(x).sum().backward()
        return seen, x.grad
    same(snippet)


def test_variable_defines_no_getattr():
    """A class with __getattr__ loses CPython's fast attribute reads (every `v._data` in the engine):
    torch's extra methods are real methods instead."""
    assert "__getattr__" not in vars(tg.Variable)
    assert tg.Variable.renorm.__name__ == "renorm" and tg.Variable.renorm.runs_torchs
    # autograd's own methods are never torch's run on the data: teachgrad's, or none at all
    assert not getattr(tg.Variable.register_post_accumulate_grad_hook, "runs_torchs", False)
    assert not any(getattr(getattr(tg.Variable, name), "runs_torchs", False) for name in dir(tg.Variable)
                   if any(word in name for word in ("grad", "hook", "backward")))


def test_nodes_define_no_getattr():
    """The engine reads node attributes all the time, so node classes keep CPython's fast reads too:
    torch's `_saved_<name>` attributes are properties made for each node class."""
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    node = x.exp().grad_fn
    assert not any("__getattr__" in vars(klass) for klass in type(node).__mro__)
    assert isinstance(vars(type(node))["_saved_result"], property)
    assert torch.equal(node._saved_result.data, x.data.exp())
    with pytest.raises(AttributeError, match="'ExpBackward0' object has no attribute '_saved_nothing'"):
        node._saved_nothing


def test_the_table_of_torchs_methods_is_what_tensor_methods_leaves_out():
    """Every public torch.Tensor method a Variable has is written where grep finds it: recorded ones in
    teachgrad/api/tensor_methods.py, torch's own run on the data in the table of teachgrad/api/torch_methods.py."""
    from teachgrad.api.torch_methods import TORCH_METHODS, TorchMethods
    from teachgrad.core.variable import Variable
    written = {name for cls in Variable.__mro__ if cls not in (TorchMethods, object) for name in vars(cls)}
    public = {name for name in dir(torch.Tensor) if not name.startswith("_") and callable(getattr(torch.Tensor, name))
              and not any(word in name for word in ("grad", "hook", "backward"))}
    assert len(TORCH_METHODS) == len(set(TORCH_METHODS)), "a name twice"
    assert set(TORCH_METHODS) == public - written
