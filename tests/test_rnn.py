"""Issue 34, the RNN family: torch's nn.LSTM, nn.GRU, nn.RNN and their cells run on Variables (teachgrad/nn/rnn.py).

Each twin builds torch's module from the same seed and runs it on a torch tensor and on a Variable of the same
data, in float64: outputs, final states, the gradients of the input, of the initial states and of every parameter,
and the node names of the whole graph (each node once) must agree. Errors compare type and message.
"""
import pytest
import torch

import teachgrad as tg
from tests.twins import same

DTYPE = torch.float64


def _graph(tensor):
    """The node names of tensor's graph, depth first in next_functions order, each node named once (a node met
    again is 'seen'), so a long recurrence is walked in linear time."""
    names, seen, todo = [], set(), [tensor.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            names.append(None if node is None else "seen")
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        todo.extend(reversed([n for n, _ in node.next_functions]))
    return names


def _flat(value):
    return [t for v in value for t in _flat(v)] if isinstance(value, (tuple, list)) else [value]


def _run(lib, make, x_data, hx_data=None, train=True, seed=0):
    """Build the module from `seed`, run it on x (and hx) of `lib`, backward a weighted sum of every result.
    Returns the results, the gradients (input, initial states, parameters by name) and the graphs' node names."""
    torch.manual_seed(seed)
    module = make().to(DTYPE).train(train)
    x = _tensor(lib, x_data, requires_grad=True)
    hx = None if hx_data is None else [_tensor(lib, h, requires_grad=True) for h in _flat(hx_data)]
    args = (x,) if hx is None else (x, hx[0] if len(hx) == 1 else tuple(hx))
    torch.manual_seed(seed + 1)   # the dropout masks' draws
    results = _flat(module(*args))
    total = sum(((k + 1) * r * torch.linspace(-1, 1, r.numel(), dtype=DTYPE).reshape(r.shape)).sum()
                for k, r in enumerate(results))
    total.backward()
    grads = {"input": x.grad, **{f"hx{k}": h.grad for k, h in enumerate(hx or [])},
             **{name: p.grad for name, p in module.named_parameters()}}
    return results, grads, [_graph(r) for r in results]


def _plain(t):
    return t.data if isinstance(t, tg.Variable) else t.detach()


def _check_twins(make, x_data, hx_data=None, train=True):
    ours, theirs = _run(tg, make, x_data, hx_data, train), _run(torch, make, x_data, hx_data, train)
    (our_results, our_grads, our_graphs), (their_results, their_grads, their_graphs) = ours, theirs
    assert len(our_results) == len(their_results)
    for a, b in zip(our_results, their_results):
        assert isinstance(a, tg.Variable)
        assert a.shape == b.shape and a.dtype == b.dtype
        torch.testing.assert_close(_plain(a), _plain(b), rtol=1e-10, atol=1e-12)
    assert our_grads.keys() == their_grads.keys()
    for name in their_grads:
        assert their_grads[name] is not None and our_grads[name] is not None, name
        torch.testing.assert_close(_plain(our_grads[name]), _plain(their_grads[name]), rtol=1e-10, atol=1e-12, msg=name)
    assert our_graphs == their_graphs


def _data(*shape, seed=100):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=DTYPE)


def _tensor(lib, data, requires_grad=False):
    """`data` (a torch tensor) as a fresh leaf of lib."""
    return lib.tensor(data.tolist(), dtype=DTYPE, requires_grad=requires_grad)


# --- the sequence modules ----------------------------------------------------------------------------------

CONFIGS = [{}, {"bidirectional": True}, {"batch_first": True}, {"num_layers": 2}, {"bias": False},
           {"num_layers": 2, "bidirectional": True, "batch_first": True}]
MODULES = [(torch.nn.LSTM, c) for c in CONFIGS + [{"proj_size": 2}, {"proj_size": 3, "num_layers": 2,
                                                                         "bidirectional": True}]]
MODULES += [(torch.nn.GRU, c) for c in CONFIGS]
MODULES += [(torch.nn.RNN, c) for c in CONFIGS + [{"nonlinearity": "relu"},
                                                  {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}]]


def _states(cls, config, batch):
    """Initial states of the module's shapes, from fixed data."""
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    hidden = config.get("proj_size") or 4
    h = _data(layers, batch, hidden, seed=7)
    return (h, _data(layers, batch, 4, seed=8)) if cls is torch.nn.LSTM else h


