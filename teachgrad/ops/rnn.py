"""The ops only torch's recurrent layers record: two shape ops (the gates cut by `unsafe_chunk`, and the output
transposed in place for `batch_first`), and the oneDNN LSTM layer (MkldnnRnnLayerBackward0), one node for a whole
layer, which torch records for an LSTM in float32 on the CPU.

torch's CPU LSTM cuts its gate pre-activations with `gates.unsafe_chunk(4, 1)`: pieces that share the gates'
storage but that autograd does not track as views (nobody else holds the gates, so no in-place write can reach
them through a view). Its node is UnsafeSplitBackward0, and the backward is Split's: the pieces' gradients are
joined back along the dimension.

torch's GRU and plain RNN turn a `batch_first` output back with `output.transpose_(0, 1)`, an in-place
transpose of a tensor they made themselves; torch records TransposeBackward1 for it, and the output is no view.
No one else holds that tensor, so a transpose recorded as a fresh (non-view) output under the same node name is
the same graph: the gradient is transposed back.

teachgrad/nn/rnn.py uses them. Guarded by tests/test_rnn.py (node names and gradients against torch's layers) and
tests/test_lstm_onednn.py (the oneDNN layer: float32 LSTMs against torch's).
"""
import torch

from ..core.function import Function
from .shape import Cat, Split, Stack, Transpose, _join


class UnsafeSplit(Split, node="UnsafeSplitBackward0", is_view=False, batching=("along", 2)):
    """a.unsafe_split(size, dim) / a.unsafe_chunk(n, dim): Split's pieces, not tracked as views of a."""


class TransposeInPlace(Transpose, node="TransposeBackward1", is_view=False, batching=("along", 1, 2)):
    """a.transpose_(dim0, dim1) of a tensor nobody else holds: Transpose's rule, recorded as a fresh output."""


# --- torch's oneDNN LSTM layer --------------------------------------------------------------------------

FORWARD_AD_REFUSED = ("Trying to use forward AD with mkldnn_rnn_layer that does not support it because it has not "
                      "been implemented yet.\nPlease file an issue to PyTorch at "
                      "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
                      "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml")


class MkldnnRnnLayer(Function, node="MkldnnRnnLayerBackward0",
                     saves=("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_", "result0", "result3")):
    """One LSTM layer in one direction over the whole sequence, as one node: what torch records for an LSTM in
    float32 on the CPU, where oneDNN (mkldnn) runs each layer in one kernel.

    Inputs as torch's `mkldnn_rnn_layer` takes them: input (seq, batch, in), weight0 = W_ih (4h, in),
    weight1 = W_hh (4h, h), weight2 = b_ih, weight3 = b_hh (zeros when the module has no bias), hx_, cx_ (batch, h).
    Returns (output (seq, batch, h), h of the last step, c of the last step); `reverse` runs the steps last to first.

    Forward, each step: gates = (h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih), cut in four: i, f, g, o;
    c' = σ(f) c + σ(i) tanh(g), h' = σ(o) tanh(c'). It keeps every step's activated gates and cell state (torch
    keeps its kernel's workspace, result3) for backward.

    Backward is backpropagation through time, last step first: the gradient reaching h' (from the output and
    from the next step) and c' give the gates' gradients, d(pre-activation) = d(activation) * its derivative
    (σ' = σ(1-σ), tanh' = 1-tanh²); those give the input's and h's gradients (times W_ih, W_hh) and, summed over
    the steps, the weights' and biases'. Written with the gradient's own ops; with create_graph it runs the steps
    again on Variables first, so that the gradient is differentiable again, as torch's is.
    """

    @staticmethod
    def forward(ctx, input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
        ctx.reverse = reverse
        output, h, c, workspace = _lstm_steps(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse)
        ctx.save_for_backward(input, w_ih, w_hh, b_ih, b_hh, hx, cx, output, workspace)
        return output, h, c

    @staticmethod
    def backward(ctx, grad_output, grad_hy, grad_cy):
        input, w_ih, w_hh, b_ih, b_hh, hx, cx, output, workspace = ctx.saved_tensors
        if not isinstance(grad_output, torch.Tensor):   # create_graph: the steps again, on Variables, so that the
            # gradient knows how the gates and states it reads depend on the inputs (what was saved does not)
            output, _, _, workspace = _lstm_steps(input, w_ih, w_hh, b_ih, b_hh, hx, cx, ctx.reverse)
        seq, size = input.size(0), hx.size(1)
        steps = range(seq) if ctx.reverse else range(seq - 1, -1, -1)       # backward: the forward's steps reversed
        before = (lambda t: t + 1) if ctx.reverse else (lambda t: t - 1)     # the step whose state step t read
        grad_h, grad_c = grad_hy, grad_cy
        grad_gates, h_before = [None] * seq, [None] * seq
        for t in steps:
            i, f, g, o, c = (workspace[t].narrow(1, k * size, size) for k in range(5))
            previous = before(t)
            h_prev, c_prev = (output[previous], workspace[previous].narrow(1, 4 * size, size)) \
                if 0 <= previous < seq else (hx, cx)
            grad_h = grad_h + grad_output[t]
            tanh_c = c.tanh()
            grad_o = grad_h * tanh_c
            grad_c = grad_c + grad_h * o * (1 - tanh_c * tanh_c)
            grad_i, grad_f, grad_g = grad_c * g, grad_c * c_prev, grad_c * i
            grad_c = grad_c * f
            pieces = (grad_i * i * (1 - i), grad_f * f * (1 - f), grad_g * (1 - g * g), grad_o * o * (1 - o))
            grad_gates[t], h_before[t] = _join(torch.cat, Cat, 1, pieces), h_prev
            grad_h = grad_gates[t].matmul(w_hh)
        grad_gates = _join(torch.stack, Stack, 0, grad_gates)               # (seq, batch, 4h)
        rows = grad_gates.reshape(-1, grad_gates.size(-1))
        grad_input = grad_gates.matmul(w_ih)
        grad_w_ih = rows.t().matmul(input.reshape(-1, input.size(-1)))
        grad_w_hh = rows.t().matmul(_join(torch.stack, Stack, 0, h_before).reshape(-1, size))
        grad_bias = rows.sum(0)
        return grad_input, grad_w_ih, grad_w_hh, grad_bias, grad_bias, grad_h, grad_c, None

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError(FORWARD_AD_REFUSED)


def _lstm_steps(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
    """The layer's steps, on torch tensors (forward) or on Variables (backward with create_graph): returns the output
    (seq, batch, h), the last h and c, and the workspace (seq, batch, 5h): each step's i, f, g, o and c."""
    x_parts = input.matmul(w_ih.t()) + b_ih
    steps = range(input.size(0) - 1, -1, -1) if reverse else range(input.size(0))
    h, c = hx, cx
    outputs, workspace = [None] * input.size(0), [None] * input.size(0)
    for t in steps:
        gates = (h.matmul(w_hh.t()) + b_hh) + x_parts[t]
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        c = f * c + i * g
        h = o * c.tanh()
        outputs[t], workspace[t] = h, _join(torch.cat, Cat, 1, (i, f, g, o, c))
    return _join(torch.stack, Stack, 0, outputs), h, c, _join(torch.stack, Stack, 0, workspace)
