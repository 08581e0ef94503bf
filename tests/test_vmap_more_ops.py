"""tg.func.vmap's batching rules for the ops added with torch's op database (teachgrad/ops/selection.py,
products.py, activation_more.py's glu and prelu, padding_pooling.py, attention.py's safe softmax, rnn.py's unsafe
split): each op under vmap, under vmap(grad) and with in_dims=1, against torch.func. The rules are in
teachgrad/features/batching_rules.py."""
import pytest
import torch

import teachgrad as tg
from tests.test_vmap import same

torch.manual_seed(0)
A = torch.randn(3, 4, 5, dtype=torch.float64)     # examples of (4, 5)
A1 = torch.randn(4, 3, 5, dtype=torch.float64)    # in_dims=1: examples of (4, 5)
ROW = torch.randn(3, dtype=torch.float64)          # examples of 0 dims
C4 = torch.randn(4, dtype=torch.float64)
C5 = torch.randn(5, dtype=torch.float64)
C44 = torch.randn(4, 4, dtype=torch.float64)
C45 = torch.randn(4, 5, dtype=torch.float64)
C55 = torch.randn(5, 5, dtype=torch.float64)
C223 = torch.randn(2, 2, 3, dtype=torch.float64)
C253 = torch.randn(2, 5, 3, dtype=torch.float64)


MASKED_ROW = torch.tensor([[False] * 5, [True] * 5, [False, True] * 2 + [True], [True] * 4 + [False]])


def _c(lib, t):
    return lib.as_tensor(t)


def _safe_softmax(lib, x, dim):
    """attention's softmax (a row of -inf gives zeros): teachgrad's SafeSoftmax op (scaled_dot_product_attention's
    math path), torch's aten._safe_softmax."""
    return torch.ops.aten._safe_softmax(x, dim) if lib is torch else tg.ops.SafeSoftmax.apply(x, dim)


