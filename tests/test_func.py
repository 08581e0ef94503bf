"""tg.func against torch.func: values, tangents, gradients, return structures, and errors (type and message).

Each twin test runs the same lines with `lib` bound to torch and to teachgrad (tests/twins.py)."""
import warnings

import pytest
import torch

import teachgrad as tg
from tests.twins import same


def _x(lib):
    return lib.tensor([0.5, -1.0, 2.0], dtype=torch.float64)


def _close(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b)
    elif isinstance(theirs, dict):
        assert ours.keys() == theirs.keys()
        for k in theirs:
            _close(ours[k], theirs[k])
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, (tg.Variable, torch.Tensor)) and ours.requires_grad == theirs.requires_grad
        torch.testing.assert_close(ours.data, theirs.detach())
    else:
        assert ours == theirs


def close_twins(program):
    _close(program(tg), program(torch))


# --- grad, grad_and_value -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.grad(lambda x: (x ** 3).sum())(x),
    lambda lib, x: lib.func.grad(lambda x: (x ** 3).sum())(x.requires_grad_()),
    lambda lib, x: lib.func.grad(lambda a, b: (a * b.sin()).sum(), argnums=1)(x, x * 2),
    lambda lib, x: lib.func.grad(lambda a, b: (a * b.sin()).sum(), argnums=(0, 1))(x, x * 2),
    lambda lib, x: lib.func.grad(lambda a, b: (a * b).sum(), argnums=-1)(x, x + 1),
    lambda lib, x: lib.func.grad(lambda d: (d["w"] * d["v"][0]).sum())({"w": x, "v": [x * 3, x]}),
    lambda lib, x: lib.func.grad(lambda x: ((x ** 2).sum(), x * 2), has_aux=True)(x),
    lambda lib, x: lib.func.grad_and_value(lambda x: x.exp().sum())(x),
    lambda lib, x: lib.func.grad_and_value(lambda x: (x.exp().sum(), {"a": x}), has_aux=True)(x),
    lambda lib, x: lib.func.grad(lambda x: lib.tensor(1.0, dtype=torch.float64))(x),       # independent: zeros
    lambda lib, x: lib.func.grad(lib.func.grad(lambda x: x.sin()))(x[1]),                   # grad of grad
    lambda lib, x: lib.func.grad(lambda x: lib.func.grad(lambda y: (y * x * y).sum())(x).sum())(x),
    lambda lib, x: lib.func.grad(lambda y: lib.func.grad(lambda z: (z * y).sum())(lib.ones(3, dtype=torch.float64)).sum())(x),
])
def test_grad_matches_torch(call):
    close_twins(lambda lib: call(lib, _x(lib)))


def test_grad_under_no_grad_does_not_require_grad_as_torchs():
    def program(lib):
        x = _x(lib).requires_grad_()
        with lib.no_grad():
            g = lib.func.grad(lambda x: (x ** 3).sum())(x)
        return g, g.requires_grad
    close_twins(program)


def test_grad_of_a_function_of_a_parameter_keeps_the_parameter_in_the_graph():
    def program(lib):
        w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
        g = lib.func.grad(lambda x: (x * x * w).sum())(_x(lib))
        g.sum().backward()
        return g, w.grad
    close_twins(program)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.grad(lambda x: x * 2)(x),
    lambda lib, x: lib.func.grad(lambda x: 3.0)(x),
    lambda lib, x: lib.func.grad(lambda x: (x.sum(), 1, 2), has_aux=True)(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum())(3.0),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=2)(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=-2)(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=(0, 0))(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=())(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=[0])(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=(0.5,))(x),
])
def test_grad_errors_match_torch(call):
    same(lambda lib: call(lib, _x(lib)))


def test_grad_matches_finite_differences():
    f = lambda x: (x.sin() * x.exp()).sum()   # noqa: E731
    x = tg.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    g = tg.func.grad(f)(x)
    eps = 1e-6
    for i in range(3):
        e = torch.zeros(3, dtype=torch.float64)
        e[i] = eps
        numeric = (f(x + e).item() - f(x - e).item()) / (2 * eps)
        assert abs(g[i].item() - numeric) < 1e-6


