"""The rest of torch.nn.functional (issue 42), each twinned with torch: interpolate in every mode, grid_sample and
affine_grid, group / instance / local response norm, embedding_bag, fold / unfold, pixel shuffle, celu / selu /
mish / rrelu, circular padding, cosine_similarity and pairwise_distance, and the nn modules that call them.

Every case runs the same lines under torch and teachgrad: values, node names (the whole graph), float64 gradients
for a random cotangent, second derivatives where torch has them, forward-mode tangents where torch has them,
gradcheck and gradgradcheck; torch's errors by type and message. Then small whole programs a learner writes.
"""
import pytest
import torch
import torch.nn.functional as TF

import teachgrad as tg
from tests.helpers import graph_names
from tests.twins import same

G = torch.Generator().manual_seed(0)


def rand(*shape):
    return torch.randn(*shape, generator=G, dtype=torch.float64)


def grid(*shape):
    return torch.rand(*shape, generator=G, dtype=torch.float64) * 2.2 - 1.1


def leaves(lib, data):
    if lib is tg:
        return [tg.Variable(d.clone(), requires_grad=True) for d in data]
    return [d.clone().requires_grad_(True) for d in data]


def plain(x):
    return x.data if isinstance(x, tg.Variable) else x.detach()


def run(lib, fn, data, second, forward):
    """fn's value, graph, gradients for a fixed cotangent, second derivatives (one backward of a weighted sum of
    the gradients) and tangent (for fixed tangents)."""
    xs = leaves(lib, data)
    out = fn(lib, *xs)
    result = {"value": plain(out), "graph": graph_names(out)}
    cot = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
    cot = leaves(lib, [cot])[0] if second else tg.Variable(cot) if lib is tg else cot
    grads = lib.autograd.grad(out, xs, cot, create_graph=second, allow_unused=True)
    result["grads"] = [None if g is None else plain(g) for g in grads]
    if second:   # the gradients' own derivatives, in the inputs and in the cotangent (a linear op's second node)
        recorded = [g for g in grads if g is not None and g.requires_grad]
        total = sum((g * g).sum() for g in recorded)
        result["graph2"] = [graph_names(g)[0] for g in recorded]
        seconds = lib.autograd.grad(total, xs + [cot], allow_unused=True)
        result["seconds"] = [None if g is None else plain(g) for g in seconds]
    if forward:
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            duals = [fw.make_dual(plain(x).clone() if lib is torch else tg.Variable(plain(x).clone()),
                                  torch.linspace(-2, 1, x.numel(), dtype=x.dtype).reshape(x.shape)
                                  if lib is torch else tg.Variable(torch.linspace(-2, 1, x.numel(),
                                                                                  dtype=x.dtype).reshape(x.shape)))
                     for x in xs]
            result["tangent"] = plain(fw.unpack_dual(fn(lib, *duals)).tangent)
    return result


def compare(ours, theirs):
    assert ours.keys() == theirs.keys()
    for key in ours:
        a, b = ours[key], theirs[key]
        if key.startswith("graph"):
            assert a == b, key
        elif isinstance(a, list):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                assert (x is None) == (y is None), key
                if x is not None:
                    torch.testing.assert_close(x, y, msg=key, atol=1e-10, rtol=1e-8, equal_nan=True)
        else:
            torch.testing.assert_close(a, b, msg=key, atol=1e-10, rtol=1e-8, equal_nan=True)


def twin(fn, *data, second=True, forward=True, check=True, graph2=True):
    """`graph2`: the first node of each recorded gradient is torch's too (False where teachgrad writes torch's
    formula with other ops: the same numbers, other nodes)."""
    ours, theirs = run(tg, fn, data, second, forward), run(torch, fn, data, second, forward)
    if not graph2:
        ours.pop("graph2", None), theirs.pop("graph2", None)
    compare(ours, theirs)
    if check:   # finite differences, on teachgrad's own gradcheck
        xs = leaves(tg, data)
        assert tg.autograd.gradcheck(lambda *v: fn(tg, *v), xs)
        if second:
            assert tg.autograd.gradgradcheck(lambda *v: fn(tg, *v), xs)


def F(lib):
    return lib.nn.functional


