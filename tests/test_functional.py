"""tg.autograd.functional against torch.autograd.functional: values, return structures (tensor,
tuple, nested tuples or lists), create_graph, strict, and errors (type and message)."""
import pytest
import torch
import torch.autograd.functional as TAF

import teachgrad as tg
import teachgrad.autograd.functional as GAF

X = torch.tensor([0.3, -0.8, 1.2], dtype=torch.float64)
Y = torch.tensor([1.1, 0.4, -0.5], dtype=torch.float64)
V = torch.tensor([0.7, -1.3, 0.2], dtype=torch.float64)
S = torch.tensor(2.0, dtype=torch.float64)
M = torch.tensor([[0.5, -1.0], [2.0, 0.3], [0.1, 0.9]], dtype=torch.float64)


def one_out(a):
    return a.tanh() * 2


def two_in_two_out(a, b):
    return a * b.sin(), (a * b).sum()


def scalar(a):
    return (a.exp() * a).sum()


def scalar2(a, b):
    return (a * b.exp() + a * a * b).sum()


def matrix_out(a):
    return a.unsqueeze(1) * a.unsqueeze(0)


def linear(a):
    return a * 3


CALLS = {
    "vjp_one": lambda F: F.vjp(one_out, X, V),
    "vjp_scalar_default_v": lambda F: F.vjp(scalar, X),
    "vjp_tuple": lambda F: F.vjp(two_in_two_out, (X, Y), (V, S)),
    "vjp_create_graph": lambda F: F.vjp(one_out, X, V, create_graph=True),
    "jvp_one": lambda F: F.jvp(one_out, X, V),
    "jvp_tuple": lambda F: F.jvp(two_in_two_out, (X, Y), (V, Y)),
    "jvp_create_graph": lambda F: F.jvp(one_out, X, V, create_graph=True),
    "jacobian_one": lambda F: F.jacobian(one_out, X),
    "jacobian_matrix": lambda F: F.jacobian(matrix_out, X),
    "jacobian_tuple": lambda F: F.jacobian(two_in_two_out, (X, Y)),
    "jacobian_tuple_in": lambda F: F.jacobian(lambda a, b: a * b, (X, Y)),
    "jacobian_tuple_out": lambda F: F.jacobian(lambda a: (a * 2, a.sum()), X),
    "jacobian_create_graph": lambda F: F.jacobian(one_out, X, create_graph=True),
    "jacobian_vectorize": lambda F: F.jacobian(two_in_two_out, (X, Y), vectorize=True),
    "jacobian_forward": lambda F: F.jacobian(one_out, X, vectorize=True, strategy="forward-mode"),
    "jacobian_forward_tuple": lambda F: F.jacobian(two_in_two_out, (X, Y), vectorize=True, strategy="forward-mode"),
    "jacobian_forward_tuple_out": lambda F: F.jacobian(lambda a: (a * 2, a.sum()), X, vectorize=True,
                                                        strategy="forward-mode"),
    "jacobian_forward_mm": lambda F: F.jacobian(lambda a, m: a @ m, (X, M), vectorize=True, strategy="forward-mode"),
    "jacobian_unused_input": lambda F: F.jacobian(lambda a, b: a * 2, (X, Y)),
    "hessian_one": lambda F: F.hessian(scalar, X),
    "hessian_tuple": lambda F: F.hessian(scalar2, (X, Y)),
    "hessian_create_graph": lambda F: F.hessian(scalar, X, create_graph=True),
    "hessian_forward_over_reverse": lambda F: F.hessian(scalar, X, vectorize=True, outer_jacobian_strategy="forward-mode"),
    "hessian_forward_over_reverse_tuple": lambda F: F.hessian(scalar2, (X, Y), vectorize=True,
                                                              outer_jacobian_strategy="forward-mode"),
    "hvp_one": lambda F: F.hvp(scalar, X, V),
    "hvp_tuple": lambda F: F.hvp(scalar2, (X, Y), (V, Y)),
    "hvp_create_graph": lambda F: F.hvp(scalar, X, V, create_graph=True),
    "vhp_one": lambda F: F.vhp(scalar, X, V),
    "vhp_tuple": lambda F: F.vhp(scalar2, (X, Y), (V, Y)),
    "vhp_create_graph": lambda F: F.vhp(scalar, X, V, create_graph=True),
    "vhp_linear": lambda F: F.vhp(lambda a: linear(a).sum(), X, V),
}