# --- vjp ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: (lambda out, fn: (out, fn(lib.ones(3, dtype=torch.float64))))(*lib.func.vjp(lambda x: x.sin(), x)),
    lambda lib, x: (lambda out, fn: (out, fn(lib.ones(3, dtype=torch.float64))))(
        *lib.func.vjp(lambda x: x.sin(), x.requires_grad_())),
    lambda lib, x: (lambda out, fn: (out, fn((x, x * 2))))(*lib.func.vjp(lambda a, b: (a * b, a.exp()), x, x + 1)),
    lambda lib, x: (lambda out, fn: (out, fn({"y": x})))(*lib.func.vjp(lambda d: {"y": d[0] * d[1]}, [x, x * 3])),
    lambda lib, x: (lambda out, fn, aux: (out, fn(x), aux))(
        *lib.func.vjp(lambda x: (x ** 2, x.sum()), x, has_aux=True)),
    lambda lib, x: (lambda out, fn: fn(x))(*lib.func.vjp(lambda x: (x, x * 2), x)),                 # wrong structure
    lambda lib, x: lib.func.vjp(lambda x: x.sum() > 0, x),                                          # bool output
    lambda lib, x: lib.func.vjp(lambda x: None, x),
    lambda lib, x: lib.func.vjp(lambda x: (x, 3), x),
    lambda lib, x: lib.func.vjp(lambda x: x, 2.0),
    lambda lib, x: lib.func.vjp(lambda x: x, x, has_aux=True),
])
def test_vjp_matches_torch(call):
    same(lambda lib: call(lib, _x(lib)))
    close_twins(lambda lib: _safe(call, lib))


def _safe(call, lib):
    try:
        return call(lib, _x(lib))
    except Exception as e:  # noqa: BLE001 - compared by `same` above
        return type(e).__name__


# --- jvp ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.jvp(lambda x: x.sin() * x, (x,), (lib.ones(3, dtype=torch.float64),)),
    lambda lib, x: lib.func.jvp(lambda a, b: a ** 2 + b ** 2, (x, x * 2), (x, lib.ones(3, dtype=torch.float64))),
    lambda lib, x: lib.func.jvp(lambda a: (a.exp(), {"s": a.sum()}), (x,), (x,)),
    lambda lib, x: lib.func.jvp(lambda a: (a * 2, a.sum()), (x,), (x,), has_aux=True),
    lambda lib, x: lib.func.jvp(lambda d: d["a"] * d["b"], ({"a": x, "b": x + 1},), ({"a": x, "b": x},)),
    lambda lib, x: lib.func.jvp(lambda a: lib.ones(2, dtype=torch.float64), (x,), (x,)),          # zeros tangent
    lambda lib, x: lib.func.jvp(lambda a: a.sin(), (x.requires_grad_(),), (x.detach(),)),         # tangent recorded
    lambda lib, x: lib.func.jvp(lib.func.grad(lambda a: (a.sin() * a).sum()), (x,), (lib.ones(3, dtype=torch.float64),)),
    lambda lib, x: lib.func.grad(lambda a: lib.func.jvp(lambda b: (b ** 3).sum(), (a,), (lib.ones(3, dtype=torch.float64),))[1])(x),
])
def test_jvp_matches_torch(call):
    close_twins(lambda lib: call(lib, _x(lib)))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.jvp(lambda a: a, x, x),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x, x)),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), [x]),
    lambda lib, x: lib.func.jvp(lambda a: a, (), ()),
    lambda lib, x: lib.func.jvp(lambda a: a, (2.0,), (1.0,)),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), (1.0,)),
    lambda lib, x: lib.func.jvp(lambda a: 3, (x,), (x,)),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x,), has_aux=True),
    lambda lib, x: lib.func.jvp(lambda a: lib.ones(1, dtype=torch.float64), (x,), (x,), strict=True),
    lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x[:2],)),
])
def test_jvp_errors_match_torch(call):
    same(lambda lib: call(lib, _x(lib)))


def test_jvp_inside_jvp_is_refused_clearly():
    x = _x(tg)
    inner = lambda a: tg.func.jvp(lambda b: b.sin(), (a,), (a,))[1]   # noqa: E731
    with pytest.raises(NotImplementedError, match="teachgrad does not nest jvp"):
        tg.func.jvp(inner, (x,), (x,))
    assert tg.func.jvp(lambda a: a * 2, (x,), (x,))[1].tolist() == [1.0, -2.0, 4.0]   # and the next jvp runs


def test_jvp_matches_finite_differences():
    f = lambda x: x.sin() * x.exp()   # noqa: E731
    x = tg.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    v = tg.tensor([1.0, 0.5, -2.0], dtype=torch.float64)
    eps = 1e-6
    numeric = (f(x + eps * v).data - f(x - eps * v).data) / (2 * eps)
    torch.testing.assert_close(tg.func.jvp(f, (x,), (v,))[1].data, numeric)


# --- jacrev, jacfwd, hessian --------------------------------------------------------------------------------------

@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("call", [
    lambda lib, jac, x: jac(lambda x: x.sin() * x[0])(x),
    lambda lib, jac, x: jac(lambda a, b: a * b, argnums=(0, 1))(x, x * 2),
    lambda lib, jac, x: jac(lambda a, b: (a * b, (a ** 2).sum()), argnums=1)(x, x.reshape(3, 1)),
    lambda lib, jac, x: jac(lambda a: (a.exp(), a.sum()), has_aux=True)(x),
    lambda lib, jac, x: jac(lambda a: a.sum())(x),
])
def test_jacobians_match_torch(transform, call):
    close_twins(lambda lib: call(lib, getattr(lib.func, transform), _x(lib)))