X4, X3, X5 = rand(2, 3, 4, 5), rand(2, 3, 5), rand(1, 2, 3, 4, 3)

# --- interpolate, every mode ----------------------------------------------------------------------------------

INTERPOLATE = [
    ("nearest scale", X4, dict(scale_factor=2)),
    ("nearest size", X4, dict(size=(3, 7))),
    ("nearest 1d", X3, dict(scale_factor=1.5)),
    ("nearest 3d", X5, dict(size=(4, 3, 5))),
    ("nearest-exact", X4, dict(size=(6, 3), mode="nearest-exact")),
    ("nearest-exact 1d", X3, dict(scale_factor=0.7, mode="nearest-exact")),
    ("nearest-exact 3d", X5, dict(scale_factor=2, mode="nearest-exact")),
    ("linear", X3, dict(scale_factor=2, mode="linear")),
    ("linear align", X3, dict(size=7, mode="linear", align_corners=True)),
    ("bilinear", X4, dict(scale_factor=2, mode="bilinear")),
    ("bilinear align", X4, dict(size=(7, 3), mode="bilinear", align_corners=True)),
    ("bilinear recompute", X4, dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ("bilinear antialias", X4, dict(size=(2, 3), mode="bilinear", antialias=True)),
    ("bicubic", X4, dict(scale_factor=(2, 1.5), mode="bicubic")),
    ("bicubic align", X4, dict(size=(5, 6), mode="bicubic", align_corners=True)),
    ("bicubic antialias", X4, dict(size=(3, 2), mode="bicubic", antialias=True)),
    ("trilinear", X5, dict(scale_factor=2, mode="trilinear")),
    ("trilinear align", X5, dict(size=(2, 5, 4), mode="trilinear", align_corners=True)),
    ("area", X4, dict(size=(3, 2), mode="area")),
    ("area 1d", X3, dict(size=3, mode="area")),
    ("area 3d", X5, dict(size=(2, 2, 2), mode="area")),
]


@pytest.mark.parametrize("name, x, kwargs", INTERPOLATE, ids=[c[0] for c in INTERPOLATE])
def test_interpolate(name, x, kwargs):
    twin(lambda lib, x: F(lib).interpolate(x, **kwargs), x)


def test_upsample_modules():
    for module in (torch.nn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.Upsample(size=(5, 7)),
                   torch.nn.UpsamplingBilinear2d(scale_factor=2), torch.nn.UpsamplingNearest2d(size=3)):
        twin(lambda lib, x: module(x), X4, check=False)
    assert tg.nn.Upsample is torch.nn.Upsample


INTERPOLATE_ERRORS = [
    dict(),
    dict(size=2, scale_factor=2),
    dict(size=(2, 3, 4)),
    dict(scale_factor=2, mode="linear"),
    dict(scale_factor=2, mode="nearest", align_corners=True),
    dict(scale_factor=2, mode="cubic"),
    dict(size=3, mode="bilinear", antialias=True, align_corners=None) | dict(mode="nearest", antialias=True),
]


@pytest.mark.parametrize("kwargs", INTERPOLATE_ERRORS)
def test_interpolate_errors(kwargs):
    same(lambda lib: F(lib).interpolate(lib.ones(2, 3, 4, 5, requires_grad=True), **kwargs))


# --- grid_sample, affine_grid ---------------------------------------------------------------------------------

GRID_SAMPLE = [(mode, padding, align) for mode in ("bilinear", "nearest", "bicubic")
               for padding in ("zeros", "border", "reflection") for align in (False, True)]


@pytest.mark.parametrize("mode, padding_mode, align_corners", GRID_SAMPLE)
def test_grid_sample(mode, padding_mode, align_corners):
    """torch records GridSampler2DBackwardBackward0 for the second derivative, and has no forward mode: teachgrad
    gives the first derivative and refuses the forward mode with torch's error."""
    def fn(lib, x, g):
        return F(lib).grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    twin(fn, X4, grid(2, 3, 2, 2), second=False, forward=False, check=mode != "nearest")
    same(lambda lib: _tangent_of(lib, fn, X4, grid(2, 3, 2, 2)))


def _tangent_of(lib, fn, *data):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(d.clone() if lib is torch else tg.Variable(d.clone()),
                              torch.ones_like(d) if lib is torch else tg.Variable(torch.ones_like(d))) for d in data]
        return fw.unpack_dual(fn(lib, *duals)).tangent


