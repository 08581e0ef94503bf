"""tg.func.vmap against torch.func.vmap: per-op batching rules, in_dims/out_dims, nesting, randomness, chunks,
composed transforms (per-sample gradients), and the errors (torch's type and message; an op without a batching
rule named). teachgrad/features/vmap.py, batching_rules.py, batched_variable.py and rules/batching.py."""
import pytest
import torch
from hypothesis import given, settings, strategies as st

import teachgrad as tg
from tests.twins import outcome


def _near(a, b):
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        if len(a) == 4 and a[0] == "tensor" == b[0]:   # ("tensor", dtype, shape, values): values to the last bits
            return a[1:3] == b[1:3] and torch.allclose(torch.tensor(a[3], dtype=torch.float64),
                                                       torch.tensor(b[3], dtype=torch.float64), atol=1e-12, equal_nan=True)
        return all(_near(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_near(a[k], b[k]) for k in a)
    return a == b


def same(snippet):
    """As tests/twins.py's `same`, values compared to 1e-12 (a batched kernel may round the last bit otherwise)."""
    ours, theirs = outcome(snippet, tg), outcome(snippet, torch)
    assert _near(ours, theirs), f"teachgrad: {ours}\n    torch: {theirs}"

torch.manual_seed(0)
X = torch.randn(3, 4, dtype=torch.float64)
Y = torch.randn(3, 4, dtype=torch.float64)
W = torch.randn(4, 5, dtype=torch.float64)
V = torch.randn(4, dtype=torch.float64)
P = torch.rand(3, 4, dtype=torch.float64) + 0.5
M = torch.randn(3, 4, 5, dtype=torch.float64)


def close(ours, theirs):
    ours = ours.data if isinstance(ours, tg.Variable) else ours
    assert ours.shape == theirs.shape and torch.allclose(ours, theirs, atol=1e-12), (ours, theirs)


# --- ops, one family at a time: the values (and each example's gradient through grad) as torch's ---------------

ONE_ARG = {
    "sin": lambda lib, x: x.sin(), "exp": lambda lib, x: x.exp(), "tanh": lambda lib, x: lib.tanh(x),
    "sigmoid": lambda lib, x: x.sigmoid(), "relu": lambda lib, x: x.relu(), "abs": lambda lib, x: x.abs(),
    "neg": lambda lib, x: -x, "pow": lambda lib, x: x ** 3, "rpow": lambda lib, x: 2.0 ** x,
    "scalar_ops": lambda lib, x: (x * 2 + 1 - 0.5) / 3, "rsub": lambda lib, x: 1 - x,
    "clamp": lambda lib, x: x.clamp(-0.5, 0.5), "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x), "silu": lambda lib, x: lib.nn.functional.silu(x),
    "sum": lambda lib, x: x.sum(), "mean": lambda lib, x: x.mean(), "max": lambda lib, x: x.max(),
    "sum_dim": lambda lib, x: x.sum(0), "sum_neg_keep": lambda lib, x: x.sum(-1, keepdim=True),
    "mean_dim": lambda lib, x: x.mean(dim=1), "max_dim": lambda lib, x: x.max(dim=0)[0],
    "norm": lambda lib, x: x.norm(), "norm_dim": lambda lib, x: x.norm(dim=1),
    "var": lambda lib, x: x.var(), "std_dim": lambda lib, x: x.std(dim=0),
    "logsumexp": lambda lib, x: x.logsumexp(1), "cumsum": lambda lib, x: x.cumsum(0),
    "softmax": lambda lib, x: x.softmax(-1), "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, 0),
    "view": lambda lib, x: x.view(-1), "reshape": lambda lib, x: x.reshape(2, 2, 1),
    "t": lambda lib, x: x.t(), "transpose": lambda lib, x: x.transpose(0, 1), "permute": lambda lib, x: x.permute(1, 0),
    "T_reshape": lambda lib, x: x.t().reshape(-1), "unsqueeze": lambda lib, x: x.unsqueeze(-1),
    "squeeze": lambda lib, x: x.unsqueeze(0).squeeze(), "squeeze_dim": lambda lib, x: x.unsqueeze(1).squeeze(1),
    "squeeze_dims": lambda lib, x: x.unsqueeze(0).unsqueeze(2).squeeze((0, -2)),
    "expand": lambda lib, x: x.unsqueeze(0).expand(3, 2, 2), "select": lambda lib, x: x[1],
    "slice": lambda lib, x: x[:, 1:], "index": lambda lib, x: x[lib.tensor([1, 0, 1])],
    "flip": lambda lib, x: x.flip(0), "unbind": lambda lib, x: x.unbind(1)[0],
    "split": lambda lib, x: x.split(1, dim=1)[1], "diagonal": lambda lib, x: x.diagonal(),
    "cat": lambda lib, x: lib.cat([x, x * 2], dim=1), "stack": lambda lib, x: lib.stack([x, x.exp()], dim=-1),
    "where": lambda lib, x: lib.where(x > 0, x, x * 0.1), "masked_fill": lambda lib, x: x.masked_fill(x < 0, 0.0),
    "compare": lambda lib, x: (x > 0).float() * x,
    "tril": lambda lib, x: x.tril(), "triu": lambda lib, x: lib.triu(x, 1),
    "pad": lambda lib, x: lib.nn.functional.pad(x, (1, 2)), "repeat": lambda lib, x: x.repeat(2, 1, 3),
    "roll": lambda lib, x: x.roll(1, 0), "roll_flat": lambda lib, x: x.roll(1),
    "sort": lambda lib, x: x.sort(dim=1)[0], "topk": lambda lib, x: x.topk(1, dim=0)[0],
    "gather": lambda lib, x: x.gather(1, lib.tensor([[1, 0], [0, 0]])),
    "scatter_add": lambda lib, x: x.scatter_add(0, lib.tensor([[1, 0]]), x[:1] * 2),
    "masked_fill_tensor": lambda lib, x: x.masked_fill(x > 0.5, lib.tensor(0.25, dtype=torch.float64)),
}


@pytest.mark.parametrize("name", ONE_ARG)
def test_one_argument_ops(name):
    op = ONE_ARG[name]
    x = X.reshape(3, 2, 2)
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a))(lib.as_tensor(x)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: op(lib, a).sin().sum()))(lib.as_tensor(x)))


