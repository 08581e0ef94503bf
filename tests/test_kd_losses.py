"""Issue 34 (module_db's nn.CrossEntropyLoss): nll_loss and cross_entropy on K-d input (N, C, d1, ...), with class
indices (torch's nll_loss2d, NllLoss2DBackward0, the input viewed as (N, C, 1, -1) where it is not 4-d) and with
class probabilities (a weight viewed along the class dim), and cross_entropy's label_smoothing, against torch:
values, node names along the graph, gradients, second derivatives, tangents, and torch's errors (targets of the
wrong shape, label_smoothing above 1, ignore_index with probabilities)."""
import pytest
import torch

import teachgrad as tg

from .helpers import graph_names
from .twins import assert_twins, same

REDUCTIONS = ["mean", "sum", "none"]
SHAPES = [(2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 3, 2), (2, 3), (3,)]


def F(lib):
    return tg.nn.functional if lib is tg else torch.nn.functional


def _data(shape, seed=0):
    return torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)).tolist()


def _indices(shape, ignore=False):
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = torch.randint(0, shape[1] if len(shape) > 1 else shape[0], target_shape,
                           generator=torch.Generator().manual_seed(1))
    if ignore and target.numel() > 1:
        target.view(-1)[::2] = 1   # ignore_index=1 below: some entries ignored
    return target


def _probabilities(shape):
    dim = 1 if len(shape) > 1 else 0
    return torch.rand(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2)).softmax(dim)


WEIGHT = torch.tensor([0.2, 1.5, 0.7], dtype=torch.float64)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_and_cross_entropy_with_class_indices(shape, reduction, weighted):
    target, weight = _indices(shape), WEIGHT if weighted else None
    assert_twins(lambda lib, x: F(lib).nll_loss(x, target, weight, reduction=reduction), _data(shape))
    assert_twins(lambda lib, x: F(lib).cross_entropy(x, target, weight, reduction=reduction), _data(shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES[:3], ids=str)
def test_ignore_index_on_kd_input(shape, reduction):
    target = _indices(shape, ignore=True)
    assert_twins(lambda lib, x: F(lib).cross_entropy(x, target, WEIGHT, ignore_index=1, reduction=reduction),
                 _data(shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_with_class_probabilities(shape, reduction, weighted):
    target, weight = _probabilities(shape), WEIGHT if weighted else None
    assert_twins(lambda lib, x: F(lib).cross_entropy(x, target, weight, reduction=reduction), _data(shape))


@pytest.mark.parametrize("shape", SHAPES[:3], ids=str)
def test_the_graph_has_torchs_nodes(shape):
    def names(lib, reduction, probabilities):
        x = lib.tensor(_data(shape), dtype=torch.float64, requires_grad=True)
        target = _probabilities(shape) if probabilities else _indices(shape)
        return graph_names(lib.nn.CrossEntropyLoss(WEIGHT, reduction=reduction)(x, target))
    for reduction in REDUCTIONS:
        for probabilities in (False, True):
            assert names(tg, reduction, probabilities) == names(torch, reduction, probabilities)
    assert "NllLoss2DBackward0" in names(torch, "mean", False)


@pytest.mark.parametrize("target_shape", [(2, 4, 6), (3, 4, 5), (2, 4)], ids=str)
def test_a_target_of_the_wrong_shape_gets_torchs_error(target_shape):
    for shape in [(2, 3, 4, 5), (2, 3, 4), (2, 3, 4, 5, 2)]:
        target = torch.zeros(target_shape, dtype=torch.long)
        same(lambda lib: F(lib).nll_loss(lib.tensor(_data(shape), dtype=torch.float64), target))
        same(lambda lib: F(lib).cross_entropy(lib.tensor(_data(shape), dtype=torch.float64), target))


def test_a_0_dim_input_gets_torchs_error():
    same(lambda lib: F(lib).nll_loss(lib.tensor(1.0, dtype=torch.float64), torch.tensor(0)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_label_smoothing_with_class_indices(shape, reduction, weighted, ignore):
    target, weight = _indices(shape, ignore=ignore), WEIGHT if weighted else None
    assert_twins(lambda lib, x: F(lib).cross_entropy(x, target, weight, ignore_index=1 if ignore else -100,
                                                     reduction=reduction, label_smoothing=0.3), _data(shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [False, True])
def test_label_smoothing_with_class_probabilities(shape, reduction, weighted):
    target, weight = _probabilities(shape), WEIGHT if weighted else None
    assert_twins(lambda lib, x: F(lib).cross_entropy(x, target, weight, reduction=reduction, label_smoothing=0.3),
                 _data(shape))


@pytest.mark.parametrize("probabilities", [False, True])
def test_label_smoothing_records_torchs_graph(probabilities):
    shape = (2, 3, 4)
    def names(lib, reduction, weight):
        x = lib.tensor(_data(shape), dtype=torch.float64, requires_grad=True)
        target = _probabilities(shape) if probabilities else _indices(shape, ignore=True)
        ignore_index = -100 if probabilities else 1   # (torch refuses an ignore_index with probabilities)
        return graph_names(lib.nn.CrossEntropyLoss(weight, ignore_index=ignore_index, reduction=reduction,
                                                   label_smoothing=0.25)(x, target))
    for reduction in REDUCTIONS:
        for weight in (None, WEIGHT):
            assert names(tg, reduction, weight) == names(torch, reduction, weight)


@pytest.mark.parametrize("smoothing", [-0.1, 1.5])
@pytest.mark.parametrize("probabilities", [False, True])
def test_label_smoothing_out_of_range_as_torch(smoothing, probabilities):
    """Above 1: torch's error; below 0: torch smooths nothing."""
    target = _probabilities((2, 3)) if probabilities else torch.tensor([0, 2])
    same(lambda lib: F(lib).cross_entropy(lib.tensor(_data((2, 3)), dtype=torch.float64), target,
                                          label_smoothing=smoothing))


@pytest.mark.parametrize("ignore_index", [1, 0, -5])
def test_ignore_index_with_class_probabilities_as_torch(ignore_index):
    same(lambda lib: F(lib).cross_entropy(lib.tensor(_data((2, 3)), dtype=torch.float64), _probabilities((2, 3)),
                                          ignore_index=ignore_index))