def test_grid_sample_3d():
    def fn(lib, x, g):
        return F(lib).grid_sample(x, g, align_corners=False, padding_mode="border")
    twin(fn, X5, grid(1, 2, 2, 3, 3), second=False, forward=False)


def test_grid_sample_second_derivative_is_refused_clearly():
    x, g = tg.Variable(X4.clone(), requires_grad=True), tg.Variable(grid(2, 3, 2, 2), requires_grad=True)
    gx, = tg.autograd.grad(F(tg).grid_sample(x, g, align_corners=False).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="second derivative of grid_sampler_2d"):
        gx.sum().backward()


def test_grid_sample_errors():
    same(lambda lib: F(lib).grid_sample(lib.ones(2, 3, 4, 5), lib.zeros(2, 3, 2, 2), mode="cubic"))
    same(lambda lib: F(lib).grid_sample(lib.ones(2, 3, 4, 5), lib.zeros(2, 3, 2, 2), padding_mode="wrap"))
    same(lambda lib: F(lib).grid_sample(lib.ones(2, 3, 4, 5, requires_grad=True), lib.zeros(2, 3, 2, 3),
                                        align_corners=False))
    same(lambda lib: F(lib).grid_sample(lib.ones(2, 3, 4, 5, requires_grad=True), lib.zeros(1, 3, 2, 2),
                                        align_corners=False))


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    twin(lambda lib, th: F(lib).affine_grid(th, (2, 3, 4, 5), align_corners=align_corners), rand(2, 2, 3))
    twin(lambda lib, th: F(lib).affine_grid(th, (1, 2, 3, 4, 2), align_corners=align_corners), rand(1, 3, 4))


def test_affine_grid_errors():
    same(lambda lib: F(lib).affine_grid(lib.ones(2, 2, 3), (2, 3, 4), align_corners=False))
    same(lambda lib: F(lib).affine_grid(lib.ones(2, 3, 3), (2, 3, 4, 5), align_corners=False))


# --- group, instance and local response norm ------------------------------------------------------------------

def test_group_norm():
    twin(lambda lib, x, w, b: F(lib).group_norm(x, 3, w, b), rand(2, 6, 4, 3), rand(6), rand(6), graph2=False)
    twin(lambda lib, x: F(lib).group_norm(x, 1), X3, graph2=False)
    twin(lambda lib, x, w: F(lib).group_norm(x, 2, w, eps=1e-3), rand(3, 4, 5), rand(4), graph2=False)


def test_group_norm_module_and_errors():
    module = torch.nn.GroupNorm(2, 4).double()
    twin(lambda lib, x: module(x), rand(3, 4, 2, 2), check=False)
    same(lambda lib: F(lib).group_norm(lib.ones(2, 4, 3, requires_grad=True), 3))
    same(lambda lib: F(lib).group_norm(lib.ones(2, 3, 3, requires_grad=True), 3, lib.ones(2)))
    same(lambda lib: F(lib).group_norm(lib.ones(3, requires_grad=True), 3))


def test_instance_norm():
    twin(lambda lib, x: F(lib).instance_norm(x), X4)
    twin(lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b), X3, rand(3), rand(3))


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_stats(use_input_stats):
    stats = {}

    def fn(lib, x):
        mean, var = torch.linspace(-1, 1, 3, dtype=torch.float64), torch.linspace(0.5, 2, 3, dtype=torch.float64)
        out = F(lib).instance_norm(x, mean, var, use_input_stats=use_input_stats, momentum=0.3)
        stats[lib] = (mean, var)
        return out
    twin(fn, X4, check=False)
    for ours, theirs in zip(stats[tg], stats[torch]):
        torch.testing.assert_close(ours, theirs)


def test_instance_norm_modules_and_errors():
    for module in (torch.nn.InstanceNorm1d(3, affine=True).double(), torch.nn.InstanceNorm2d(3).double(),
                   torch.nn.InstanceNorm3d(2, track_running_stats=True).double()):
        x = {1: X3, 2: X4, 3: X5}[int(type(module).__name__[-2])]
        twin(lambda lib, x: module(x), x, check=False, second=False, forward=False)
    same(lambda lib: F(lib).instance_norm(lib.ones(2, 3, 1, requires_grad=True)))
    same(lambda lib: F(lib).instance_norm(lib.ones(2, 3, 4, requires_grad=True), use_input_stats=False))


