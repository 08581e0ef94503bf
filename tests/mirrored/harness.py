"""Run a scenario under torch and under teachgrad, and compare what it returns.

A scenario is a function of ours whose one parameter is named `torch`, so `torch.tensor(...)` in its body
means torch's under torch and teachgrad's under teachgrad. Each test module's scenarios check the behaviour a
piece of well-known teaching material or test suite checks (the module names which), written here in our own
code; the literal texts are run by scripts/whole_programs.py from fetched snapshots, outside this repository.
A scenario returns what it looked at. Both runs start from the same random seed.

What is compared, recursively through tuples, lists and dicts:
- tensors: values (NaN equal to NaN), dtype, shape, `requires_grad`, node name
  (`type(t.grad_fn).__name__`); where torch gives a tensor, teachgrad must give a Variable
  (not the plain torch tensor underneath);
- graph nodes: their type's name; dtypes, sizes, numbers, strings, None;
- an exception the scenario raises (or `caught` records): its type's name and its message.
"""
import math
import warnings

import pytest
import torch as real_torch

import teachgrad

STRICT = True   # a plain torch tensor where torch gives a Tensor is a difference too
BACKENDS = {"torch": real_torch, "teachgrad": teachgrad}


def caught(fn):
    """Call `fn()`; return ("raised", type name, message) if it raised, else ("returned", result)."""
    try:
        return ("returned", fn())
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return ("raised", type(e).__name__, str(e))


def run(snippet, module):
    real_torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = caught(lambda: snippet(module))
        finally:
            module.set_grad_enabled(True)   # a scenario may leave grad mode off
    return describe(result)


def _tensor_of(x):
    if isinstance(x, teachgrad.Variable):
        return x.data, x.requires_grad, x.grad_fn
    return x, x.requires_grad, x.grad_fn


def describe(x):
    """A structure of plain values (and torch tensors) that says everything compared about `x`."""
    if isinstance(x, (teachgrad.Variable, real_torch.Tensor)):
        data, requires_grad, grad_fn = _tensor_of(x)
        return ("tensor", data.detach().cpu(), data.dtype, tuple(data.shape), requires_grad,
                None if grad_fn is None else type(grad_fn).__name__, type(x) is real_torch.Tensor)
    if isinstance(x, real_torch.Size):
        return ("size", tuple(x))
    if isinstance(x, real_torch.dtype):
        return ("dtype", str(x))
    if isinstance(x, dict):
        return {k: describe(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return (type(x).__name__ if type(x) in (tuple, list) else "tuple", tuple(describe(v) for v in x))
    if x is None or isinstance(x, (bool, int, float, complex, str)):
        return x
    if hasattr(x, "next_functions") or type(x).__name__ in ("AccumulateGrad",):
        return ("node", type(x).__name__)
    return ("object", type(x).__name__)


def assert_same(ours, theirs, where="result"):
    """Assert two `describe` structures agree; the message says where they differ."""
    if isinstance(theirs, tuple) and theirs and theirs[0] == "tensor":
        assert isinstance(ours, tuple) and ours and ours[0] == "tensor", f"{where}: torch gave a tensor, teachgrad {ours!r}"
        _, t_data, t_dtype, t_shape, t_rg, t_fn, _ = theirs
        _, o_data, o_dtype, o_shape, o_rg, o_fn, o_plain = ours
        assert not STRICT or not o_plain, f"{where}: teachgrad gave a plain torch tensor, not a Variable"
        assert o_dtype == t_dtype, f"{where}: dtype {o_dtype} != torch's {t_dtype}"
        assert o_shape == t_shape, f"{where}: shape {o_shape} != torch's {t_shape}"
        assert o_rg == t_rg, f"{where}: requires_grad {o_rg} != torch's {t_rg}"
        assert o_fn == t_fn, f"{where}: grad_fn {o_fn} != torch's {t_fn}"
        real_torch.testing.assert_close(o_data, t_data, equal_nan=True, msg=lambda m: f"{where}: {m}")
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{where}: {ours!r} != {theirs!r}"
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
        return
    if isinstance(theirs, tuple) and len(theirs) == 2 and theirs[0] in ("tuple", "list"):
        assert isinstance(ours, tuple) and len(ours) == 2 and ours[0] in ("tuple", "list"), f"{where}: {ours!r} != {theirs!r}"
        assert len(ours[1]) == len(theirs[1]), f"{where}: length {len(ours[1])} != torch's {len(theirs[1])}"
        for i, (o, t) in enumerate(zip(ours[1], theirs[1])):
            assert_same(o, t, f"{where}[{i}]")
        return
    if isinstance(theirs, tuple) and theirs and theirs[0] == "raised":
        assert ours == theirs, f"{where}: teachgrad {ours!r}\n torch {theirs!r}"
        return
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), f"{where}: {ours!r} != {theirs!r}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same(o, t, f"{where}[{i}]")
        return
    if isinstance(theirs, float) and isinstance(ours, float):
        assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)) or math.isclose(ours, theirs, rel_tol=1e-5, abs_tol=1e-7), \
            f"{where}: {ours} != torch's {theirs}"
        return
    assert type(ours) is type(theirs) and ours == theirs, f"{where}: teachgrad {ours!r} != torch's {theirs!r}"


def check(snippet):
    """Run `snippet` with torch and with teachgrad; assert both give the same."""
    theirs = run(snippet, real_torch)
    ours = run(snippet, teachgrad)
    assert_same(ours, theirs)


def snippets(*functions, xfail=None):
    """pytest parameters, one per scenario; `xfail` maps a scenario's name to why it still fails."""
    xfail = xfail or {}
    params = []
    for fn in functions:
        fn.__test__ = False   # a scenario named test_... is not itself a pytest test
        marks = [pytest.mark.xfail(strict=True, reason=xfail[fn.__name__])] if fn.__name__ in xfail else []
        params.append(pytest.param(fn, id=fn.__name__, marks=marks))
    return params