def test_hessian_matches_torch():
    close_twins(lambda lib: (lib.func.hessian(lambda x: (x.sin() * x ** 2).sum())(_x(lib)),
                             lib.func.hessian(lambda a, b: (a * b * a).sum(), argnums=(0, 1))(_x(lib), _x(lib) + 1)))


# --- functional_call ------------------------------------------------------------------------------------------------

def _model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    return model.eval()


def test_functional_call_matches_torch_and_restores_the_module():
    def program(lib):
        model = _model()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        params = {k: lib.tensor(v.detach().numpy() * 2, requires_grad=True) for k, v in model.named_parameters()}
        x = lib.randn(5, 3, generator=torch.Generator().manual_seed(1))
        out = lib.func.functional_call(model, params, (x,))
        out.sum().backward()
        restored = all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
        kinds = [type(p).__name__ for p in model.parameters()]
        return out, {k: v.grad for k, v in params.items()}, restored, kinds
    close_twins(program)


def test_functional_call_with_dual_parameters_gives_torchs_tangent():
    """The tutorial's 'functional Module API' cell."""
    def program(lib):
        torch.manual_seed(0)
        model = torch.nn.Linear(5, 5)
        gen = torch.Generator().manual_seed(0)
        params = {n: p for n, p in model.named_parameters()}
        tangents = {n: torch.rand(p.shape, generator=gen) for n, p in params.items()}
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            duals = {n: fw.make_dual(p, tangents[n]) for n, p in params.items()}
            out = lib.func.functional_call(model, duals, torch.randn(16, 5, generator=gen))
            primal, tangent = fw.unpack_dual(out)
            return primal, tangent, tangent.requires_grad
    close_twins(program)


@pytest.mark.parametrize("call", [
    lambda lib, m, x: lib.func.functional_call(m, [{"0.weight": m[0].weight.detach() * 0}, {"3.bias": m[3].bias.detach() * 0}], x),
    lambda lib, m, x: lib.func.functional_call(m, {"0.weight": m[0].weight.detach() * 0}, args=(x,), kwargs={}),
    lambda lib, m, x: lib.func.functional_call(m, {"extra": x}, (x,), strict=False),
    lambda lib, m, x: lib.func.functional_call(m, {"0.weight": m[0].weight}, (x,), strict=True),
    lambda lib, m, x: lib.func.functional_call(m, {"0.weight": m[0].weight, "nope": x}, (x,), strict=True),
    lambda lib, m, x: lib.func.functional_call(m, [{"0.bias": x}, {"0.bias": x}], (x,)),
    lambda lib, m, x: lib.func.functional_call(m, [{"0.bias": x}, 3], (x,)),
    lambda lib, m, x: lib.func.functional_call(m, 3, (x,)),
])
def test_functional_call_forms_and_errors_match_torch(call):
    def program(lib):
        m = _model()
        return call(lib, m, lib.randn(5, 3, generator=torch.Generator().manual_seed(1)))
    same(program)


def test_functional_call_with_tied_weights_matches_torch():
    def program(lib, tie):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(2, 2, bias=False), torch.nn.Linear(2, 2, bias=False))
        m[1].weight = m[0].weight
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        return lib.func.functional_call(m, {"0.weight": w}, lib.ones(1, 2), tie_weights=tie)
    for tie in (True, False):
        _close(program(tg, tie), program(torch, tie))


# --- what teachgrad does not rebuild, and the namespaces ------------------------------------------------------------

@pytest.mark.parametrize("name", ["functionalize", "stack_module_state",
                                  "debug_unwrap"])
def test_transforms_not_rebuilt_are_refused_by_name(name):
    with pytest.raises(NotImplementedError, match=f"teachgrad does not rebuild torch.func.{name}"):
        getattr(tg.func, name)


def test_func_has_each_name_torch_func_has():
    import teachgrad.func
    from teachgrad.func import functional_call  # noqa: F401
    assert tg.func is teachgrad.func
    for name in torch.func.__all__:
        try:
            getattr(tg.func, name)
        except NotImplementedError:
            pass
    with pytest.raises(AttributeError):
        tg.func.no_such_thing


def test_functorch_shim_runs_the_tutorials_make_functional_with_buffers():
    import teachgrad.functorch as ft
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 5)
    x = torch.randn(16, 5)
    tangents = tuple(torch.rand_like(p) for p in model.parameters())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import functorch
        func_t, params_t, buffers_t = functorch.make_functional_with_buffers(model)
        theirs = functorch.jvp(lambda p: func_t(p, buffers_t, x), (params_t,), (tangents,))
    func, params, buffers = ft.make_functional_with_buffers(model)
    ours = ft.jvp(lambda p: func(p, buffers, x), (params,), (tangents,))
    _close(ours, theirs)