@pytest.mark.parametrize("x", [X3, X4, X5], ids=["3d", "4d", "5d"])
def test_local_response_norm(x):
    twin(lambda lib, x: F(lib).local_response_norm(x, 2, alpha=0.5, beta=0.75, k=1.5), x)
    twin(lambda lib, x: torch.nn.LocalResponseNorm(3)(x), x, check=False)


def test_local_response_norm_errors():
    same(lambda lib: F(lib).local_response_norm(lib.ones(3, 4, requires_grad=True), 2))


# --- embedding_bag --------------------------------------------------------------------------------------------

EMBEDDING_BAG = [
    ("sum", dict(mode="sum")), ("mean", dict(mode="mean")), ("max", dict(mode="max")),
    ("padding_idx", dict(mode="mean", padding_idx=4)), ("last offset", dict(mode="sum", include_last_offset=True)),
    ("scale_grad_by_freq", dict(mode="sum", scale_grad_by_freq=True)),
]


@pytest.mark.parametrize("name, kwargs", EMBEDDING_BAG, ids=[c[0] for c in EMBEDDING_BAG])
def test_embedding_bag(name, kwargs):
    indices, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 2, 5, 5])
    twin(lambda lib, w: F(lib).embedding_bag(indices, w, offsets, **kwargs), rand(10, 3), second=False,
         forward=False, check=kwargs.get("mode") != "max" and not kwargs.get("scale_grad_by_freq"))


def test_embedding_bag_2d_and_per_sample_weights():
    indices = torch.tensor([[1, 2, 4], [4, 3, 2]])
    twin(lambda lib, w: F(lib).embedding_bag(indices, w), rand(10, 3), second=False, forward=False)
    twin(lambda lib, w, p: F(lib).embedding_bag(indices.flatten(), w, torch.tensor([0, 4]), mode="sum",
                                                per_sample_weights=p), rand(10, 3), rand(6), second=False,
         forward=False)
    results = {}
    for lib in (tg, torch):   # torch's module: its weight a leaf of teachgrad's graph when the indices are teachgrad's
        torch.manual_seed(0)
        bag = torch.nn.EmbeddingBag(10, 3, mode="max").double()
        out = bag(lib.tensor(indices))
        out.pow(2).sum().backward()
        results[lib] = plain(out), out.grad_fn.name(), bag.weight.grad
    for ours, theirs in zip(results[tg], results[torch]):
        assert ours == theirs if isinstance(ours, str) else torch.equal(ours, theirs)


def test_embedding_bag_refusals():
    """torch differentiates embedding_bag once and has no forward mode for it: neither has teachgrad."""
    w = tg.Variable(rand(10, 3), requires_grad=True)
    out = F(tg).embedding_bag(torch.tensor([1, 2, 4, 5]), w, torch.tensor([0, 2]))
    gw, = tg.autograd.grad((out * out).sum(), w, create_graph=True)
    assert gw.grad_fn.name() == "EmbeddingBagBackwardBackward0"
    same(lambda lib: _second_of_embedding_bag(lib))
    same(lambda lib: _tangent_of(lib, lambda lib, w: F(lib).embedding_bag(torch.tensor([1, 2]), w,
                                                                          torch.tensor([0])), rand(10, 3)))
    same(lambda lib: F(lib).embedding_bag(torch.tensor([1, 2]), lib.ones(10, 3, requires_grad=True),
                                          torch.tensor([0]), mode="median"))
    same(lambda lib: F(lib).embedding_bag(torch.tensor([[1, 2]]), lib.ones(10, 3, requires_grad=True),
                                          torch.tensor([0])))


def _second_of_embedding_bag(lib):
    w = leaves(lib, [rand(10, 3)])[0]
    out = F(lib).embedding_bag(torch.tensor([1, 2, 4, 5]), w, torch.tensor([0, 2]))
    gw, = lib.autograd.grad((out * out).sum(), w, create_graph=True)
    return lib.autograd.grad(gw.sum(), w)