TWO_ARGS = {
    "add": lambda lib, a, b: a + b, "mul": lambda lib, a, b: a * b, "div": lambda lib, a, b: a / (b.abs() + 1),
    "sub": lambda lib, a, b: a - b, "maximum": lambda lib, a, b: lib.maximum(a, b),
    "pow_tensor": lambda lib, a, b: a.abs() ** b, "dot": lambda lib, a, b: lib.dot(a, b),
    "matmul": lambda lib, a, b: a @ b, "outer_broadcast": lambda lib, a, b: a.unsqueeze(1) * b,
    "mse": lambda lib, a, b: lib.nn.functional.mse_loss(a, b),
    "mse_none": lambda lib, a, b: lib.nn.functional.mse_loss(a, b, reduction="none"),
    "where2": lambda lib, a, b: lib.where(a > b, a, b),
}


@pytest.mark.parametrize("name", TWO_ARGS)
@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_two_argument_ops_and_in_dims(name, in_dims):
    op = TWO_ARGS[name]
    a = X.t() if in_dims[0] == 1 else X
    b = Y[0] if in_dims[1] is None else Y
    a = a[0] if in_dims[0] is None else a
    same(lambda lib: lib.func.vmap(lambda p, q: op(lib, p, q), in_dims=in_dims)(lib.tensor(a), lib.tensor(b)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda p, q: op(lib, p, q).sum(), argnums=(0, 1)),
                                   in_dims=in_dims)(lib.tensor(a), lib.tensor(b)))


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0)])
def test_matrix_products(in_dims):
    a = M if in_dims[0] == 0 else M[0]
    b = torch.randn(3, 5, 2, dtype=torch.float64) if in_dims[1] == 0 else torch.randn(5, 2, dtype=torch.float64)
    same(lambda lib: lib.func.vmap(lambda p, q: p @ q, in_dims=in_dims)(lib.tensor(a), lib.tensor(b)))
    same(lambda lib: lib.func.vmap(lambda p, q: lib.mm(p, q), in_dims=in_dims)(lib.tensor(a), lib.tensor(b)))
    same(lambda lib: lib.func.vmap(lambda p, q: p.mv(q[:, 0]), in_dims=in_dims)(lib.tensor(a), lib.tensor(b)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda p, q: (p @ q).tanh().sum(), argnums=(0, 1)),
                                   in_dims=in_dims)(lib.tensor(a), lib.tensor(b)))
    same(lambda lib: lib.func.vmap(lambda p: lib.nn.functional.linear(p, lib.tensor(W.t()), lib.tensor(W[0])),
                                   in_dims=0)(lib.tensor(X)))


