"""Batching rules of tg.func.vmap for layers and losses, against torch.func.vmap: convolution (input batched: the
batch folded into N; weight batched: into the groups), max/avg pooling, batch norm (torch's error where it would
update unbatched running stats; replace_all_batch_norm_modules_), binary cross entropy (with logits), huber,
smooth L1 and soft margin losses. Values, and each example's gradient through vmap(grad)."""
import pytest
import torch

import teachgrad as tg
from tests.test_vmap import same

torch.manual_seed(5)
X1 = torch.randn(3, 2, 4, 9, dtype=torch.float64)        # 3 examples of (N=2, C=4, L=9)
W1 = torch.randn(6, 4, 3, dtype=torch.float64)
WB1 = torch.randn(3, 6, 4, 3, dtype=torch.float64)        # one weight per example
B1 = torch.randn(6, dtype=torch.float64)
X2 = torch.randn(3, 2, 4, 7, 6, dtype=torch.float64)
W2 = torch.randn(6, 2, 3, 2, dtype=torch.float64)         # groups=2
WB2 = torch.randn(3, 6, 2, 3, 2, dtype=torch.float64)


def both(lib, fn, *args, in_dims=0, argnums=0):
    """fn under vmap, and each example's gradient of fn(...).sin().sum() with respect to `argnums`."""
    t = [lib.as_tensor(a) for a in args]
    value = lib.func.vmap(fn, in_dims=in_dims)(*t)
    gradient = lib.func.vmap(lib.func.grad(lambda *a: fn(*a).sin().sum(), argnums=argnums), in_dims=in_dims)(*t)
    return value, gradient


CONVS = {
    "conv1d_input": (lambda lib: lambda x, w, b: lib.nn.functional.conv1d(x, w, b, padding=1), (X1, W1, B1),
                     (0, None, None)),
    "conv1d_weight": (lambda lib: lambda x, w, b: lib.nn.functional.conv1d(x, w, b, stride=2), (X1[0], WB1, B1),
                      (None, 0, None)),
    "conv1d_both": (lambda lib: lambda x, w, b: lib.nn.functional.conv1d(x, w, b, dilation=2), (X1, WB1, B1),
                    (0, 0, None)),
    "conv1d_bias": (lambda lib: lambda x, w, b: lib.nn.functional.conv1d(x, w, b), (X1, W1, torch.randn(3, 6,
                    dtype=torch.float64)), (0, None, 0)),
    "conv1d_unbatched_example": (lambda lib: lambda x, w, b: lib.nn.functional.conv1d(x, w, b), (X1[:, 0], W1, B1),
                                 (0, None, None)),
    "conv2d_groups_input": (lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, b, groups=2, padding=(1, 0)),
                            (X2, W2, B1), (0, None, None)),
    "conv2d_groups_weight": (lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, b, groups=2),
                             (X2, WB2, B1), (0, 0, None)),
    "conv2d_no_bias_weight": (lambda lib: lambda x, w, b: lib.nn.functional.conv2d(x, w, groups=2) * b.sum(),
                              (X2[0], WB2, B1), (None, 0, None)),
}


@pytest.mark.parametrize("name", CONVS)
def test_convolution(name):
    make, args, in_dims = CONVS[name]
    same(lambda lib: both(lib, make(lib), *args, in_dims=in_dims, argnums=(0, 1, 2)))


P = torch.randn(3, 2, 4, 7, 6, dtype=torch.float64)


@pytest.mark.parametrize("pool", [
    lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    lambda lib, x: lib.nn.functional.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True)[1].double() + x[..., :3, :3],
    lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
    lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False),
    lambda lib, x: lib.nn.MaxPool2d(2)(x[0]),                       # a (C, H, W) example
], ids=["max", "max_options", "max_indices", "avg", "avg_options", "max_3d_example"])
def test_pooling(pool):
    same(lambda lib: both(lib, lambda x: pool(lib, x), P))


def test_pooling_an_example_of_the_wrong_rank_is_refused():
    # torch's vmap fails an internal assert (logical_rank == n + 1 || ...); teachgrad gives max_pool2d's own error
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match="3D or 4D|logical_rank == n"):
            lib.func.vmap(lambda x: lib.nn.functional.max_pool2d(x, 2))(lib.as_tensor(P[:, 0, 0]))
    with pytest.raises(RuntimeError, match="non-empty 3D or 4D"):
        tg.func.vmap(lambda x: tg.nn.functional.max_pool2d(x, 2))(tg.as_tensor(P[:, 0, 0]))


BN_X = torch.randn(3, 5, 4, 6, dtype=torch.float64)
BN_W = torch.randn(4, dtype=torch.float64)
BN_WB = torch.randn(3, 4, dtype=torch.float64)