# --- fold / unfold, pixel shuffle -----------------------------------------------------------------------------

def test_unfold_fold():
    twin(lambda lib, x: F(lib).unfold(x, (2, 3), dilation=1, padding=1, stride=(2, 1)), X4)
    twin(lambda lib, x: F(lib).unfold(x, 2, dilation=2), rand(3, 5, 6))
    twin(lambda lib, c: F(lib).fold(c, (3, 4), 2), rand(2, 12, 6))
    twin(lambda lib, c: F(lib).fold(c, (5, 4), (2, 3), padding=1, stride=2), rand(12, 6))
    twin(lambda lib, x: torch.nn.Fold((3, 4), 2)(torch.nn.Unfold(2)(x)), rand(2, 3, 3, 4), check=False)


def test_fold_unfold_errors():
    same(lambda lib: F(lib).unfold(lib.ones(3, 4, requires_grad=True), 2))
    same(lambda lib: F(lib).fold(lib.ones(2, 12, 5, requires_grad=True), (3, 4), 2))


def test_pixel_shuffle():
    twin(lambda lib, x: F(lib).pixel_shuffle(x, 2), rand(2, 8, 2, 3))
    twin(lambda lib, x: F(lib).pixel_unshuffle(x, 2), rand(3, 4, 6))
    twin(lambda lib, x: torch.nn.PixelUnshuffle(3)(torch.nn.PixelShuffle(3)(x)), rand(1, 9, 2, 2), check=False)
    twin(lambda lib, x: lib.pixel_shuffle(x, 1), rand(2, 3, 2, 2))
    same(lambda lib: F(lib).pixel_shuffle(lib.ones(2, 7, 2, 2, requires_grad=True), 2))
    same(lambda lib: F(lib).pixel_unshuffle(lib.ones(2, 4, 3, 2, requires_grad=True), 2))


# --- celu, selu, mish, rrelu ----------------------------------------------------------------------------------

XA = torch.cat([rand(10) * 3, torch.tensor([0.0, -1e-3, 25.0, -30.0], dtype=torch.float64)])


@pytest.mark.parametrize("name", ["celu", "celu 0.5", "selu", "mish", "rrelu eval", "CELU", "SELU", "Mish", "RReLU"])
def test_activations(name):
    fn = {"celu": lambda lib, x: F(lib).celu(x), "celu 0.5": lambda lib, x: F(lib).celu(x, alpha=0.5),
          "selu": lambda lib, x: F(lib).selu(x), "mish": lambda lib, x: F(lib).mish(x),
          "rrelu eval": lambda lib, x: F(lib).rrelu(x, 0.1, 0.4),
          "CELU": lambda lib, x: torch.nn.CELU(2.0)(x), "SELU": lambda lib, x: torch.nn.SELU()(x),
          "Mish": lambda lib, x: torch.nn.Mish()(x), "RReLU": lambda lib, x: torch.nn.RReLU().eval()(x)}[name]
    twin(fn, XA, check=False)   # (XA has 0, where celu and selu have a kink)
    if name in ("celu", "celu 0.5", "selu", "mish"):
        twin(fn, rand(6))


def test_rrelu_training_draws_torchs_slopes():
    """With the same seed, teachgrad's rrelu draws torch's slopes (torch's own kernel draws them)."""
    def fn(lib, x):
        torch.manual_seed(7)
        return F(lib).rrelu(x, 0.1, 0.3, training=True)
    twin(fn, XA, check=False)

    def module(lib, x):
        torch.manual_seed(3)
        return torch.nn.RReLU(0.2, 0.5).train()(x)
    twin(module, rand(3, 4), check=False)


def test_activation_errors():
    same(lambda lib: F(lib).celu(lib.ones(3, requires_grad=True), alpha=0.0))
    same(lambda lib: F(lib).rrelu(lib.ones(3, requires_grad=True), 0.5, 0.1, training=True))


# --- circular padding, cosine similarity, pairwise distance ---------------------------------------------------

CIRCULAR = [((1, 2), X3), ((1, 2, 2, 0), X4), ((0, 1, 2, 1, 1, 1), X5), ((-1, 2), X3), ((1, 1), rand(3, 4)),
            ((2, -1, 1, 1), X4)]