def test_cross_entropy_and_nll_per_example():
    target = torch.tensor([1, 0, 3])
    for reduction in ("mean", "sum", "none"):
        same(lambda lib: lib.func.vmap(lambda x, t: lib.nn.functional.cross_entropy(x, t, reduction=reduction))(
            lib.tensor(X), lib.tensor(target)))
    batch_targets = torch.tensor([[1, 0], [3, 2], [0, 0]])
    same(lambda lib: lib.func.vmap(lambda x, t: lib.nn.functional.cross_entropy(x, t))(
        lib.tensor(M[:, :2, :]), lib.tensor(batch_targets)))


# --- in_dims, out_dims, nesting, chunks, what the function sees -------------------------------------------------

@pytest.mark.parametrize("out_dims", [0, 1, -1, (0, 1)])
def test_out_dims(out_dims):
    same(lambda lib: lib.func.vmap(lambda a: (a.sin(), a.sum(0, keepdim=True)), out_dims=out_dims)(lib.tensor(M)))


def test_nested_in_dims_and_unbatched_outputs():
    same(lambda lib: lib.func.vmap(lambda d: d["a"] * d["b"][0] + d["b"][1], in_dims=({"a": 0, "b": (None, 1)},))(
        {"a": lib.tensor(X), "b": (lib.tensor(V), lib.tensor(X.t()))}))
    same(lambda lib: lib.func.vmap(lambda a: lib.tensor(2.0))(lib.tensor(X)))
    same(lambda lib: lib.func.vmap(lambda a: (a * 2, 3), out_dims=(0, None))(lib.tensor(X)))


@pytest.mark.parametrize("name", ["sum", "mean", "softmax", "cumsum", "max", "logsumexp"])
def test_along_dim_0_of_a_scalar_example(name):
    ops = {"sum": lambda a: a.sum(0, keepdim=True), "mean": lambda a: a.mean(-1), "softmax": lambda a: a.softmax(0),
           "cumsum": lambda a: a.cumsum(0), "max": lambda a: a.max(0)[0], "logsumexp": lambda a: a.logsumexp(0)}
    same(lambda lib: lib.func.vmap(ops[name])(lib.tensor(V)))
    same(lambda lib: lib.func.vmap(lambda a: a.sum(1))(lib.tensor(V)))


def test_the_function_sees_one_example():
    same(lambda lib: lib.func.vmap(lambda a: lib.tensor(float(a.dim() * 100 + a.shape[0] * 10 + a.numel())))(
        lib.tensor(M)))
    same(lambda lib: lib.func.vmap(lambda a: a.new_zeros(a.size()) + len(a), in_dims=1)(lib.tensor(M)))


def test_nested_vmap():
    same(lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: (a * b).sum()), in_dims=(0, None))(
        lib.tensor(M), lib.tensor(X)))
    same(lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: lib.dot(a, b), in_dims=(None, 0)), in_dims=(0, None))(
        lib.tensor(X), lib.tensor(Y)))
    same(lambda lib: lib.func.vmap(lambda a: lib.func.vmap(lambda r: r * a.sum(), in_dims=1, out_dims=1)(a))(
        lib.tensor(M)))


