"""Issue 34: F.ctc_loss, torch.ctc_loss and nn.CTCLoss on Variables (teachgrad/ops/losses.py CtcLoss,
teachgrad/nn/functional.py ctc_loss).

Twins against torch: the loss, the gradient of the log-probabilities and the node names, to the bit, in float64
and float32; lengths as tuples and as tensors, every reduction, zero_infinity, unbatched input; the second
derivative refused as torch refuses it; errors with torch's type and message.
"""
import pytest
import torch

import teachgrad as tg
from tests.helpers import graph_names
from tests.twins import same

DTYPES = (torch.float64, torch.float32)


def _plain(t):
    return t.data if isinstance(t, tg.Variable) else t.detach()


def _run(lib, dtype, reduction="mean", zero_infinity=False, tensor_lengths=False, unbatched=False, module=False,
         input_lengths=(7, 6, 5), target_lengths=(3, 2, 3), concatenated=False):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(7, 3, 5, dtype=dtype, generator=g)
    targets = torch.randint(1, 5, (3, 3), generator=g)
    if concatenated:
        targets = torch.cat([targets[i, :n] for i, n in enumerate(target_lengths)])
    x = lib.tensor(logits.tolist(), dtype=dtype, requires_grad=True)
    log_probs = x.log_softmax(2)
    lengths = (input_lengths, target_lengths)
    if unbatched:
        log_probs, targets, lengths = log_probs[:, 0], targets[0], (input_lengths[:1], target_lengths[:1])
    if tensor_lengths:
        lengths = tuple(torch.tensor(n) for n in lengths)
    if module:
        loss = lib.nn.CTCLoss(reduction=reduction, zero_infinity=zero_infinity)(log_probs, targets, *lengths)
    else:
        loss = lib.nn.functional.ctc_loss(log_probs, targets, *lengths, reduction=reduction,
                                          zero_infinity=zero_infinity)
    names = graph_names(loss)
    (loss * torch.linspace(1, 2, loss.numel(), dtype=dtype).reshape(loss.shape)).sum().backward()
    return _plain(loss), _plain(x.grad), names


CASES = {
    "mean": dict(),
    "sum": dict(reduction="sum"),
    "none": dict(reduction="none"),
    "tensor lengths": dict(tensor_lengths=True),
    "concatenated targets": dict(concatenated=True),
    "unbatched, none": dict(unbatched=True, reduction="none"),
    "unbatched, mean": dict(unbatched=True),
    "nn.CTCLoss": dict(module=True, reduction="sum"),
    # an input too short for its target: an infinite loss, or 0 with zero_infinity (and a zero gradient)
    "impossible alignment": dict(input_lengths=(7, 2, 5), reduction="none"),
    "zero_infinity": dict(input_lengths=(7, 2, 5), zero_infinity=True),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_ctc_loss_is_torchs_to_the_bit(case, dtype):
    ours, theirs = _run(tg, dtype, **CASES[case]), _run(torch, dtype, **CASES[case])
    assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1]), (ours, theirs)
    assert ours[2] == theirs[2]


def test_torch_ctc_loss_takes_torchs_arguments():
    def run(lib):
        x = lib.tensor(torch.randn(6, 2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).tolist(),
                       dtype=torch.float64, requires_grad=True)
        loss = lib.ctc_loss(x.log_softmax(2), torch.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2], 0, 2, False)
        loss.backward()
        return loss, x.grad, graph_names(loss)
    same(run)


def test_ctc_loss_second_derivative_is_refused_as_torch_refuses_it():
    def run(lib):
        x = lib.tensor(torch.randn(6, 2, 4, dtype=torch.float64).tolist(), dtype=torch.float64, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(x.log_softmax(2), torch.tensor([[1, 2], [3, 3]]), (6, 5), (2, 2))
        grad, = lib.autograd.grad(loss, x, create_graph=True)
        first = _plain(grad).clone()
        grad.sum().backward()
        return first
    assert same(run)[0] == "raised"


ERRORS = {
    "reduction": dict(reduction="average"),
    "input length beyond the input": dict(input_lengths=(8, 6, 5)),
    "target length beyond the targets": dict(target_lengths=(3, 4, 3)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_ctc_loss_errors_are_torchs(case):
    assert same(lambda lib: _run(lib, torch.float64, **ERRORS[case]))[0] == "raised"
