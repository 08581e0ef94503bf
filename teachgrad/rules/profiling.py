"""torch's profiler sees teachgrad's backward as it sees its own: one range a node, under torch's names.

Inside `torch.autograd.profiler.profile()` (or `torch.profiler.profile()`), torch's engine records each node it runs
as `autograd::engine::evaluate_function: <name>` with the node's own `<name>` (`PowBackward0`,
`torch::autograd::AccumulateGrad`) inside it, around the kernels that node calls; `prof.key_averages().table()`
then lists those ranges beside the kernels. teachgrad's engine records the same ranges when a profiler is on, so a
learner's profile of a teachgrad program lists the same rows as torch's. It checks once per backward pass whether a
profiler is on (torch/csrc/autograd/engine.cpp, evaluate_function; torch/csrc/autograd/function.h, Node::operator()).

Guarded by tests/test_engine_fidelity.py (test_a_profile_of_backward_lists_torchs_rows).
"""
from typing import Callable

import torch
from torch.autograd.profiler import record_function

profiler_enabled: Callable[[], bool] = torch._C._autograd._profiler_enabled


def recorded(call_function: Callable) -> Callable:
    """`call_function(node, ...)`, each call recorded as torch's engine records a node it runs."""
    def call_recorded(node, *args):
        name = node.name()
        with record_function("autograd::engine::evaluate_function: " + name), record_function(name):
            return call_function(node, *args)
    return call_recorded