@pytest.mark.parametrize("cls, config", MODULES, ids=lambda v: getattr(v, "__name__", None) or str(v))
@pytest.mark.parametrize("given_states", [False, True], ids=["zero-states", "given-states"])
def test_module_matches_torch(cls, config, given_states):
    seq, batch = 4, 3
    shape = (batch, seq, 3) if config.get("batch_first") else (seq, batch, 3)
    hx = _states(cls, config, batch) if given_states else None
    _check_twins(lambda: cls(3, 4, **config), _data(*shape), hx)


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN])
@pytest.mark.parametrize("given_states", [False, True], ids=["zero-states", "given-states"])
def test_unbatched_input_matches_torch(cls, given_states):
    config = {"num_layers": 2, "bidirectional": True}
    hx = None
    if given_states:
        hx = _states(cls, config, 1)
        hx = tuple(h[:, 0] for h in hx) if isinstance(hx, tuple) else hx[:, 0]
    _check_twins(lambda: cls(3, 4, **config), _data(5, 3), hx)


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN])
def test_dropout_between_layers_draws_torchs_masks(cls):
    """Training with dropout: torch draws a mask after every layer but the last from its generator; so does
    teachgrad, so under the same seed the values and gradients are torch's."""
    _check_twins(lambda: cls(3, 4, num_layers=3, dropout=0.5, bidirectional=True), _data(4, 3, 3))
    ours = _run(tg, lambda: cls(3, 4, num_layers=3, dropout=0.5), _data(4, 3, 3))[0][0]
    unseeded = _run(tg, lambda: cls(3, 4, num_layers=3, dropout=0.5), _data(4, 3, 3), seed=5)[0][0]
    assert not torch.equal(ours.data, unseeded.data)   # the masks are drawn, not skipped


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
def test_dropout_is_off_in_eval_mode(cls):
    _check_twins(lambda: cls(3, 4, num_layers=2, dropout=0.5), _data(4, 3, 3), train=False)


def test_dropout_off_the_cpu_is_refused_clearly():
    """Off the CPU torch draws the masks between layers in its device kernels (cuDNN's on a GPU): teachgrad, which
    draws them as torch's CPU path does, refuses rather than drop other elements. (A meta tensor stands for a device
    here; in eval mode, or with one layer, nothing is drawn and the layers run.)"""
    lstm = torch.nn.LSTM(3, 4, num_layers=2, dropout=0.5, device="meta")
    x = tg.zeros(5, 2, 3, device="meta", requires_grad=True)
    with pytest.raises(NotImplementedError, match="dropout masks between layers as torch does on the CPU; on a meta"):
        lstm(x)
    assert lstm.eval()(x)[0].shape == (5, 2, 4)


