"""An op declared once (issue 42): what an op's class line declares is what the package has, and torch's names.

`function=` names are torch functions and become `tg.<name>`; `method=` names are torch.Tensor methods and
become Variable's; `special=` names are torch.special's functions and become `tg.special.<name>`; `batching=` is
vmap's rule for the op (teachgrad/api/declared.py and
teachgrad/features/batching_rules.py read them; nothing else lists them).
"""
import inspect

import pytest
import torch

import teachgrad as tg
from teachgrad.core.function import DECLARED, Function
from teachgrad.features import batching_rules

NAMED = [op for op in DECLARED if op.function_names or op.method_names]


def test_ops_declare_names_and_kinds():
    assert len(NAMED) > 30 and len([op for op in DECLARED if op.batching]) > 100


@pytest.mark.parametrize("op", NAMED, ids=lambda op: op.__name__)
def test_declared_names_are_torchs_and_teachgrads(op):
    for name in op.function_names:
        assert callable(getattr(torch, name)), f"torch.{name}"
        assert getattr(tg, name) is getattr(tg, op.function_names[0])
    for name in op.method_names:
        assert callable(getattr(torch.Tensor, name)), f"torch.Tensor.{name}"
        assert inspect.isfunction(getattr(tg.Variable, name))


@pytest.mark.parametrize("op", NAMED, ids=lambda op: op.__name__)
def test_a_declared_function_records_the_op_torch_records(op):
    torch.manual_seed(0)
    arity = len([p for p in inspect.signature(getattr(tg, op.function_names[0]) if op.function_names
                                              else getattr(tg.Variable, op.method_names[0])).parameters.values()
                 if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD])   # (out= aside)
    shape = (4,) if op.__name__ == "Vdot" else (3, 3)   # (vdot takes vectors)
    data = [torch.rand(shape, dtype=torch.float64) * 3 - 1 for _ in range(arity)]   # (nan where torch's is too)
    ours = [tg.tensor(d, requires_grad=True) for d in data]
    theirs = [d.clone().requires_grad_() for d in data]
    for name in op.function_names:
        a, b = getattr(tg, name)(*ours), getattr(torch, name)(*theirs)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        torch.testing.assert_close(a.data, b.detach(), rtol=0, atol=0, equal_nan=True)
    for name in op.method_names:
        a, b = getattr(ours[0], name)(*ours[1:]), getattr(theirs[0], name)(*theirs[1:])
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        torch.testing.assert_close(a.data, b.detach(), rtol=0, atol=0, equal_nan=True)


SPECIAL = [op for op in DECLARED if op.special_names]


@pytest.mark.parametrize("op", SPECIAL, ids=lambda op: op.__name__)
def test_declared_special_names_are_torch_specials_and_record_its_op(op):
    """`special="i0e"` is `tg.special.i0e`, the same function as the op's `tg.` one where it has one, recording the
    node torch records for `torch.special.i0e`, with torch's values."""
    from teachgrad.api.declared import SPECIAL as made
    torch.manual_seed(0)
    for name in op.special_names:
        assert callable(getattr(torch.special, name)), f"torch.special.{name}"
        assert getattr(tg.special, name) is made[name] is made[op.special_names[0]]
        if op.function_names:
            assert made[name] is getattr(tg, op.function_names[0])
        arity = len([p for p in inspect.signature(made[name]).parameters.values()
                     if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD])   # (out= aside)
        data = [torch.rand(3, 3, dtype=torch.float64) * 3 - 1 for _ in range(arity)]
        a = made[name](*[tg.tensor(d, requires_grad=True) for d in data])
        b = getattr(torch.special, name)(*[d.clone().requires_grad_() for d in data])
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        torch.testing.assert_close(a.data, b.detach(), rtol=0, atol=0, equal_nan=True)


def test_every_declared_kind_is_a_batching_rule():
    for op in DECLARED:
        if op.batching:
            rule = batching_rules.RULES[op]
            assert (rule is batching_rules.pointwise if op.batching == "pointwise" else rule is batching_rules.matrices
                    if op.batching == "matrices" else rule.__qualname__.startswith("along"))


