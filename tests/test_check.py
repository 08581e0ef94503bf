"""The twin checks learners use in the notebooks: agree() and twin() catch every kind of difference."""
import pytest
import torch

import teachgrad as tg
from teachgrad.check import agree, describe, twin


def example(lib):
    p = lib.tensor(3.0, requires_grad=True)
    q = lib.tensor(5.0, requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True)
    t = (p + q) * s
    t.backward()
    return {"t": t, "p": p, "s": s}


def test_twin_runs_both_and_prints_one_line_each(capsys):
    ours, theirs = twin(example)
    assert isinstance(ours["t"], tg.Variable) and isinstance(theirs["t"], torch.Tensor)
    assert capsys.readouterr().out.splitlines() == [
        "✓ t = 16  grad_fn=MulBackward0  (same in torch)",
        "✓ p = 3  grad=2  (same in torch)",
        "✓ s = 2  grad=8  (same in torch)",
    ]


def test_agree_names_a_different_value():
    with pytest.raises(AssertionError, match=r"x: teachgrad and torch differ: value \[1, 2\] vs torch's \[1, 3\]"):
        agree(tg.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]), "x", quiet=True)


def test_agree_names_a_different_shape_and_dtype():
    with pytest.raises(AssertionError, match=r"shape \(2,\) vs torch's \(3,\)"):
        agree(tg.ones(2), torch.ones(3), quiet=True)
    with pytest.raises(AssertionError, match="dtype torch.float32 vs torch's torch.float64"):
        agree(tg.ones(2), torch.ones(2, dtype=torch.float64), quiet=True)


def test_agree_names_a_different_graph():
    x, x_t = tg.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    with pytest.raises(AssertionError, match="grad_fn MulBackward0 vs torch's AddBackward0"):
        agree(x * 1, x_t + 0, quiet=True)
    with pytest.raises(AssertionError, match="requires_grad False vs torch's True"):
        agree(tg.ones(2), torch.ones(2, requires_grad=True), quiet=True)


def test_agree_names_a_different_grad():
    x, x_t = tg.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    (x_t * 3).sum().backward()
    with pytest.raises(AssertionError, match=r"grad \[2, 2\] vs torch's \[3, 3\]"):
        agree(x, x_t, "x", quiet=True)
    y = tg.ones(2, requires_grad=True)
    with pytest.raises(AssertionError, match=r"grad None vs torch's \[3, 3\]"):
        agree(y, x_t, quiet=True)


def test_twin_needs_the_same_names():
    with pytest.raises(AssertionError, match="different names"):
        twin(lambda lib: {"a": lib.ones(1)} if lib is tg else {"b": lib.ones(1)})


def test_describe_is_short_and_stable():
    assert describe(torch.tensor(1 / 3)) == "0.3333"
    assert describe(torch.tensor([1, 2])) == "[1, 2]"
    assert describe(torch.zeros(2, 2)) == "tensor of shape (2, 2): [0, 0, 0, 0]"
    assert describe(torch.zeros(10)) == "tensor of shape (10,)"
    assert describe(torch.zeros(3, device="meta")) == "meta tensor of shape (3,)"