def test_the_modules_are_torchs_with_torchs_parameters():
    """tg.nn.LSTM is torch's class: the parameters' names, shapes and seeded values are torch's."""
    assert tg.nn.LSTM is torch.nn.LSTM and tg.nn.GRU is torch.nn.GRU and tg.nn.LSTMCell is torch.nn.LSTMCell
    torch.manual_seed(3)
    lstm = tg.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    names = [name for name, _ in lstm.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert "weight_hr_l1_reverse" in names and lstm.weight_ih_l1.shape == (20, 4)
    bound = 1 / 5 ** 0.5
    assert all(p.abs().max() <= bound for p in lstm.parameters())


# --- the cells ---------------------------------------------------------------------------------------------

CELLS = [(torch.nn.LSTMCell, {}), (torch.nn.LSTMCell, {"bias": False}), (torch.nn.GRUCell, {}),
         (torch.nn.GRUCell, {"bias": False}), (torch.nn.RNNCell, {}), (torch.nn.RNNCell, {"bias": False}),
         (torch.nn.RNNCell, {"nonlinearity": "relu"})]


@pytest.mark.parametrize("cls, config", CELLS, ids=lambda v: getattr(v, "__name__", None) or str(v))
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("given_states", [False, True], ids=["zero-states", "given-states"])
def test_cell_matches_torch(cls, config, batched, given_states):
    lead = (3,) if batched else ()
    hx = None
    if given_states:
        hx = (_data(*lead, 4, seed=7), _data(*lead, 4, seed=8)) if cls is torch.nn.LSTMCell else _data(*lead, 4)
    _check_twins(lambda: cls(3, 4, **config), _data(*lead, 3), hx)


def test_a_cell_run_over_a_sequence_matches_torch():
    """A hand-written loop over LSTMCell steps, the states carried along: one graph over all steps."""
    def program(lib):
        torch.manual_seed(0)
        cell = torch.nn.LSTMCell(3, 4).to(DTYPE)
        x = _tensor(lib, _data(5, 2, 3), requires_grad=True)
        h = c = lib.zeros(2, 4, dtype=DTYPE)
        for step in x.unbind(0):
            h, c = cell(step, (h, c))
        (h.sum() + c.pow(2).sum()).backward()
        return h, c, x.grad, cell.weight_hh.grad, cell.bias_ih.grad, h.grad_fn.name(), c.grad_fn.name()
    ours, theirs = program(tg), program(torch)
    for a, b in zip(ours[:5], theirs[:5]):
        torch.testing.assert_close(_plain(a), _plain(b), rtol=1e-10, atol=1e-12)
    assert ours[5:] == theirs[5:] == ("MulBackward0", "AddBackward0")


# --- torch's functions called directly, and the errors -------------------------------------------------------

def _lstm_weights(lib, layers=1, directions=1, bias=True):
    weights = []
    for k in range(layers * directions):
        size = 3 if k < directions else 2 * directions
        weights += [_tensor(lib, _data(8, size, seed=10 + k), requires_grad=True),
                    _tensor(lib, _data(8, 2, seed=20 + k), requires_grad=True)]
        if bias:
            weights += [_tensor(lib, _data(8, seed=30 + k), requires_grad=True),
                        _tensor(lib, _data(8, seed=40 + k), requires_grad=True)]
    return weights


def test_torch_lstm_function_matches_torch():
    def program(lib):
        weights = _lstm_weights(lib, layers=2, directions=2)
        x = _tensor(lib, _data(4, 3, 3), requires_grad=True)
        h0 = _tensor(lib, _data(4, 3, 2, seed=1), requires_grad=True)
        c0 = _tensor(lib, _data(4, 3, 2, seed=2), requires_grad=True)
        output, h, c = lib.lstm(x, (h0, c0), weights, True, 2, 0.0, False, True, False)
        (output.sum() + h.pow(2).sum() + c.sum()).backward()
        return (output, h, c, x.grad, h0.grad, c0.grad, *[w.grad for w in weights],
                output.grad_fn.name(), h.grad_fn.name())
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib, x, h, w: lib.lstm(x, (h,), w, True, 1, 0.0, False, False, False),
    lambda lib, x, h, w: lib.lstm(x, (h, h), w[:3], True, 1, 0.0, False, False, False),
    lambda lib, x, h, w: lib.lstm(x, (h, h), w + w, True, 1, 0.0, False, False, False),
    lambda lib, x, h, w: lib.lstm(x, (h, h), w, True, 2, 0.0, False, False, False),
    lambda lib, x, h, w: lib.lstm(x, (h, h), w, True, 1, 0.0, False, True, False),
    lambda lib, x, h, w: lib.lstm(x[:0], (h, h), w, True, 1, 0.0, False, False, False),
    lambda lib, x, h, w: lib.gru(x, h, w[:3], False, 1, 0.0, False, False, False),
    lambda lib, x, h, w: lib.lstm_cell(x[0], (h[0],), w[0], w[1]),
    lambda lib, x, h, w: lib.rnn_tanh(x[:0], h, w, True, 1, 0.0, False, False, False),
])
def test_torch_functions_bad_arguments_raise_torchs_errors(call):
    same(lambda lib: call(lib, _tensor(lib, _data(4, 3, 3), requires_grad=True), _tensor(lib, _data(1, 3, 2)),
                          _lstm_weights(lib)))


@pytest.mark.parametrize("program", [
    lambda lib: torch.nn.LSTM(3, 4)(lib.zeros(0, 2, 3, dtype=DTYPE, requires_grad=True)),
    lambda lib: torch.nn.GRU(3, 4)(lib.zeros(0, 2, 3, dtype=DTYPE, requires_grad=True)),
    lambda lib: torch.nn.LSTMCell(3, 4)(lib.zeros(2, 5, requires_grad=True)),
    lambda lib: torch.nn.GRUCell(3, 4)(lib.zeros(2, 5, requires_grad=True)),
    lambda lib: torch.nn.RNNCell(3, 4)(lib.zeros(2, 3, requires_grad=True), lib.zeros(3, 4)),
    lambda lib: torch.nn.LSTMCell(3, 4)(lib.zeros(2, 3, requires_grad=True), (lib.zeros(2, 4), lib.zeros(2, 5))),
    lambda lib: torch.nn.GRUCell(3, 4)(lib.zeros(2, 3, requires_grad=True), lib.zeros(2, 5)),
])
def test_modules_bad_input_raise_torchs_errors(program):
    same(program)


def _zeros(*shape):
    return torch.zeros(*shape, dtype=DTYPE)