@pytest.mark.parametrize("pad, x", CIRCULAR, ids=[str(c[0]) for c in CIRCULAR])
def test_circular_pad(pad, x):
    twin(lambda lib, x: F(lib).pad(x, pad, mode="circular"), x, graph2=False)


def test_circular_pad_errors_and_conv_modules():
    same(lambda lib: F(lib).pad(lib.ones(2, 3, 4, requires_grad=True), (5, 0), mode="circular"))
    same(lambda lib: F(lib).pad(lib.ones(4, requires_grad=True), (1, 1), mode="circular"))
    same(lambda lib: F(lib).pad(lib.ones(2, 3, 4, requires_grad=True), (1, 1, 1, 1, 1, 1), mode="circular"))
    torch.manual_seed(0)
    for conv, x in ((torch.nn.Conv1d(3, 2, 3, padding=1, padding_mode="circular").double(), X3),
                    (torch.nn.Conv2d(3, 2, 3, padding=(1, 2), padding_mode="circular").double(), X4),
                    (torch.nn.Conv3d(2, 2, 2, padding=1, padding_mode="circular").double(), X5)):
        twin(lambda lib, x: conv(x), x, second=False, forward=False, check=False)


def test_cosine_similarity_and_pairwise_distance():
    twin(lambda lib, a, b: F(lib).cosine_similarity(a, b), X4, rand(2, 3, 4, 5))
    twin(lambda lib, a, b: F(lib).cosine_similarity(a, b, dim=-1, eps=1e-3), rand(4, 3), rand(1, 3))
    twin(lambda lib, a, b: lib.cosine_similarity(a, b, 0), rand(5), rand(5))
    twin(lambda lib, a, b: torch.nn.CosineSimilarity(dim=2)(a, b), X4, X4 * 2 + 1, check=False)
    twin(lambda lib, a, b: F(lib).pairwise_distance(a, b), rand(4, 3), rand(4, 3))
    twin(lambda lib, a, b: torch.nn.PairwiseDistance(p=1.5, keepdim=True)(a, b), rand(4, 3), rand(4, 3),
         check=False)
    twin(lambda lib, a, b: lib.pairwise_distance(a, b), rand(4, 3), rand(4, 3), check=False)
    same(lambda lib: F(lib).cosine_similarity(lib.ones(3, 2), lib.ones(4, 2)))


# --- learners' programs ---------------------------------------------------------------------------------------

