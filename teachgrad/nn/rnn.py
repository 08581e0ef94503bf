"""torch's recurrent layers on Variables: `torch.lstm`, `torch.gru`, `torch.rnn_tanh`, `torch.rnn_relu` and their
cells (`torch.lstm_cell`, `torch.gru_cell`, `torch.rnn_tanh_cell`, `torch.rnn_relu_cell`), made of teachgrad's
ops the way torch makes them on the CPU.

    lstm = tg.nn.LSTM(10, 20, num_layers=2)   # torch's own module: tg.nn holds torch.nn's modules
    output, (h_n, c_n) = lstm(x)              # x a Variable: the graph is teachgrad's, the parameters its leaves

`tg.nn.LSTM` is `torch.nn.LSTM` itself, so its parameters (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0,
weight_hr_l0, the `_reverse` ones), their initialisation (uniform in ±1/sqrt(hidden_size), drawn in torch's order
from torch's generator), its checks of the arguments, its zero initial states and its unbatched (2-D) inputs are
torch's own Python code. Its forward ends in `torch.lstm(input, hx, params, ...)`, and with a Variable among the
arguments torch hands that call to teachgrad (teachgrad/api/interop.py), which runs `lstm` below. The cells end
in `torch.lstm_cell(...)` and the like, run by the cell functions below.

What torch computes on the CPU, and so what is recorded here, with torch's node names:

- a layer applies the input weights to every time step at once (`linear`: ViewBackward0 of AddmmBackward0),
  unbinds the steps (UnbindBackward0), runs the cell step by step and stacks its outputs (StackBackward0);
- the LSTM cell: gates = (h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih), cut in four (UnsafeSplitBackward0) into
  i, f, g, o; c' = σ(f) c + σ(i) tanh(g), h' = σ(o) tanh(c') (times W_hrᵀ when proj_size > 0);
- the GRU cell: both products cut in three; r = σ(hh_r + ih_r), z = σ(hh_z + ih_z),
  n = tanh(ih_n + hh_n r), h' = (h - n) z + n;
- the plain cell: h' = tanh (or relu) of (h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih);
- a reverse direction runs the steps last to first; the two directions' outputs are joined (CatBackward0);
- between layers, while training, dropout: the output times a mask drawn from torch's generator, as torch's
  dropout on the CPU draws it (so a seeded program drops what torch drops);
- h_n (and c_n) stack every layer's and direction's last state; batch_first transposes the input to
  time-major and the output back (the LSTM with `transpose`, the GRU and RNN with `transpose_`).

An LSTM in float32 on the CPU is what torch runs with oneDNN (torch.backends.mkldnn, when built in and enabled,
and without projections): one node per layer and direction, MkldnnRnnLayerBackward0 (teachgrad/ops/rnn.py), fed
a contiguous time-major input and `h_0[index]`; h_n and c_n stacked from the layers' last states. Other dtypes (and
projections) run step by step as above, as torch's do. Its bfloat16 and float16 oneDNN paths are not mirrored.

Not done, refused with a NotImplementedError: a packed sequence (nn.utils.rnn.pack_padded_sequence), and dropout
between layers while training off the CPU (torch's fused kernels draw other masks there). Off the CPU the
values are torch's to rounding, but torch records its fused kernel's node (CudnnRnnBackward0, ...).

Guarded by tests/test_rnn.py (twins of torch's modules and functions: values, gradients, node names, errors) and
tests/test_lstm_onednn.py (float32 LSTMs: torch's oneDNN layers).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional, Sequence, TypeAlias

import torch

from ..api import torch_functions as _tg
from ..core.variable import Variable
from ..ops.rnn import MkldnnRnnLayer, TransposeInPlace, UnsafeSplit
from ..rules import torch_leaves
from .functional import dropout_function
from .functional import linear as _linear_2d

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor

PACKED = ("teachgrad's {} does not take a packed sequence (nn.utils.rnn.pack_padded_sequence): pass the padded "
          "batch itself (and read each sequence's outputs up to its length)")

DROPOUT_OFF_CPU = ("teachgrad's recurrent layers draw the dropout masks between layers as torch does on the CPU; on a "
                   "{} device torch draws them in its device kernels (cuDNN's dropout on a GPU), which teachgrad does "
                   "not reproduce: train with dropout=0, or on the CPU")


class CellWeights(NamedTuple):
    """One layer's weights in one direction, in torch's order: w_ih, w_hh, b_ih, b_hh, w_hr (None where absent)."""
    w_ih: Variable
    w_hh: Variable
    b_ih: Optional[Variable] = None
    b_hh: Optional[Variable] = None
    w_hr: Optional[Variable] = None


# --- the whole sequence: torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu -----------------------------

def lstm(input: TensorLike, hx: Sequence[TensorLike], params: Sequence[TensorLike], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool = False) -> tuple[Variable, Variable, Variable]:
    """torch.lstm: an LSTM over a (seq, batch, feature) input (batch_first: (batch, seq, feature)).

    hx = (h_0, c_0), each (num_layers * num_directions, batch, size); `params` the module's flat weights.
    Returns (output, h_n, c_n). With projections (h_0 narrower than c_0), each layer's weights end in w_hr.
    """
    if isinstance(hx, (torch.Tensor, Variable)):   # torch.lstm(data, batch_sizes, hx, params, ...): packed
        raise NotImplementedError(PACKED.format("LSTM"))
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    h_0, c_0 = (_variable(h) for h in hx)
    has_projections = h_0.size(2) != c_0.size(2)
    weights = _weights(params, has_biases, has_projections)
    if _runs_on_onednn(input, h_0, weights, has_projections):
        return _onednn_layers(_variable(input), h_0, c_0, weights, num_layers, dropout, train, bidirectional,
                              batch_first)
    states = list(zip(h_0.unbind(0), c_0.unbind(0)))
    output, last = _stacked_layers(_lstm_step, _variable(input), states, weights, num_layers, dropout, train,
                                   bidirectional, batch_first, out_in_place=False)
    return output, _tg.stack([h for h, _ in last], 0), _tg.stack([c for _, c in last], 0)


def _runs_on_onednn(input, h_0, weights, has_projections) -> bool:
    """Whether torch runs this LSTM with oneDNN: float32 on the CPU, oneDNN built in and enabled
    (torch.backends.mkldnn), no projections, a non-empty input."""
    tensors = [input, h_0] + [w for cell in weights for w in cell if w is not None]
    return (torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled and not has_projections
            and input.dtype == torch.float32 and input.numel() != 0 and all(t.device.type == "cpu" for t in tensors))


def _onednn_layers(input, h_0, c_0, weights, num_layers, dropout, train, bidirectional, batch_first):
    """torch's oneDNN LSTM: each layer and direction one MkldnnRnnLayer node, fed a contiguous time-major input
    (a batch_first input transposed, then copied once for both directions: CloneBackward0) and its initial state `h_0[index]`
    (SelectBackward0); a module without bias gives the node zero biases. Between the layers as on the other path:
    the directions joined (CatBackward0), dropout while training; h_n and c_n stacked, the output transposed back."""
    directions = 2 if bidirectional else 1
    if h_0.size(0) != num_layers * directions or len(weights) != num_layers * directions:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    x = input.transpose(0, 1) if batch_first else input
    last_h, last_c = [], []
    for layer in range(num_layers):
        outputs, x = [], x.contiguous()   # one copy, read by both directions
        for direction in range(directions):
            index = layer * directions + direction
            w = weights[index]
            zeros = None if w.b_ih is not None else torch.zeros(w.w_ih.size(0), dtype=input.dtype)
            b_ih, b_hh = (w.b_ih, w.b_hh) if w.b_ih is not None else (zeros, zeros)
            output, h, c = MkldnnRnnLayer.apply(x, w.w_ih, w.w_hh, b_ih, b_hh, h_0[index], c_0[index],
                                                direction == 1)
            outputs.append(output)
            last_h.append(h)
            last_c.append(c)
        x = outputs[0] if directions == 1 else _tg.cat(outputs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = dropout_function(x, dropout, True)   # torch's mask, from torch's generator
    if batch_first:
        x = x.transpose(0, 1)
    return x, _tg.stack(last_h, 0), _tg.stack(last_c, 0)


def gru(input: TensorLike, hx: TensorLike, params: Sequence[TensorLike], has_biases: bool, num_layers: int,
        dropout: float, train: bool, bidirectional: bool, batch_first: bool = False) -> tuple[Variable, Variable]:
    """torch.gru: a GRU over the sequence; hx = h_0 (num_layers * num_directions, batch, hidden). (output, h_n)."""
    return _one_state_rnn("GRU", _gru_step, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first)


def rnn_tanh(input: TensorLike, hx: TensorLike, params: Sequence[TensorLike], has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool, batch_first: bool = False) -> tuple[Variable, Variable]:
    """torch.rnn_tanh: the plain RNN (h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)). Returns (output, h_n)."""
    return _one_state_rnn("RNN", _tanh_step, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first)


def rnn_relu(input: TensorLike, hx: TensorLike, params: Sequence[TensorLike], has_biases: bool, num_layers: int,
             dropout: float, train: bool, bidirectional: bool, batch_first: bool = False) -> tuple[Variable, Variable]:
    """torch.rnn_relu: the plain RNN with relu for tanh. Returns (output, h_n)."""
    return _one_state_rnn("RNN", _relu_step, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                          batch_first)


def _one_state_rnn(name, step, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """The GRU and the plain RNNs: one state per layer and direction; (output, h_n)."""
    if isinstance(params, (torch.Tensor, Variable)):   # torch.gru(data, batch_sizes, hx, params, ...): packed
        raise NotImplementedError(PACKED.format(name))
    weights = _weights(params, has_biases, has_projections=False)
    states = list(_variable(hx).unbind(0))
    output, last = _stacked_layers(step, _variable(input), states, weights, num_layers, dropout, train, bidirectional,
                                   batch_first, out_in_place=True)
    return output, _tg.stack(last, 0)


def _weights(params, has_biases, has_projections):
    """The flat list of weights cut into one CellWeights per layer and direction, as torch's gather_params."""
    per_cell = (4 if has_biases else 2) + (1 if has_projections else 0)
    if len(params) % per_cell:
        raise RuntimeError("got an incorrect number of RNN parameters")
    cells = []
    for start in range(0, len(params), per_cell):
        w = [_variable(p) for p in params[start:start + per_cell]]
        w_ih, w_hh = w[0], w[1]
        b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
        cells.append(CellWeights(w_ih, w_hh, b_ih, b_hh, w[-1] if has_projections else None))
    return cells