@pytest.mark.parametrize("program", [
    lambda lib, x, h: lib.gru_cell(x, h, _zeros(11, 3), _zeros(12, 4)),
    lambda lib, x, h: lib.gru_cell(x, h, _zeros(12, 3), _zeros(11, 4)),
    lambda lib, x, h: lib.lstm_cell(x, (h, h), _zeros(15, 3), _zeros(16, 4)),
    lambda lib, x, h: lib.lstm_cell(x, (h, h), _zeros(16, 3), _zeros(15, 4)),
    lambda lib, x, h: lib.rnn_tanh_cell(x, h, _zeros(5, 3), _zeros(4, 4)),
    lambda lib, x, h: lib.rnn_relu_cell(x, h, _zeros(4, 3), _zeros(5, 4)),
    lambda lib, x, h: lib.gru_cell(x[0], h[0], _zeros(12, 3), _zeros(12, 4)),          # 1-D: the cells take 2-D
    lambda lib, x, h: lib.lstm_cell(x, (h, h), _zeros(16, 3).float(), _zeros(16, 4)),  # dtypes differ
])
def test_cell_functions_check_weights_as_torch(program):
    same(lambda lib: program(lib, _tensor(lib, _data(2, 3), requires_grad=True), _tensor(lib, _data(2, 4))))


def test_packed_sequences_are_refused_clearly():
    """A packed sequence reaches torch.lstm's other signature (data, batch_sizes, hx, ...): teachgrad refuses it
    rather than compute something else. (Packing a Variable that requires grad is already refused by interop.)"""
    lstm = torch.nn.LSTM(3, 4).to(DTYPE)
    packed = torch.nn.utils.rnn.pack_padded_sequence(tg.tensor(_data(4, 2, 3)), torch.tensor([4, 3]))
    with pytest.raises(NotImplementedError, match="does not take a packed sequence"):
        lstm(packed)
    gru = torch.nn.GRU(3, 4).to(DTYPE)
    with pytest.raises(NotImplementedError, match="GRU does not take a packed sequence"):
        gru(packed)
    with pytest.raises(TypeError, match="torch._pack_padded_sequence"):
        torch.nn.utils.rnn.pack_padded_sequence(tg.tensor(_data(4, 2, 3), requires_grad=True), torch.tensor([4, 3]))


# --- second order ---------------------------------------------------------------------------------------------

def test_second_derivative_through_a_gru_matches_torch():
    def program(lib):
        torch.manual_seed(0)
        gru = torch.nn.GRU(3, 4).to(DTYPE)
        x = _tensor(lib, _data(3, 2, 3), requires_grad=True)
        (g,) = lib.autograd.grad(gru(x)[0].pow(2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sin().sum(), x)
        return g, gg
    ours, theirs = program(tg), program(torch)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(_plain(a), _plain(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
def test_forward_mode_through_an_rnn_matches_torch(cls):
    """A tangent of the input carried through the layers (forward AD): the outputs' tangents are torch's."""
    def program(lib):
        torch.manual_seed(0)
        module = cls(3, 4, batch_first=True, bidirectional=True).to(DTYPE)
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            x = forward_ad.make_dual(_tensor(lib, _data(2, 3, 3)), _tensor(lib, _data(2, 3, 3, seed=1)))
            return [forward_ad.unpack_dual(r).tangent for r in _flat(module(x))]
    ours, theirs = program(tg), program(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(_plain(a), _plain(b), rtol=1e-10, atol=1e-12)


# --- a small training loop --------------------------------------------------------------------------------------

TEXT = "hello teachgrad, hello torch: the same losses, step by step."


def _train_char_lstm(lib, steps=20):
    """A character-level LSTM (embedding, 2-layer LSTM with dropout, linear) trained with SGD to predict each next
    character; the losses of every step."""
    vocab = sorted(set(TEXT))
    ids = [vocab.index(ch) for ch in TEXT]
    torch.manual_seed(0)
    embed = torch.nn.Embedding(len(vocab), 8).to(DTYPE)
    lstm = torch.nn.LSTM(8, 16, num_layers=2, dropout=0.1).to(DTYPE)
    head = torch.nn.Linear(16, len(vocab)).to(DTYPE)
    parameters = [*embed.parameters(), *lstm.parameters(), *head.parameters()]
    optimizer = lib.optim.SGD(parameters, lr=0.5, momentum=0.9)
    inputs = lib.tensor(ids[:-1]).reshape(-1, 1)      # (seq, batch=1)
    targets = lib.tensor(ids[1:])
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        output, _ = lstm(embed(inputs))
        loss = lib.nn.functional.cross_entropy(head(output[:, 0]), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_a_char_lstm_trains_as_under_torch():
    ours, theirs = _train_char_lstm(tg), _train_char_lstm(torch)
    assert theirs[-1] < 0.9 * theirs[0]   # it learns
    assert ours == pytest.approx(theirs, abs=1e-6, rel=0)