def both(program):
    """program(lib) under both libraries: its returned values and gradients equal."""
    torch.manual_seed(0)
    G.manual_seed(0)
    ours = program(tg)
    torch.manual_seed(0)
    G.manual_seed(0)
    theirs = program(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(plain(a), plain(b), atol=1e-9, rtol=1e-7)


def params(lib, *shapes):
    torch.manual_seed(1)
    return [lib.tensor(torch.randn(*s, dtype=torch.float64) * 0.5, requires_grad=True) for s in shapes]


def test_program_unet_upsampling():
    def program(lib):
        x = lib.tensor(rand(2, 3, 8, 8)) if lib is tg else rand(2, 3, 8, 8)
        w1, w2, w3 = params(lib, (4, 3, 3, 3), (4, 4, 3, 3), (1, 8, 1, 1))
        down = F(lib).max_pool2d(F(lib).relu(F(lib).conv2d(x, w1, padding=1)), 2)
        mid = F(lib).relu(F(lib).conv2d(down, w2, padding=1))
        up = F(lib).interpolate(mid, scale_factor=2, mode="bilinear", align_corners=False)
        skip = F(lib).relu(F(lib).conv2d(x, w1, padding=1))
        out = F(lib).conv2d(lib.cat([up, skip], 1), w3)
        loss = (out.sigmoid() - 0.5).pow(2).mean()
        return [loss, *lib.autograd.grad(loss, [w1, w2, w3])]
    both(program)


def test_program_spatial_transformer():
    def program(lib):
        img = lib.tensor(rand(2, 1, 6, 6)) if lib is tg else rand(2, 1, 6, 6)
        w_loc, = params(lib, (36, 6))
        theta = (img.reshape(2, 36) @ w_loc * 0.1 + lib.tensor([1.0, 0, 0, 0, 1, 0], dtype=torch.float64))
        g = F(lib).affine_grid(theta.reshape(2, 2, 3), (2, 1, 4, 4), align_corners=False)
        warped = F(lib).grid_sample(img, g, align_corners=False)
        loss = warped.pow(2).mean()
        return [loss, *lib.autograd.grad(loss, [w_loc])]
    both(program)


def test_program_norms_in_a_conv_net():
    def program(lib):
        x = lib.tensor(rand(3, 2, 5, 5)) if lib is tg else rand(3, 2, 5, 5)
        w1, w2, gamma, beta = params(lib, (4, 2, 3, 3), (4, 4, 3, 3), (4,), (4,))
        h = F(lib).group_norm(F(lib).conv2d(x, w1, padding=1), 2, gamma, beta)
        h = F(lib).instance_norm(F(lib).conv2d(F(lib).silu(h), w2), weight=gamma, bias=beta)
        loss = h.relu().mean()
        return [loss, *lib.autograd.grad(loss, [w1, w2, gamma, beta])]
    both(program)


def test_program_bag_of_words():
    def program(lib):
        text = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
        offsets = torch.tensor([0, 4, 7])
        table, w = params(lib, (10, 4), (4, 2))
        features = F(lib).embedding_bag(text, table, offsets, mode="mean")
        loss = F(lib).cross_entropy(features @ w, torch.tensor([0, 1, 1]))
        return [loss, *lib.autograd.grad(loss, [table, w])]
    both(program)


def test_program_hand_written_convolution():
    def program(lib):
        x = lib.tensor(rand(2, 3, 5, 6)) if lib is tg else rand(2, 3, 5, 6)
        w, = params(lib, (4, 3, 3, 3))
        cols = F(lib).unfold(x, 3, padding=1)                  # (N, C·9, L)
        out = (w.reshape(4, -1) @ cols).reshape(2, 4, 5, 6)    # the convolution as a product
        back = F(lib).fold(cols, (5, 6), 3, padding=1)          # each pixel times the windows it is in
        loss = out.pow(2).mean() + back.mean()
        return [loss, *lib.autograd.grad(loss, [w]), out - F(lib).conv2d(x, w, padding=1)]
    both(program)


def test_program_mlp_with_celu_selu_mish():
    def program(lib):
        x = lib.tensor(rand(8, 5)) if lib is tg else rand(8, 5)
        w1, w2, w3, w4 = params(lib, (5, 6), (6, 6), (6, 6), (6, 1))
        h = F(lib).mish(F(lib).selu(F(lib).celu(x @ w1, 0.7) @ w2) @ w3)
        loss = F(lib).rrelu(h @ w4).pow(2).mean()
        return [loss, *lib.autograd.grad(loss, [w1, w2, w3, w4])]
    both(program)


def test_program_circular_conv():
    def program(lib):
        x = lib.tensor(rand(2, 1, 8)) if lib is tg else rand(2, 1, 8)   # a ring of 8 cells
        w, = params(lib, (1, 1, 3))
        y = F(lib).conv1d(F(lib).pad(x, (1, 1), mode="circular"), w)
        loss = y.pow(2).sum()
        return [loss, *lib.autograd.grad(loss, [w])]
    both(program)


def test_program_super_resolution_head():
    def program(lib):
        x = lib.tensor(rand(1, 2, 4, 4)) if lib is tg else rand(1, 2, 4, 4)
        w, = params(lib, (12, 2, 3, 3))
        hi = F(lib).pixel_shuffle(F(lib).conv2d(x, w, padding=1), 2)   # (1, 3, 8, 8)
        target = F(lib).interpolate(x[:, :1], scale_factor=2, mode="bicubic", align_corners=False)
        loss = F(lib).mse_loss(hi[:, :1], target)
        return [loss, *lib.autograd.grad(loss, [w])]
    both(program)


def test_program_contrastive_loss():
    def program(lib):
        a = lib.tensor(rand(6, 4)) if lib is tg else rand(6, 4)
        w, = params(lib, (4, 3))
        z = a @ w
        sim = F(lib).cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=-1) / 0.5
        sim = sim - lib.eye(6, dtype=torch.float64) * 1e4
        loss = F(lib).cross_entropy(sim, torch.tensor([1, 0, 3, 2, 5, 4]))
        return [loss, *lib.autograd.grad(loss, [w])]
    both(program)


