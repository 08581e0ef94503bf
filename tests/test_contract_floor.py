"""The contract floor (benchmarks/contract_floor.py), the bench's yardstick for teachgrad's speed, computes what
torch computes: a yardstick that computed something else would measure nothing. `make bench` checks it again
before it times anything; this keeps it right where CI runs, without the bench's extras."""
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import contract_floor as cf  # noqa: E402
from mlp import mse_step  # noqa: E402  (the bench's step: the same lines for torch and the contract floor)


def _step(params, x, y):
    loss, _ = mse_step(params, x, y)()
    return loss


@pytest.mark.parametrize("width, batch", [(4, 16), (16, 32)])
def test_the_mlp_step_gives_torchs_loss_and_gradients(width, batch):
    torch.manual_seed(width)
    data = [(torch.randn(width, width), torch.randn(width)) for _ in range(4)]
    x, y = torch.randn(batch, width), torch.randn(batch, width)
    theirs = [(w.clone().requires_grad_(), b.clone().requires_grad_()) for w, b in data]
    ours = [(cf.Variable(w.clone(), True), cf.Variable(b.clone(), True)) for w, b in data]
    expected = _step(theirs, x, y)
    got = _step(ours, cf.Variable(x), cf.Variable(y))
    torch.testing.assert_close(got.data, expected.detach())
    for (w, b), (tw, tb) in zip(ours, theirs):
        torch.testing.assert_close(w.grad.data, tw.grad)
        torch.testing.assert_close(b.grad.data, tb.grad)
        assert w.grad.data.stride() == tw.grad.stride()


def test_a_column_major_weight_gets_a_gradient_laid_out_as_torchs():
    data = torch.randn(4, 3).t()                   # (3, 4), column-major, as weight.t() in F.linear
    x = torch.randn(5, 3)
    tw = data.clone(memory_format=torch.preserve_format).requires_grad_()
    ((x @ tw) ** 2).mean().backward()
    ow = cf.Variable(data.clone(memory_format=torch.preserve_format), True)
    ((cf.Variable(x) @ ow) ** 2).mean().backward()
    assert tw.grad.stride() == (1, 3)
    torch.testing.assert_close(ow.grad.data, tw.grad)
    assert ow.grad.data.stride() == tw.grad.stride()


def test_the_chain_gives_torchs_gradient():
    x = cf.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y * 1.001
    y.backward()
    tx = torch.tensor(2.0, requires_grad=True)
    ty = tx
    for _ in range(1000):
        ty = ty * 1.001
    ty.backward()
    torch.testing.assert_close(x.grad.data, tx.grad)


def test_no_grad_records_nothing():
    w = cf.Variable(torch.randn(3, 3), True)
    with cf.no_grad():
        out = (cf.Variable(torch.randn(2, 3)) @ w).relu()
    assert out.grad_fn is None


def test_a_saved_tensor_modified_in_place_is_refused():
    w = cf.Variable(torch.randn(3, 3), True)
    x = cf.Variable(torch.randn(2, 3))
    loss = ((x @ w) ** 2).mean()
    x.data.add_(1)                                 # x was saved for w's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