@pytest.mark.parametrize("chunk_size", [1, 2, 5])
def test_chunk_size(chunk_size):
    same(lambda lib: lib.func.vmap(lambda a, b: (a * b).sum(-1), in_dims=(1, None), chunk_size=chunk_size)(
        lib.tensor(M), lib.tensor(W[:, 0])))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_hypothesis_shapes_and_in_dims(shape, data):
    in_dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    out_dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = torch.randn(*shape, dtype=torch.float64)
    y = torch.randn(shape[-1], dtype=torch.float64)
    same(lambda lib: lib.func.vmap(lambda a, b: (a * b).tanh() + a.sum(-1, keepdim=True), in_dims=(in_dim, None),
                                   out_dims=out_dim)(lib.as_tensor(x), lib.tensor(y[:1] if in_dim % len(shape) ==
                                                                              len(shape) - 1 else y)))


# --- composed with the other transforms --------------------------------------------------------------------------

def test_per_sample_gradients_of_an_mlp_with_functional_call():
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    xs, ys = torch.randn(5, 4, dtype=torch.float64), torch.tensor([0, 2, 1, 1, 0])
    params = {k: v.detach() for k, v in model.named_parameters()}

    def run(lib):
        def loss(p, x, y):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        ps = {k: lib.tensor(v) for k, v in params.items()}
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(ps, lib.tensor(xs), lib.tensor(ys))
    ours, theirs = run(tg), run(torch)
    for k in theirs:
        close(ours[k], theirs[k])
    # each example's gradient is that example's own (a loop of grad gives the same)
    for i in range(5):
        close(ours["0.weight"][i], torch.func.grad(lambda p: torch.nn.functional.cross_entropy(
            torch.func.functional_call(model, p, (xs[i:i + 1],)), ys[i:i + 1]))(params)["0.weight"])


def test_grad_of_vmap_and_vmap_of_vjp_hessian_and_jacobians():
    same(lambda lib: lib.func.grad(lambda a: lib.func.vmap(lambda r: (r.sin() * r).sum())(a).sum())(lib.tensor(X)))
    same(lambda lib: lib.func.vmap(lambda x, u: lib.func.vjp(lambda a: a.exp() * a.sum(), x)[1](u))(
        lib.tensor(X), lib.tensor(Y)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lib.func.grad(lambda a: (a ** 3).sum() if a.dim() == 0 else a)))(
        lib.tensor(X[0])))
    same(lambda lib: lib.func.vmap(lib.func.jacrev(lambda a: a.sin() * a.sum()))(lib.tensor(X)))
    same(lambda lib: lib.func.vmap(lib.func.jacrev(lambda a, b: (a * b).exp(), argnums=(0, 1)), in_dims=(0, None))(
        lib.tensor(X), lib.tensor(V)))


def test_backward_through_a_vmapped_function():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        lib.func.vmap(lambda a, w: (a @ w).tanh().sum(), in_dims=(0, None))(x, lib.tensor(W)).sum().backward()
        return x.grad
    same(run)


# --- randomness -----------------------------------------------------------------------------------------------

def test_random_ops_raise_in_error_mode():
    same(lambda lib: lib.func.vmap(lambda a: lib.nn.functional.dropout(a, 0.5))(lib.tensor(X)))


def test_randomness_different_and_same():
    x = tg.ones(6, 50, dtype=torch.float64)
    different = tg.func.vmap(lambda a: tg.nn.functional.dropout(a, 0.5), randomness="different")(x).data
    assert not all(torch.equal(different[0], different[i]) for i in range(1, 6))
    assert set(different.unique().tolist()) <= {0.0, 2.0}
    same_mask = tg.func.vmap(lambda a: tg.nn.functional.dropout(a, 0.5), randomness="same")(x).data
    assert all(torch.equal(same_mask[0], same_mask[i]) for i in range(1, 6))
    same(lambda lib: lib.func.vmap(torch.sin, randomness="bad")(lib.tensor(X)))


# --- errors: torch's type and message -----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.func.vmap(lib.sin, in_dims=2)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lib.sin, in_dims=-3)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lib.add)(lib.tensor(X), lib.tensor(M[:, 0, :].repeat(2, 1))),
    lambda lib: lib.func.vmap(lambda a: a.sum().item())(lib.tensor(X)),
    lambda lib: lib.func.vmap(lambda a: 1 if a.sum() > 0 else 0)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lib.sin, in_dims="a")(lib.tensor(X)),
    lambda lib: lib.func.vmap(lib.sin, in_dims=[0])(lib.tensor(X)),
    lambda lib: lib.func.vmap(lambda a: 3)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lambda a, b: a)(lib.tensor(X), 3),
    lambda lib: lib.func.vmap(lib.sin)(lib.tensor(1.0)),
    lambda lib: lib.func.vmap(lambda a: a, out_dims=None)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lib.sin, out_dims=2)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lib.sin, chunk_size=0)(lib.tensor(X)),
    lambda lib: lib.func.vmap(lambda a: a.sum(2))(lib.tensor(X)),
], ids=range(14))
def test_errors_as_torch(call):
    same(call)