def test_program_local_response_norm():
    def program(lib):
        x = lib.tensor(rand(2, 3, 6, 6)) if lib is tg else rand(2, 3, 6, 6)
        w, = params(lib, (5, 3, 3, 3))
        h = F(lib).local_response_norm(F(lib).relu(F(lib).conv2d(x, w)), size=3)
        loss = h.mean()
        return [loss, *lib.autograd.grad(loss, [w])]
    both(program)


# --- vmap, over the ops that declare a batching rule ------------------------------------------------------------

VMAPPED = [
    ("interpolate bilinear", lambda F_, x: F_.interpolate(x, scale_factor=2, mode="bilinear"), rand(3, 2, 2, 3, 4)),
    ("interpolate nearest 1d", lambda F_, x: F_.interpolate(x, size=7), rand(3, 2, 2, 5)),
    ("interpolate trilinear", lambda F_, x: F_.interpolate(x, scale_factor=2, mode="trilinear"),
     rand(2, 1, 2, 2, 3, 2)),
    ("area 3d", lambda F_, x: F_.interpolate(x, size=(2, 2, 2), mode="area"), rand(2, 1, 2, 3, 4, 3)),
    ("pixel_shuffle", lambda F_, x: F_.pixel_shuffle(x, 2), rand(3, 2, 8, 2, 2)),
    ("pixel_unshuffle", lambda F_, x: F_.pixel_unshuffle(x, 2), rand(3, 2, 4, 4)),
    ("unfold", lambda F_, x: F_.unfold(x, 2), rand(3, 2, 2, 3, 4)),
    ("fold", lambda F_, x: F_.fold(x, (3, 4), 2), rand(3, 2, 8, 6)),
    ("celu", lambda F_, x: F_.celu(x, 0.5), rand(3, 4)),
    ("selu", lambda F_, x: F_.selu(x), rand(3, 4)),
    ("mish", lambda F_, x: F_.mish(x), rand(3, 4)),
]


@pytest.mark.parametrize("name, fn, x", VMAPPED, ids=[c[0] for c in VMAPPED])
def test_vmap(name, fn, x):
    """tg.func.vmap over the batch dim gives torch.func.vmap's values, and gradients through it."""
    ours_x, theirs_x = tg.Variable(x.clone(), requires_grad=True), x.clone().requires_grad_(True)
    ours = tg.func.vmap(lambda v: fn(tg.nn.functional, v))(ours_x)
    theirs = torch.func.vmap(lambda v: fn(TF, v))(theirs_x)
    torch.testing.assert_close(plain(ours), theirs.detach())
    ours.pow(2).sum().backward()
    theirs.pow(2).sum().backward()
    torch.testing.assert_close(ours_x.grad.data, theirs_x.grad)


def test_native_group_norm_statistics_are_differentiable():
    """torch.native_group_norm's mean and rstd carry gradients (and tangents) as torch's do."""
    def fn(lib, x, w):
        out, mean, rstd = lib.native_group_norm(x, w, None, 2, 4, 3, 2, 1e-5)
        return out.sum(0) + mean.sum() * 2 + rstd.sum(1).unsqueeze(1).unsqueeze(2)
    twin(fn, rand(2, 4, 3), rand(4), graph2=False)


# --- found by torch's reference inputs (op_db) --------------------------------------------------------------------

def test_rrelu_training_on_a_transposed_input():
    """torch draws the slopes into a contiguous noise tensor whatever the input's layout: so does teachgrad (a noise
    tensor laid out as a transposed input gave the right values and the wrong gradient)."""
    def fn(lib, x):
        torch.manual_seed(42)
        return F(lib).rrelu(x.t(), 0.0, 1.0, training=True)
    twin(fn, rand(40, 30), check=False)


def test_mish_second_derivative_where_exp_overflows():
    """torch's second derivative of mish goes through exp then log1p: nan where exp(x) overflows, as teachgrad's."""
    twin(lambda lib, x: F(lib).mish(x), torch.tensor([-501.0, -30.0, 0.5, 30.0, 1001.2], dtype=torch.float64),
         check=False)