ERRORS = {
    "vjp_v_missing": lambda F: F.vjp(one_out, X),
    "jvp_v_missing": lambda F: F.jvp(one_out, X),
    "hvp_v_missing": lambda F: F.hvp(scalar, X),
    "vjp_v_size": lambda F: F.vjp(one_out, X, torch.ones(2)),
    "jvp_v_size_tuple": lambda F: F.jvp(two_in_two_out, (X, Y), (V, torch.ones(2))),
    "jvp_v_length": lambda F: F.jvp(two_in_two_out, (X, Y), (V,)),
    "vjp_v_not_single": lambda F: F.vjp(one_out, X, (V, V)),
    "inputs_not_tensor": lambda F: F.jacobian(one_out, 3.0),
    "inputs_tuple_not_tensor": lambda F: F.jacobian(two_in_two_out, (X, 3.0)),
    "outputs_not_tensor": lambda F: F.vjp(lambda a: 3.0, X, V),
    "strategy": lambda F: F.jacobian(one_out, X, strategy="sideways"),
    "forward_without_vectorize": lambda F: F.jacobian(one_out, X, strategy="forward-mode"),
    "forward_create_graph": lambda F: F.jacobian(one_out, X, create_graph=True, strategy="forward-mode"),
    "forward_strict": lambda F: F.jacobian(one_out, X, strict=True, vectorize=True, strategy="forward-mode"),
    "vectorize_strict": lambda F: F.jacobian(one_out, X, strict=True, vectorize=True),
    "jacobian_strict_unused": lambda F: F.jacobian(lambda a, b: a * 2, (X, Y), strict=True),
    "vjp_strict_constant": lambda F: F.vjp(lambda a: torch.ones(3) if isinstance(a, torch.Tensor) else tg.ones(3), X, V,
                                          strict=True),
    "hessian_not_scalar": lambda F: F.hessian(one_out, X),
    "hessian_tuple_out": lambda F: F.hessian(lambda a: (a.sum(), a.sum()), X),
    "hessian_strategy": lambda F: F.hessian(scalar, X, outer_jacobian_strategy="sideways"),
    "hessian_strict_linear": lambda F: F.hessian(lambda a: linear(a).sum(), X, strict=True),
    "vhp_not_scalar": lambda F: F.vhp(one_out, X, V),
    "hvp_strict_linear": lambda F: F.hvp(lambda a: linear(a).sum(), X, V, strict=True),
    "jvp_strict_independent": lambda F: F.jvp(lambda a, b: a * 2, (X, Y), (V, V), strict=True),
}


def plain(value):
    """teachgrad's result in torch's terms, keeping tuples and lists apart."""
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return value.data if isinstance(value, tg.Variable) else value


def assert_same(ours, theirs, check_requires_grad=True):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, check_requires_grad)
        return
    assert isinstance(ours, tg.Variable)
    if check_requires_grad:
        assert ours.requires_grad == theirs.requires_grad
    torch.testing.assert_close(ours.data, theirs.detach())


# A known difference: teachgrad's tangents never record a graph (no reverse-over-forward), so the
# forward-over-reverse Hessian comes back detached where torch's still has a grad_fn.
TANGENTS_WITHOUT_GRAPH = {"hessian_forward_over_reverse", "hessian_forward_over_reverse_tuple"}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_matches_torch(name):
    assert_same(CALLS[name](GAF), CALLS[name](TAF), check_requires_grad=name not in TANGENTS_WITHOUT_GRAPH)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](TAF)
    with pytest.raises(Exception) as ours:
        ERRORS[name](GAF)
    assert ours.type is theirs.type
    assert str(ours.value) == str(theirs.value).replace("<class 'torch.Tensor'>", "<class 'teachgrad.core.variable.Variable'>")


def test_create_graph_results_can_be_differentiated_again():
    x = tg.Variable(X, requires_grad=True)
    xt = X.clone().requires_grad_()
    _, ours = GAF.vjp(scalar, x, create_graph=True)
    _, theirs = TAF.vjp(scalar, xt, create_graph=True)
    ours.sum().backward()
    theirs.sum().backward()
    torch.testing.assert_close(x.grad.data, xt.grad)


def test_reverse_and_forward_jacobians_agree_on_a_wide_and_a_tall_function():
    wide = lambda a: (a * a).sum(0, keepdim=True)                       # many inputs, one output  # noqa: E731
    tall = lambda a: (a.unsqueeze(0) * tg.Variable(torch.arange(1.0, 9.0, dtype=torch.float64)).unsqueeze(1)).sin()  # noqa: E731
    for f, x in ((wide, torch.rand(8, dtype=torch.float64)), (tall, torch.rand(2, dtype=torch.float64))):
        reverse = GAF.jacobian(f, x)
        forward = GAF.jacobian(f, x, vectorize=True, strategy="forward-mode")
        torch.testing.assert_close(reverse.data, forward.data)