def test_one_op_one_place():
    """Issue 42's measure, read from the code by scripts/op_wiring.py: over all op classes, the files other than an
    op's own that name or wire it stay at a median of at most 2 and a 90th percentile of at most 4."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "scripts" / "op_wiring.py"
    spec = importlib.util.spec_from_file_location("op_wiring", path)
    op_wiring = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(op_wiring)
    counts = sorted(len(files) for files in op_wiring.wiring([op_wiring.File(p) for p in
                                                              sorted(op_wiring.PACKAGE.rglob("*.py"))]).values())
    assert len(counts) > 200
    assert counts[len(counts) // 2] <= 2 and counts[int(0.9 * len(counts))] <= 4, counts
    assert op_wiring.wiring([op_wiring.File(p) for p in sorted(op_wiring.PACKAGE.rglob("*.py"))])["Hypot"] == {}


LINEAR = [op for op in vars(tg.ops).values() if isinstance(op, type) and getattr(op, "linear", False)]


@pytest.mark.parametrize("name, call", [("neg", lambda x: -x), ("t", lambda x: x.t()), ("clone", lambda x: x.clone())])
def test_a_linear_ops_tangent_is_its_forward_of_the_tangent_as_torchs(name, call):
    """`linear=True` (Neg, T, Clone; Alias too): the tangent is the op applied to the tangent; recorded when the tangent
    requires grad (reverse over forward), with torch's node, and its gradient torch's."""
    def run(lib, fw):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=torch.float64, requires_grad=True)
        v = lib.tensor([[0.25, 1.0, -1.0], [2.0, -0.5, 3.0]], dtype=torch.float64, requires_grad=True)
        with fw.dual_level():
            tangent = fw.unpack_dual(call(fw.make_dual(x, v))).tangent
            (grad,) = lib.autograd.grad(tangent.sum(), v)
        return tangent.detach(), type(tangent.grad_fn).__name__, grad
    ours, theirs = run(tg, tg.autograd.forward_ad), run(torch, torch.autograd.forward_ad)
    torch.testing.assert_close(ours[0].data, theirs[0], rtol=0, atol=0)
    assert ours[1] == theirs[1]
    torch.testing.assert_close(ours[2].data, theirs[2], rtol=0, atol=0)


def test_linear_ops_are_declared_and_a_jvp_beside_linear_is_refused():
    assert {op.__name__ for op in LINEAR} >= {"Neg", "T", "Clone", "Alias"}
    with pytest.raises(TypeError, match="linear=True and a jvp"):
        class Twice(Function, linear=True):
            @staticmethod
            def jvp(ctx, t):
                return 2 * t


IN_PLACE = [(op, name + "_") for op in NAMED for name in op.method_names if hasattr(torch.Tensor, name + "_")]


def _declared_inputs(op):
    """Inputs in (-1, 2) (nan where torch's is too), vectors for vdot."""
    torch.manual_seed(0)
    arity = len([p for p in inspect.signature(op.forward).parameters.values()
                 if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]) - 1
    shape = (4,) if op.__name__ == "Vdot" else (3, 3)
    return [torch.rand(shape, dtype=torch.float64) * 3 - 1 for _ in range(arity)]


@pytest.mark.parametrize("op, name", IN_PLACE, ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_a_declared_ops_in_place_twin_records_torchs_node_and_gradient(op, name):
    """x.tan_() on a Variable that requires grad: torch's node (TanBackward0) takes over x's history, the gradient
    reaches the leaf as torch's does; on a leaf, torch's refusal."""
    data = _declared_inputs(op)
    results, errors = {}, {}
    for lib in (torch, tg):
        leaves = [lib.tensor(d.clone(), requires_grad=True) for d in data]
        x = leaves[0] * 1                       # a non-leaf: its history is what the write takes over
        out = getattr(x, name)(*leaves[1:])
        assert out is x
        try:                             # (torch refuses some: AtanhBackward1, igamma's input)
            (x * x).sum().backward()
            error = None
        except NotImplementedError as caught:
            error = str(caught)
        errors[lib] = error
        results[lib] = (x.grad_fn.name(), x.detach(), [leaf.grad for leaf in leaves], x._version)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            getattr(lib.tensor(data[0].clone(), requires_grad=True), name)(*leaves[1:])
    ours, theirs = results[tg], results[torch]
    assert errors[tg] == errors[torch]
    assert (errors[torch] is not None) == (not op.in_place_derivative or op.__name__ in ("Igamma", "Igammac"))
    assert ours[0] == theirs[0] and ours[3] == theirs[3]
    torch.testing.assert_close(ours[1].data, theirs[1], rtol=0, atol=0, equal_nan=True)
    for a, b in zip(ours[2], theirs[2]):   # (the formulas' round-off as the out-of-place twins': a few ulps)
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(a.data, b, equal_nan=True)


FUNCTIONS_WITH_OUT = [(op, name) for op in NAMED for name in op.function_names if op.out_variant]


def test_a_declared_function_takes_out_where_torchs_does():
    """out_variant= in the class line says what torch's own signature says (torch.overrides' table of them)."""
    signatures = torch.overrides.get_testing_overrides()
    for op in NAMED:
        for name in op.function_names:
            torchs = "out" in inspect.signature(signatures[getattr(torch, name)]).parameters
            assert ("out" in inspect.signature(getattr(tg, name)).parameters) == torchs == op.out_variant, name


@pytest.mark.parametrize("op, name", FUNCTIONS_WITH_OUT, ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_a_declared_function_takes_out_as_torchs(op, name):
    """tg.tan(x, out=y): torch's values written into y (y returned) where nothing requires grad; torch's refusal
    where an argument does, since out= records no gradient."""
    data = _declared_inputs(op)
    expected = getattr(torch, name)(*data)
    out = tg.zeros(expected.shape, dtype=torch.float64)
    version = out._version
    assert getattr(tg, name)(*[tg.tensor(d) for d in data], out=out) is out
    torch.testing.assert_close(out.data, expected, rtol=0, atol=0, equal_nan=True)
    assert out._version > version
    messages = []
    for lib in (torch, tg):
        inputs = [lib.tensor(d, requires_grad=True) for d in data]
        with pytest.raises(RuntimeError) as caught:
            getattr(lib, name)(*inputs, out=lib.zeros(expected.shape, dtype=torch.float64))
        messages.append(str(caught.value))
        with lib.no_grad():
            out = lib.zeros(expected.shape, dtype=torch.float64)
            getattr(lib, name)(*inputs, out=out)
        torch.testing.assert_close(out.data if lib is tg else out, expected, rtol=0, atol=0, equal_nan=True)
    assert messages[1] == messages[0] and "functions with out=... arguments don't support automatic" in messages[0]