def test_batch_norm_training_without_running_stats_and_eval():
    stats = lambda: (torch.rand(4, dtype=torch.float64), torch.rand(4, dtype=torch.float64) + 0.5)   # noqa: E731
    rm, rv = stats()
    same(lambda lib: both(lib, lambda x, w: lib.nn.functional.batch_norm(x, None, None, w, w.cos(), training=True),
                          BN_X, BN_W, in_dims=(0, None), argnums=(0, 1)))
    same(lambda lib: both(lib, lambda x, w: lib.nn.functional.batch_norm(x, None, None, w, None, training=True),
                          BN_X, BN_WB, in_dims=(0, 0), argnums=(0, 1)))
    same(lambda lib: both(lib, lambda x, w: lib.nn.functional.batch_norm(x, rm, rv, w, w, training=False),
                          BN_X, BN_W, in_dims=(0, None), argnums=(0, 1)))


def test_batch_norm_training_with_running_stats_is_torchs_error():
    rm, rv = torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64)
    same(lambda lib: lib.func.vmap(lambda x: lib.nn.functional.batch_norm(x, rm, rv, training=True))(
        lib.as_tensor(BN_X)))
    same(lambda lib: lib.func.vmap(lib.nn.BatchNorm1d(4).double())(lib.as_tensor(BN_X)))


def test_replace_all_batch_norm_modules():
    def run(lib):
        torch.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv1d(4, 4, 3), lib.nn.BatchNorm1d(4)).double()
        lib.func.replace_all_batch_norm_modules_(model)
        return (model[1].running_mean, model[1].track_running_stats,
                lib.func.vmap(model)(lib.as_tensor(BN_X)))
    same(run)


A = torch.randn(3, 4, 5, dtype=torch.float64)
PR = torch.rand(3, 4, 5, dtype=torch.float64) * 0.8 + 0.1
TG = torch.rand(3, 4, 5, dtype=torch.float64)
SIGNS = torch.randint(0, 2, (3, 4, 5)).double() * 2 - 1
LOSSES = {
    "bce": lambda lib, x, t, r: lib.nn.functional.binary_cross_entropy(x.sigmoid(), t, reduction=r),
    "bce_weight": lambda lib, x, t, r: lib.nn.functional.binary_cross_entropy(x.sigmoid(), t, lib.as_tensor(
        PR[0, 0]), reduction=r),
    "bce_logits": lambda lib, x, t, r: lib.nn.functional.binary_cross_entropy_with_logits(x, t, reduction=r),
    "bce_logits_pos_weight": lambda lib, x, t, r: lib.nn.functional.binary_cross_entropy_with_logits(
        x, t, lib.as_tensor(PR[0]), pos_weight=lib.as_tensor(TG[0, 0] + 0.5), reduction=r),
    "huber": lambda lib, x, t, r: lib.nn.functional.huber_loss(x, t, reduction=r, delta=0.5),
    "smooth_l1": lambda lib, x, t, r: lib.nn.functional.smooth_l1_loss(x, t, reduction=r, beta=0.7),
    "soft_margin": lambda lib, x, t, r: lib.nn.functional.soft_margin_loss(x, t * 2 - 1, reduction=r),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("in_dims", [(0, 0), (0, None)])
def test_losses(name, reduction, in_dims):
    loss = LOSSES[name]
    t = TG if in_dims[1] == 0 else TG[0]
    same(lambda lib: both(lib, lambda x, y: loss(lib, x, y, reduction), A, t, in_dims=in_dims))


@pytest.mark.parametrize("layer", [
    lambda lib, x, w: lib.nn.functional.conv1d(x, w, padding=1),
    lambda lib, x, w: lib.nn.functional.max_pool2d(x.unsqueeze(0), 2),
    lambda lib, x, w: lib.nn.functional.avg_pool2d(x.unsqueeze(0), (1, 2)),
    lambda lib, x, w: lib.nn.functional.batch_norm(x, None, None, training=True),
    lambda lib, x, w: lib.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid().detach()),
], ids=["conv1d_batched_weight", "max_pool", "avg_pool", "batch_norm", "bce_logits"])
def test_forward_mode_through_layers_under_vmap(layer):
    xs, ts = X1, torch.randn(3, 2, 4, 9, dtype=torch.float64)
    same(lambda lib: lib.func.vmap(lambda x, t, w: lib.func.jvp(lambda a, b: layer(lib, a, b), (x, w), (t, w.cos())))(
        lib.as_tensor(xs), lib.as_tensor(ts), lib.as_tensor(WB1)))