def _stacked_layers(step, input, states, weights, num_layers, dropout, train, bidirectional, batch_first,
                    out_in_place):
    """Run the layers one on another; returns the last layer's output and every layer's (and direction's) last
    state, in torch's order (layer 0 forward, layer 0 reverse, layer 1 forward, ...). With batch_first, the output
    is turned back by `transpose`, or by torch's in-place `transpose_` where `out_in_place` (the GRU, the RNN)."""
    if bidirectional and (len(states) % 2 or len(weights) % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    directions = 2 if bidirectional else 1
    if len(states) != num_layers * directions:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(weights) != num_layers * directions:
        raise RuntimeError("Expected more weights in stacked_rnn")
    if dropout != 0 and train and num_layers > 1 and input.device.type != "cpu":
        raise NotImplementedError(DROPOUT_OFF_CPU.format(input.device.type))
    x = input.transpose(0, 1) if batch_first else input   # time-major inside
    last = []
    for layer in range(num_layers):
        cells = range(layer * directions, (layer + 1) * directions)
        outputs = []
        for direction, cell in enumerate(cells):
            output, state = _layer(step, x, states[cell], weights[cell], reverse=direction == 1)
            outputs.append(output)
            last.append(state)
        x = outputs[0] if directions == 1 else _tg.cat(outputs, outputs[0].dim() - 1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = dropout_function(x, dropout, True)   # torch's mask, from torch's generator
    if batch_first:
        x = TransposeInPlace.apply(x, 0, 1) if out_in_place else x.transpose(0, 1)
    return x, last


def _layer(step, input, state, weights, reverse):
    """One layer in one direction: the input weights applied to all steps at once, then the cell step by step."""
    if input.size(0) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    steps = _linear(input, weights.w_ih, weights.b_ih).unbind(0)
    outputs = []
    for x_part in (reversed(steps) if reverse else steps):
        state = step(x_part, state, weights)
        outputs.append(state[0] if isinstance(state, tuple) else state)   # the LSTM's state is (h, c)
    if reverse:
        outputs.reverse()
    return _tg.stack(outputs, 0), state


def _linear(input, weight, bias):
    """input @ weightᵀ + bias as torch's linear records it: a contiguous input of more than two dimensions with a
    bias is flattened to rows for one addmm (ViewBackward0 of AddmmBackward0); otherwise teachgrad's F.linear."""
    if bias is not None and input.dim() > 2 and input.is_contiguous():
        rows = _linear_2d(input.view(-1, input.size(-1)), weight, bias)
        return rows.view(*input.shape[:-1], weight.size(0))
    return _linear_2d(input, weight, bias)


# --- one time step: x_part is the input's share of the gates (x W_ihᵀ + b_ih), already computed ------------

def _lstm_step(x_part, state, w):
    h, c = state
    gates = _linear_2d(h, w.w_hh, w.b_hh) + x_part
    i, f, g, o = _chunk(gates, 4)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c = f * c + i * g
    h = o * c.tanh()
    if w.w_hr is not None:   # proj_size > 0: the hidden state is projected down
        h = h.matmul(w.w_hr.t())
    return h, c


def _gru_step(x_part, h, w):
    ih_r, ih_z, ih_n = _chunk(x_part, 3)
    hh_r, hh_z, hh_n = _chunk(_linear_2d(h, w.w_hh, w.b_hh), 3)
    r = (hh_r + ih_r).sigmoid()   # reset gate
    z = (hh_z + ih_z).sigmoid()   # update gate
    n = (ih_n + hh_n * r).tanh()  # new gate
    return (h - n) * z + n


def _tanh_step(x_part, h, w):
    return (_linear_2d(h, w.w_hh, w.b_hh) + x_part).tanh()


def _relu_step(x_part, h, w):
    return (_linear_2d(h, w.w_hh, w.b_hh) + x_part).relu()


def _chunk(gates, n):
    """gates.unsafe_chunk(n, 1): n equal pieces along dim 1 (UnsafeSplitBackward0)."""
    size = gates.size(1) // n
    return UnsafeSplit.apply(gates, [size] * n, 1)


# --- the cells: torch.lstm_cell, torch.gru_cell, torch.rnn_tanh_cell, torch.rnn_relu_cell --------------------

def lstm_cell(input: TensorLike, hx: Sequence[TensorLike], w_ih: TensorLike, w_hh: TensorLike,
              b_ih: TensorLike | None = None, b_hh: TensorLike | None = None) -> tuple[Variable, Variable]:
    """torch.lstm_cell: one LSTM step for a (batch, input_size) input; hx = (h, c). Returns (h', c')."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    input, w = _cell_arguments(input, hx, w_ih, w_hh, b_ih, b_hh, gates=4)
    h, c = (_variable(s) for s in hx)
    return _lstm_step(_linear_2d(input, w.w_ih, w.b_ih), (h, c), w)


def gru_cell(input: TensorLike, hx: TensorLike, w_ih: TensorLike, w_hh: TensorLike, b_ih: TensorLike | None = None,
             b_hh: TensorLike | None = None) -> Variable:
    """torch.gru_cell: one GRU step for a (batch, input_size) input and a (batch, hidden) state."""
    input, w = _cell_arguments(input, [hx], w_ih, w_hh, b_ih, b_hh, gates=3)
    return _gru_step(_linear_2d(input, w.w_ih, w.b_ih), _variable(hx), w)


def rnn_tanh_cell(input: TensorLike, hx: TensorLike, w_ih: TensorLike, w_hh: TensorLike,
                  b_ih: TensorLike | None = None, b_hh: TensorLike | None = None) -> Variable:
    """torch.rnn_tanh_cell: tanh((h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih))."""
    input, w = _cell_arguments(input, [hx], w_ih, w_hh, b_ih, b_hh, gates=1)
    return _tanh_step(_linear_2d(input, w.w_ih, w.b_ih), _variable(hx), w)


def rnn_relu_cell(input: TensorLike, hx: TensorLike, w_ih: TensorLike, w_hh: TensorLike,
                  b_ih: TensorLike | None = None, b_hh: TensorLike | None = None) -> Variable:
    """torch.rnn_relu_cell: relu((h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih))."""
    input, w = _cell_arguments(input, [hx], w_ih, w_hh, b_ih, b_hh, gates=1)
    return _relu_step(_linear_2d(input, w.w_ih, w.b_ih), _variable(hx), w)


def _cell_arguments(input, states, w_ih, w_hh, b_ih, b_hh, gates):
    """torch's checks of a cell's input and states against its weights (each weight holds `gates` blocks of
    hidden_size rows), in torch's order; the weights as CellWeights."""
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}")
    for k, state in enumerate(states):
        if input.size(0) != state.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch size {state.size(0)}")
        if state.size(1) != w_hh.size(1):
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {state.size(1)}, expected {w_hh.size(1)}")
    for name, weight in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if weight.size(0) != gates * w_hh.size(1):
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = {gates * w_hh.size(1)}, but got "
                               f"{weight.size(0)}")
    weights = CellWeights(*(None if p is None else _variable(p) for p in (w_ih, w_hh, b_ih, b_hh)))
    return _variable(input), weights


def _variable(tensor):
    """A torch tensor among the arguments as a Variable (a leaf of teachgrad's graph when it requires grad)."""
    return tensor if isinstance(tensor, Variable) else torch_leaves.as_variable(tensor)