def test_an_op_without_a_batching_rule_is_named():
    with pytest.raises(NotImplementedError, match="vmap: teachgrad has no batching rule for ConvolutionTranspose"):
        tg.func.vmap(lambda w: tg.nn.functional.conv_transpose1d(tg.tensor(M[:1]), w))(tg.ones(3, 4, 1, 2).double())
    with pytest.raises(NotImplementedError, match="no batching rule for Tensor.renorm"):   # (torch's, on the data)
        tg.func.vmap(lambda a: a.renorm(2, 0, 1.0))(tg.tensor(X))

    class Double(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    with pytest.raises(NotImplementedError, match="no batching rule for Double"):
        tg.func.vmap(Double.apply)(tg.tensor(X))


def test_outside_vmap_nothing_changes():
    from teachgrad.rules import batching
    tg.func.vmap(tg.sin)(tg.tensor(X))
    assert batching.vmap_depth == 0
    assert type(tg.tensor(X).sin()) is tg.Variable


def test_what_reads_the_data_keeps_the_batch_or_is_refused_by_name():
    idx = torch.tensor([[0, 1], [2, 1], [1, 1]])
    table = torch.randn(4, 3, dtype=torch.float64)
    same(lambda lib: lib.func.vmap(lambda j: lib.nn.functional.embedding(j, lib.tensor(table)))(lib.tensor(idx)))
    same(lambda lib: lib.func.vmap(lambda x: x.double().float().contiguous().to(torch.float64))(lib.tensor(X)))
    same(lambda lib: lib.func.vmap(lambda x: torch.sin(x) + x.new_zeros(4))(lib.tensor(X)))
    same(lambda lib: lib.func.vmap(lambda x: torch.nn.functional.linear(x, lib.tensor(W.t())))(lib.tensor(X)))
    with pytest.raises(NotImplementedError, match="no batching rule for IndexSelect with a batched argument"):
        tg.func.vmap(lambda j: tg.tensor(table).index_select(0, j))(tg.tensor(idx))
    with pytest.raises(NotImplementedError, match="no batching rule for torch.nn.functional.one_hot"):
        tg.func.vmap(lambda j: tg.nn.functional.one_hot(j, 4))(tg.tensor(idx))
    same(lambda lib: lib.func.vmap(lambda x, i: x.gather(0, i))(lib.tensor(X), lib.tensor([[1, 0], [3, 3], [0, 2]])))
    # tril of a 1-dim example: torch's vmap runs it on the physical (batch, n) matrix; teachgrad gives tril's own error
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        tg.func.vmap(lambda x: x.tril())(tg.tensor(X))


def test_random_factories_follow_randomness():
    same(lambda lib: lib.func.vmap(lambda x: lib.randn(4) + x)(lib.tensor(X)))
    out = tg.func.vmap(lambda x: tg.randn(4, dtype=torch.float64) + x * 0, randomness="same")(tg.tensor(X)).data
    assert all(torch.equal(out[0], out[i]) for i in range(3))


@pytest.mark.parametrize("write", [lambda a: a.clone().add_(1), lambda a: a.clone().zero_(),
                                   lambda a: a.clone().__setitem__(0, 5.0), lambda a: tg.zeros(4).add_(a),
                                   lambda a: tg.zeros(4).copy_(a), lambda a: tg.zeros(4).__setitem__(0, a[0])])
def test_in_place_writes_under_vmap_are_refused_by_name(write):
    with pytest.raises(NotImplementedError, match="vmap: teachgrad has no batching rules for in-place ops"):
        tg.func.vmap(write)(tg.tensor(X))


def test_nested_vmap_of_grad_with_an_unbatched_weight():
    xs = torch.randn(2, 3, 4, dtype=torch.float64)

    def run(lib):
        loss = lambda w, x: (x @ w).tanh().sum()   # noqa: E731
        inner = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))
        return lib.func.vmap(inner, in_dims=(None, 0))(lib.tensor(W), lib.tensor(xs))
    same(run)