# Each op of an example x of shape (4, 5); an op may return a tuple (values and indices).
OPS = {
    # selection: amax / amin / aminmax, nansum, prod, var_mean / std_mean, median ... (dim forms), cummax / cummin
    "amax_dim": lambda lib, x: x.amax(1), "amax_all": lambda lib, x: x.amax(),
    "amax_dims_keep": lambda lib, x: lib.amax(x, (0, -1), keepdim=True),
    "amax_keep": lambda lib, x: x.amax(keepdim=True),
    "amax_ties": lambda lib, x: x.round().amax(0) * x.sum(), "amin_dim": lambda lib, x: x.amin(-1),
    "amin_all": lambda lib, x: lib.amin(x), "aminmax_dim": lambda lib, x: tuple(lib.aminmax(x, dim=0)),
    "aminmax_all": lambda lib, x: tuple(lib.aminmax(x)),
    "aminmax_keep": lambda lib, x: tuple(lib.aminmax(x, dim=-1, keepdim=True)),
    "nansum_all": lambda lib, x: x.log().nansum(), "nansum_dim": lambda lib, x: x.log().nansum(1),
    "nansum_keep": lambda lib, x: lib.nansum(x, (0, 1), keepdim=True),
    "prod_all": lambda lib, x: x.prod(), "prod_dim": lambda lib, x: x.prod(1),
    "prod_keep": lambda lib, x: x.prod(0, keepdim=True),
    "var_mean_dim": lambda lib, x: lib.var_mean(x, 1), "var_mean_all": lambda lib, x: lib.var_mean(x),
    "std_mean_keep": lambda lib, x: lib.std_mean(x, (0, 1), keepdim=True),
    "std_mean_all": lambda lib, x: lib.std_mean(x, correction=0),
    "std_mean_all_keep": lambda lib, x: lib.std_mean(x, keepdim=True),
    "median_dim": lambda lib, x: tuple(x.median(1)), "nanmedian_dim": lambda lib, x: tuple(x.log().nanmedian(0)),
    "mode": lambda lib, x: tuple(x.mode(1)), "kthvalue": lambda lib, x: tuple(x.kthvalue(2, 0)),
    "kthvalue_keep": lambda lib, x: tuple(lib.kthvalue(x, 3, -1, keepdim=True)),
    "cummax": lambda lib, x: tuple(x.cummax(1)), "cummin": lambda lib, x: tuple(lib.cummin(x, 0)),
    # products
    "addmm_scaled": lambda lib, x: lib.addmm(_c(lib, C45), x, _c(lib, C55), beta=0.3, alpha=1.5),
    "addmm_beta0": lambda lib, x: lib.addmm(x, _c(lib, C44), x, beta=0, alpha=2),
    "addmm_input": lambda lib, x: lib.addmm(x, _c(lib, C44), _c(lib, C45), alpha=0.5),
    "addmv": lambda lib, x: lib.addmv(_c(lib, C4), x, _c(lib, C5), beta=0.5, alpha=2),
    "addmv_all": lambda lib, x: lib.addmv(x[:, 0], x, x[0]),
    "addr": lambda lib, x: lib.addr(x, x[:, 0], x[0], beta=2, alpha=0.5),
    "addr_const": lambda lib, x: lib.addr(x, _c(lib, C4), _c(lib, C5)),
    "baddbmm": lambda lib, x: lib.baddbmm(_c(lib, C223), x.reshape(2, 2, 5), _c(lib, C253), beta=0.5,
                                          alpha=2),
    "baddbmm_method": lambda lib, x: x[:, :3].reshape(2, 2, 3).baddbmm(x.reshape(2, 2, 5), _c(lib, C253)),
    "addbmm": lambda lib, x: lib.addbmm(_c(lib, C223[0]), x.reshape(2, 2, 5), _c(lib, C253), beta=2, alpha=0.5),
    "vdot": lambda lib, x: lib.vdot(x[0], x[1]), "vdot_const": lambda lib, x: lib.vdot(_c(lib, C5), x[2]),
    "trace": lambda lib, x: x.trace(), "rot90": lambda lib, x: x.rot90(1, (0, 1)),
    "rot90_neg": lambda lib, x: lib.rot90(x, 2, [1, 0]), "rot90_3": lambda lib, x: lib.rot90(x, -1, [-1, 0]),
    # activations
    "glu": lambda lib, x: lib.nn.functional.glu(x, 0), "glu_last": lambda lib, x: lib.nn.functional.glu(x[:, :4], -1),
    "prelu": lambda lib, x: lib.nn.functional.prelu(x, _c(lib, C5)),
    "prelu_3d": lambda lib, x: lib.nn.functional.prelu(x.reshape(2, 2, 5), _c(lib, C4[:2])),
    "prelu_one": lambda lib, x: lib.nn.functional.prelu(x, _c(lib, C4[:1])),
    # padding and adaptive pooling
    "reflection_pad1d": lambda lib, x: lib.nn.functional.pad(x, (2, 1), mode="reflect"),
    "reflection_pad2d": lambda lib, x: lib.nn.functional.pad(x.unsqueeze(0), (1, 1, 2, 0), mode="reflect"),
    "reflection_pad3d": lambda lib, x: lib.nn.functional.pad(x.reshape(1, 1, 4, 5), (1, 1, 1, 0, 0, 0),
                                                             mode="reflect"),
    "replication_pad1d": lambda lib, x: lib.nn.functional.pad(x.reshape(2, 2, 5), (0, 3), mode="replicate"),
    "replication_pad2d": lambda lib, x: lib.nn.functional.pad(x.unsqueeze(0), (2, 2, 1, 1), mode="replicate"),
    "replication_pad3d": lambda lib, x: lib.nn.functional.pad(x.reshape(1, 2, 2, 5), (1, 0, 1, 0, 1, 1),
                                                              mode="replicate"),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x.unsqueeze(0), (2, 3)),
    "adaptive_avg_pool2d_4d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x.reshape(2, 1, 2, 5), 2),
    "adaptive_avg_pool1d": lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, 3),
    "adaptive_max_pool2d": lambda lib, x: tuple(lib.nn.functional.adaptive_max_pool2d(x.unsqueeze(0), 2, True)),
    "adaptive_max_pool1d": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 2),
    # attention's safe softmax, the element-wise ops with a number or an order of their own
    "safe_softmax": lambda lib, x: _safe_softmax(lib, x, -1),
    "safe_softmax_masked": lambda lib, x: _safe_softmax(lib, x.masked_fill(_c(lib, MASKED_ROW), -float("inf")), 1),
    "rsub_tensor": lambda lib, x: lib.rsub(x, x.exp()), "xlogy_self": lambda lib, x: lib.xlogy(2.0, x.exp()),
    "xlogy_other": lambda lib, x: lib.xlogy(x, 3.0),
}


