"""The engine's work grows with the graph and no faster (issue 46), counted in bytecodes by benchmarks/scaling.py,
never timed: the same count on any machine, however busy. Before the fix, a node with n inputs (stack's) cost n * n:
its per-input count grew twentyfold from 100 inputs to 2,000."""
import importlib.util
import pathlib

import pytest

_path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "scaling.py"
_spec = importlib.util.spec_from_file_location("scaling", _path)
scaling = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scaling)


@pytest.mark.parametrize("case", ["fan-in", "views"])
def test_work_per_input_and_per_view_is_flat(case):
    small, large = scaling.counted_per_item(case, 100), scaling.counted_per_item(case, 2_000)
    assert 200 < small < 5_000   # (what is counted is the whole run: every op recorded and run)
    assert large / small < 1.05, f"{case}: {small:.0f} bytecodes per item at 100, {large:.0f} at 2,000"


def test_a_stack_of_leaves_keeps_torchs_gradients():
    import torch

    import teachgrad as tg
    data = [torch.randn(3) for _ in range(50)]
    ours = [tg.Variable(d.clone(), requires_grad=True) for d in data]
    theirs = [d.clone().requires_grad_() for d in data]
    (tg.stack(ours) ** 2).sum().backward()
    (torch.stack(theirs) ** 2).sum().backward()
    for o, t in zip(ours, theirs):
        assert torch.equal(o.grad.data, t.grad)
    assert len({o.grad.data.data_ptr() for o in ours}) == len(ours)   # each leaf's .grad its own memory