# The element-wise ops added with torch's op database (teachgrad/ops/pointwise_math.py, activation_more.py): each
# under vmap and vmap(grad), inputs inside each op's domain.
MORE_POINTWISE = {
    "tan": lambda lib, x: (x * 0.5).tan(), "asin": lambda lib, x: (x.tanh() * 0.9).asin(),
    "acos": lambda lib, x: lib.acos(x.tanh() * 0.9), "atan": lambda lib, x: x.atan(), "sinh": lambda lib, x: x.sinh(),
    "cosh": lambda lib, x: x.cosh(), "asinh": lambda lib, x: x.asinh(), "acosh": lambda lib, x: (x.abs() + 1.5).acosh(),
    "atanh": lambda lib, x: (x.tanh() * 0.9).atanh(), "deg2rad": lambda lib, x: x.deg2rad(),
    "rad2deg": lambda lib, x: x.rad2deg(), "sinc": lambda lib, x: x.sinc(), "exp2": lambda lib, x: x.exp2(),
    "erfc": lambda lib, x: x.erfc(), "erfinv": lambda lib, x: (x.tanh() * 0.9).erfinv(),
    "lgamma": lambda lib, x: (x.abs() + 0.5).lgamma(), "digamma": lambda lib, x: (x.abs() + 0.5).digamma(),
    "polygamma": lambda lib, x: lib.polygamma(1, x.abs() + 0.5), "logit": lambda lib, x: x.sigmoid().logit(),
    "nan_to_num": lambda lib, x: (x / (x > 0)).nan_to_num(posinf=2.0),
    "frac": lambda lib, x: (x * 3).frac(), "ceil": lambda lib, x: x.ceil() * x, "floor": lambda lib, x: x.floor() + x,
    "trunc": lambda lib, x: x.trunc() + x, "round": lambda lib, x: x.round() + x,
    "round_decimals": lambda lib, x: x.round(decimals=1) + x, "sgn": lambda lib, x: x.sgn() * x,
    "atan2": lambda lib, x: lib.atan2(x, x.flip(-1) + 0.1), "hypot": lambda lib, x: lib.hypot(x, x.exp()),
    "logaddexp": lambda lib, x: lib.logaddexp(x, x * 2), "logaddexp2": lambda lib, x: lib.logaddexp2(x, -x),
    "fmod": lambda lib, x: lib.fmod(x * 3, x.abs() + 1), "remainder": lambda lib, x: lib.remainder(x * 3, x.abs() + 1),
    "fmod_scalar": lambda lib, x: lib.fmod(x * 3, 1.5), "remainder_scalar": lambda lib, x: (x * 3).remainder(1.5),
    "fmax": lambda lib, x: lib.fmax(x, x.flip(-1)), "fmin": lambda lib, x: lib.fmin(x, -x),
    "copysign": lambda lib, x: lib.copysign(x, x.flip(-1)), "copysign_scalar": lambda lib, x: lib.copysign(x, -1.0),
    "ldexp": lambda lib, x: lib.ldexp(x, lib.tensor(2)), "lerp": lambda lib, x: lib.lerp(x, x.exp(), 0.3),
    "lerp_tensor": lambda lib, x: lib.lerp(x, x.exp(), x.sigmoid()),
    "addcmul": lambda lib, x: lib.addcmul(x, x.exp(), x.sin(), value=0.5),
    "addcdiv": lambda lib, x: lib.addcdiv(x, x.sin(), x.exp(), value=2.0),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 0.5),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x, 0.3),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x, 0.3),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.1, -1.0),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x * 4),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x * 4),
}


@pytest.mark.parametrize("name", MORE_POINTWISE)
def test_more_element_wise_ops(name):
    op = MORE_POINTWISE[name]
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a))(lib.as_tensor(X)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: op(lib, a).sin().sum()))(lib.as_tensor(X)))
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a), in_dims=1)(lib.as_tensor(M)))