def _scalar(out, lib):
    """A number from an op's output(s), for grad: each floating output through sin, summed."""
    outs = out if isinstance(out, tuple) else (out,)
    return sum(o.sin().sum() for o in outs if o.dtype.is_floating_point)


@pytest.mark.parametrize("name", OPS)
def test_more_ops_under_vmap(name):
    op = OPS[name]
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a))(lib.as_tensor(A)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: _scalar(op(lib, a), lib)))(lib.as_tensor(A)))
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a), in_dims=1)(lib.as_tensor(A1)))


# Reductions of 0-dim examples (a vector's elements): torch allows dim 0 and -1 of a scalar.
SCALAR_OPS = {
    "amax": lambda lib, x: x.amax(), "amax_dim": lambda lib, x: x.amax(0), "amin_keep": lambda lib, x: x.amin(-1, True),
    "aminmax": lambda lib, x: tuple(lib.aminmax(x)), "nansum": lambda lib, x: x.nansum(),
    "prod": lambda lib, x: x.prod(), "prod_dim": lambda lib, x: x.prod(0), "cummax": lambda lib, x: tuple(x.cummax(0)),
    "median_dim": lambda lib, x: tuple(x.median(0)), "var_mean": lambda lib, x: lib.var_mean(x, correction=0),
}


@pytest.mark.parametrize("name", SCALAR_OPS)
def test_reductions_of_scalar_examples(name):
    op = SCALAR_OPS[name]
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a))(lib.as_tensor(ROW)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: _scalar(op(lib, a), lib)))(lib.as_tensor(ROW)))


# Products where the other factor (or the added term) is the batched one, or all are.
PAIRS = {
    "addmm": (lambda lib, a, b: lib.addmm(a, b, a, beta=0.5, alpha=2), (4, 5), (4, 4)),
    "addmv": (lambda lib, a, b: lib.addmv(a[:, 0], a, b, alpha=3), (4, 5), (5,)),
    "addr": (lambda lib, a, b: lib.addr(a, b[:4], b, beta=0.0), (4, 5), (5,)),
    "baddbmm": (lambda lib, a, b: lib.baddbmm(a, a, b), (2, 3, 3), (2, 3, 3)),
    "addbmm": (lambda lib, a, b: lib.addbmm(a[0], a, b, alpha=0.5), (2, 3, 3), (2, 3, 3)),
    "vdot": (lambda lib, a, b: lib.vdot(a, b), (5,), (5,)),
    "prelu": (lambda lib, a, b: lib.nn.functional.prelu(a, b), (4, 5), (5,)),
}


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0)])
@pytest.mark.parametrize("name", PAIRS)
def test_products_with_either_factor_batched(name, in_dims):
    op, a_shape, b_shape = PAIRS[name]
    a = torch.randn((3,) * (in_dims[0] == 0) + a_shape, dtype=torch.float64)
    b = torch.randn((3,) * (in_dims[1] == 0) + b_shape, dtype=torch.float64)
    same(lambda lib: lib.func.vmap(lambda x, y: op(lib, x, y), in_dims=in_dims)(lib.as_tensor(a), lib.as_tensor(b)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda x, y: op(lib, x, y).sin().sum(), argnums=(0, 1)),
                                   in_dims=in_dims)(lib.as_tensor(a), lib.as_tensor(b)))


def test_nested_vmap_of_the_new_rules():
    xs = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    for op in (OPS["amax_all"], OPS["var_mean_all"], OPS["addmv"], OPS["reflection_pad2d"], OPS["prelu_3d"],
               OPS["kthvalue"]):
        same(lambda lib: lib.func.vmap(lib.func.vmap(lambda a: op(lib, a)))(lib.as_tensor(xs)))


