"""Forward mode under tg.func.vmap against torch.func: vmap(jvp), vmap(jacfwd), vmap(hessian), jacfwd/hessian/jvp of
a function that uses vmap, linearize under vmap, and dual tensors made outside vmap (a batched dual: the tangent
batched as the primal). teachgrad/features/vmap.py, features/forward_ad.py and func.py."""
import pytest
import torch

import teachgrad as tg
from tests.test_vmap import same

torch.manual_seed(3)
X = torch.randn(3, 4, dtype=torch.float64)
T = torch.randn(3, 4, dtype=torch.float64)
W = torch.randn(4, 5, dtype=torch.float64)
V = torch.randn(4, dtype=torch.float64)


def f(lib, a):
    return (a.sin() * a.sum()).exp() @ lib.as_tensor(W)


@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (None, 0)])
def test_vmap_of_jvp(in_dims):
    x = X if in_dims[0] == 0 else V
    t = T if in_dims[1] == 0 else V.cos()
    same(lambda lib: lib.func.vmap(lambda a, u: lib.func.jvp(lambda b: f(lib, b), (a,), (u,)), in_dims=in_dims)(
        lib.as_tensor(x), lib.as_tensor(t)))


def test_vmap_of_jvp_with_two_primals_and_aux():
    same(lambda lib: lib.func.vmap(lambda a, b: lib.func.jvp(lambda p, q: ((p * q).tanh(), p.sum()), (a, b),
                                                              (b, a), has_aux=True))(lib.as_tensor(X), lib.as_tensor(T)))


def test_vmap_of_jacfwd_and_hessian():
    same(lambda lib: lib.func.vmap(lib.func.jacfwd(lambda a: f(lib, a)))(lib.as_tensor(X)))
    same(lambda lib: lib.func.vmap(lib.func.jacfwd(lambda a, b: (a * b).exp(), argnums=(0, 1)), in_dims=(0, None))(
        lib.as_tensor(X), lib.as_tensor(V)))
    same(lambda lib: lib.func.vmap(lib.func.hessian(lambda a: (a.sin() * a.sum()).exp().sum()))(lib.as_tensor(X)))
    same(lambda lib: lib.func.vmap(lib.func.hessian(lambda a, w: (a @ w).tanh().sum()), in_dims=(0, None))(
        lib.as_tensor(X), lib.as_tensor(W)))


def test_transforms_of_a_function_that_uses_vmap():
    g = lambda lib: lib.func.vmap(lambda r: (r.sin() * r.sum()).exp())   # noqa: E731
    same(lambda lib: lib.func.jacfwd(g(lib))(lib.as_tensor(X)))
    same(lambda lib: lib.func.jvp(g(lib), (lib.as_tensor(X),), (lib.as_tensor(T),)))
    same(lambda lib: lib.func.hessian(lambda a: g(lib)(a).sum())(lib.as_tensor(X)))
    same(lambda lib: lib.func.jacrev(g(lib))(lib.as_tensor(X)))


def test_linearize_under_vmap():
    # linearized outside, its jvp_fn mapped over a batch of tangents
    same(lambda lib: lib.func.vmap(lib.func.linearize(lambda b: f(lib, b), lib.as_tensor(V))[1])(lib.as_tensor(T)))
    # linearized at a batched point: torch's make_fx meets make_dual's missing batching rule
    same(lambda lib: lib.func.vmap(lambda a, u: lib.func.linearize(lambda b: f(lib, b), a)[1](u))(
        lib.as_tensor(X), lib.as_tensor(T)))


def test_a_dual_made_outside_vmap_keeps_its_tangent_through_it():
    def run(lib):
        import importlib
        fwad = importlib.import_module(f"{lib.__name__}.autograd.forward_ad")
        with fwad.dual_level():
            x = fwad.make_dual(lib.as_tensor(X), lib.as_tensor(T))
            y = lib.func.vmap(lambda a, w: (a @ w).sin(), in_dims=(0, None))(x, lib.as_tensor(W))
            p, t = fwad.unpack_dual(y)
            return p, t
    same(run)


def test_make_dual_and_unpack_dual_inside_vmap():
    def run(lib):
        import importlib
        fwad = importlib.import_module(f"{lib.__name__}.autograd.forward_ad")

        def one(a, u):
            with fwad.dual_level():
                d = fwad.make_dual(a, u)
                p, t = fwad.unpack_dual((d * d.sum()).cos())
                return p, t
        return lib.func.vmap(one, in_dims=(0, None))(lib.as_tensor(X), lib.as_tensor(V))
    same(run)


def test_errors_of_jvp_under_vmap_as_torch():
    same(lambda lib: lib.func.vmap(lambda a: lib.func.jvp(lambda b: b.sin(), (a,), (a[:2],)))(lib.as_tensor(X)))
    same(lambda lib: lib.func.vmap(lambda a: lib.func.jvp(lambda b: b.sin(), [a], [a]))(lib.as_tensor(X)))
