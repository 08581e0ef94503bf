"""Two shape ops that only torch's recurrent layers record: the gates cut by `unsafe_chunk`, and the output
transposed in place for `batch_first`.

torch's CPU LSTM cuts its gate pre-activations with `gates.unsafe_chunk(4, 1)`: pieces that share the gates'
storage but that autograd does not track as views (nobody else holds the gates, so no in-place write can reach
them through a view). Its node is UnsafeSplitBackward0, and the backward is Split's: the pieces' gradients are
joined back along the dimension.

torch's GRU and plain RNN turn a `batch_first` output back with `output.transpose_(0, 1)`, an in-place
transpose of a tensor they made themselves; torch records TransposeBackward1 for it, and the output is no view.
No one else holds that tensor, so a transpose recorded as a fresh (non-view) output under the same node name is
the same graph: the gradient is transposed back.

teachgrad/nn/rnn.py uses them. Guarded by tests/test_rnn.py (node names and gradients against torch's layers).
"""
from .shape import Split, Transpose


class UnsafeSplit(Split, node="UnsafeSplitBackward0", is_view=False):
    """a.unsafe_split(size, dim) / a.unsafe_chunk(n, dim): Split's pieces, not tracked as views of a."""


class TransposeInPlace(Transpose, node="TransposeBackward1", is_view=False):
    """a.transpose_(dim0, dim1) of a tensor nobody else holds: Transpose's rule, recorded as a fresh output."""