def test_unsafe_split_under_vmap():
    """unsafe_split (rnn.py's UnsafeSplit, the gates of teachgrad's LSTM) splits each example along its dim."""
    def run(lib):
        split = (lambda a: tuple(a.unsafe_split(2, 1))) if lib is torch else \
            (lambda a: tg.ops.rnn.UnsafeSplit.apply(a, [2, 2, 1], 1))
        return lib.func.vmap(split)(lib.as_tensor(A))
    same(run)


BAD = {
    "pad_5d": lambda lib, x: lib.nn.functional.pad(x.reshape(1, 1, 1, 4, 5), (1, 1), mode="reflect"),
    "trace_1d": lambda lib, x: x[0].trace(),
    "amax_dim": lambda lib, x: x.amax(2),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_examples_get_torchs_error(name):
    """An example the op does not take: torch's exception type and message, as torch.func gives it."""
    same(lambda lib: lib.func.vmap(lambda a: BAD[name](lib, a))(lib.as_tensor(A)))


def test_products_of_shapes_that_do_not_fit_get_the_ops_error():
    """Factors that do not multiply, or an input that does not broadcast to the product: the op's own error (its
    type and message, from one example: torch.func's names the shapes of the whole batch)."""
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x5 and 4x5\)"):
        tg.func.vmap(lambda x: tg.addmm(x, x, x))(tg.as_tensor(A))
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(5\), mat \(4x5\), vec \(5\)"):
        tg.func.vmap(lambda x: tg.addmv(x[0], x, x[0]))(tg.as_tensor(A))
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        tg.func.vmap(lambda x: tg.addr(x[:2], x[:, 0], x[0]))(tg.as_tensor(A))


TIES = torch.tensor([[1., 2., 2., 0., 2., 1.], [3., 3., 3., 3., 3., 3.], [0.5, -1., 4., 2., 0.5, 7.]],
                    dtype=torch.float64)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_the_whole_example_shares_the_gradient_among_ties(name):
    """x.median() (MedianBackward0): the gradient is shared evenly by the elements equal to the median."""
    def op(lib, x):
        return getattr(x, name)()
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a))(lib.as_tensor(TIES)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: op(lib, a) * 3))(lib.as_tensor(TIES)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: op(lib, a.log()).exp()))(lib.as_tensor(TIES + 1)))
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a), in_dims=1)(lib.as_tensor(A1)))
    same(lambda lib: lib.func.vmap(lambda a: op(lib, a))(lib.as_tensor(ROW)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: op(lib, a).sin()))(lib.as_tensor(A)))


def test_median_of_an_example_with_nan_is_refused_by_name():
    """A nan median (its gradient goes to the nan elements) has no batching rule in teachgrad: said, not guessed."""
    with pytest.raises(NotImplementedError, match="vmap: teachgrad has no batching rule for Median of an example "
                                                  "with nan"):
        tg.func.vmap(lambda a: a.median())(tg.as_tensor(TIES.log() - TIES))


def test_masked_select_with_an_unbatched_mask():
    mask = torch.randn(4, 5) > 0
    same(lambda lib: lib.func.vmap(lambda a: a.masked_select(lib.as_tensor(mask)))(lib.as_tensor(A)))
    same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: a.masked_select(lib.as_tensor(mask)).sin().sum()))(
        lib.as_tensor(A)))
    same(lambda lib: lib.func.vmap(lambda a: a.masked_select(lib.as_tensor(mask[0])), in_dims=1)(lib.as_tensor(A1)))
    same(lambda lib: lib.func.vmap(lambda a: a.masked_select(lib.as_tensor(mask)))(lib.as_tensor(A[:, 0])))
    # a mask per example: each example would give a different number of elements (torch's error)
    same(lambda lib: lib.func.vmap(lambda a: a.masked_select(a > 0))(lib.as_tensor(A)))


def test_transposed_convolution_of_a_batch_of_inputs():
    w1, w2 = torch.randn(4, 2, 3, dtype=torch.float64), torch.randn(1, 3, 2, 2, dtype=torch.float64)
    bias = torch.randn(2, dtype=torch.float64)

    def conv1(lib, x):
        return lib.nn.functional.conv_transpose1d(x, lib.as_tensor(w1), lib.as_tensor(bias), stride=2)

    def conv2(lib, x):
        return lib.nn.functional.conv_transpose2d(x.unsqueeze(0), lib.as_tensor(w2), padding=1)
    for conv in (conv1, conv2):
        same(lambda lib: lib.func.vmap(lambda a: conv(lib, a))(lib.as_tensor(A)))
        same(lambda lib: lib.func.vmap(lib.func.grad(lambda a: conv(lib, a).sin().sum()))(lib.as_tensor(A)))
        same(lambda lib: lib.func.vmap(lambda a: conv(lib, a), in_dims=1)(lib.as_tensor(A1)))
    same(lambda lib: lib.func.vmap(lambda a: conv1(lib, a.unsqueeze(0)))(lib.as_tensor(A)))   # (N, C, L) examples
    with pytest.raises(NotImplementedError, match="no batching rule for ConvolutionTranspose with a batched weight"):
        tg.func.vmap(lambda w: tg.nn.functional.conv_transpose1d(tg.as_tensor(A[0]), w))(
            tg.as_tensor(w1).unsqueeze(0))


@pytest.mark.parametrize("name", ["reflection_pad2d", "replication_pad1d", "adaptive_avg_pool2d",
                                  "adaptive_max_pool1d", "prod_dim", "amax_all", "addmv_all", "glu"])
def test_second_derivatives_per_example(name):
    """vmap(jacrev(grad)): each example's Hessian, through the ops' backward recorded under vmap."""
    op = OPS[name]
    same(lambda lib: lib.func.vmap(lib.func.jacrev(lib.func.grad(lambda a: (op(lib, a) ** 3).sum())))(
        lib.as_tensor(A)))


LOGITS = torch.randn(3, 6, 2, 4, dtype=torch.float64)    # examples of (T=6, N=2, C=4)
TARGETS = torch.tensor([[1, 2, 2], [3, 1, 0]])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("form", ["padded", "concatenated", "unbatched"])
def test_ctc_loss_of_a_batch_of_log_probs(form, reduction):
    """ctc_loss with the log-probabilities batched (the targets and lengths shared): the batch folded into N."""
    if form == "padded":
        targets, logits, lengths = TARGETS, LOGITS, ([6, 5], [3, 2])
    elif form == "concatenated":
        targets, logits, lengths = torch.tensor([1, 2, 2, 3, 1]), LOGITS, ([6, 5], [3, 2])
    else:
        targets, logits, lengths = TARGETS[0], LOGITS[:, :, 0], ([6], [3])

    def loss(lib, x):
        return lib.nn.functional.ctc_loss(x.log_softmax(-1), lib.as_tensor(targets), *lengths, reduction=reduction)
    same(lambda lib: lib.func.vmap(lambda a: loss(lib, a))(lib.as_tensor(logits)))
    # each example's gradient: torch.func's grad stops at the 'mean' form's backward (its kernel reads a data
    # pointer), so the gradients are torch.autograd's, of one example at a time
    ours = tg.func.vmap(tg.func.grad(lambda a: loss(tg, a).sum()))(tg.as_tensor(logits)).data
    examples = [example.clone().requires_grad_() for example in logits]
    theirs = torch.stack([torch.autograd.grad(loss(torch, a).sum(), a)[0] for a in examples])
    assert ours.shape == theirs.shape and torch.allclose(ours, theirs, atol=1e-12)
    same(lambda lib: lib.func.vmap(lambda a: loss(lib, a), in_dims=1)(lib.as_tensor(logits.transpose(0, 1))))


def test_ctc_loss_with_batched_targets_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="no batching rule for CtcLoss with batched targets"):
        tg.func.vmap(lambda x, t: tg.nn.functional.ctc_loss(x.log_softmax(-1), t, [6, 5], [3, 2]))(
            tg.as_tensor(LOGITS), tg.as_tensor(TARGETS).expand(3, 2, 3))
