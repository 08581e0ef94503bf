"""Issue 34, the programs: torch's LSTM in float32 on the CPU runs each layer as one oneDNN op (teachgrad/ops/rnn.py,
MkldnnRnnLayer), so its outputs' node is MkldnnRnnLayerBackward0, not StackBackward0 (the PyTorch NLP tutorials
print an LSTM's output, whose grad_fn shows it).

Each twin builds torch's module from the same seed in float32 and runs it on a torch tensor and on a Variable of
the same data: outputs, final states, the gradients of the input, of the initial states and of every parameter
(float32: to rounding), and the node names of the whole graph, each node with its edges (None where an input
needs no gradient), must agree. tests/test_rnn.py covers float64, which torch runs step by step.
"""
import pytest
import torch

import teachgrad as tg
from tests.twins import same

DTYPE = torch.float32


def _graph(tensor):
    """Each node's name and its next_functions' names (None for an input without a gradient), depth first."""
    names, seen, todo = [], set(), [tensor.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append((type(node).__name__, tuple(None if n is None else type(n).__name__
                                                 for n, _ in node.next_functions)))
        todo.extend(reversed([n for n, _ in node.next_functions]))
    return names


def _flat(value):
    return [t for v in value for t in _flat(v)] if isinstance(value, (tuple, list)) else [value]


def _data(*shape, seed=100):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=DTYPE)


def _run(lib, config, x_data, hx_data, train=True):
    torch.manual_seed(0)
    module = torch.nn.LSTM(3, 4, **config).train(train)
    x = lib.tensor(x_data.tolist(), dtype=DTYPE, requires_grad=True)
    hx = None if hx_data is None else tuple(lib.tensor(h.tolist(), dtype=DTYPE, requires_grad=True) for h in hx_data)
    torch.manual_seed(1)   # the dropout masks' draws
    results = _flat(module(x) if hx is None else module(x, hx))
    total = sum(((k + 1) * r * torch.linspace(-1, 1, r.numel(), dtype=DTYPE).reshape(r.shape)).sum()
                for k, r in enumerate(results))
    total.backward()
    grads = {"input": x.grad, **{f"hx{k}": h.grad for k, h in enumerate(hx or [])},
             **{name: p.grad for name, p in module.named_parameters()}}
    return results, grads, [_graph(r) for r in results]


def _plain(t):
    return t.data if isinstance(t, tg.Variable) else t.detach()


CONFIGS = [{}, {"bidirectional": True}, {"batch_first": True}, {"num_layers": 2}, {"bias": False},
           {"num_layers": 2, "bidirectional": True, "batch_first": True}, {"num_layers": 2, "dropout": 0.5}]


@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("given_states", [False, True], ids=["zero-states", "given-states"])
def test_float32_lstm_records_torchs_onednn_layers(config, given_states):
    seq, batch = 5, 3
    shape = (batch, seq, 3) if config.get("batch_first") else (seq, batch, 3)
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    hx = (_data(layers, batch, 4, seed=7), _data(layers, batch, 4, seed=8)) if given_states else None
    (ours, our_grads, our_graphs), (theirs, their_grads, their_graphs) = (
        _run(lib, config, _data(*shape), hx) for lib in (tg, torch))
    assert our_graphs == their_graphs
    assert "MkldnnRnnLayerBackward0" in {name for name, _ in their_graphs[0]}
    for a, b in zip(ours, theirs):
        assert isinstance(a, tg.Variable) and a.dtype == b.dtype
        torch.testing.assert_close(_plain(a), _plain(b), rtol=1e-5, atol=1e-6)
    assert our_grads.keys() == their_grads.keys()
    for name in their_grads:
        torch.testing.assert_close(_plain(our_grads[name]), _plain(their_grads[name]), rtol=1e-5, atol=1e-5, msg=name)


def test_the_tutorials_printed_lstm_output_names_torchs_node():
    """sequence_models_tutorial.py prints an LSTM's output, step by step and over the whole sequence."""
    def snippet(lib):
        torch.manual_seed(1)
        lstm = torch.nn.LSTM(3, 3)
        inputs = [lib.randn(1, 3) for _ in range(5)]
        hidden = (lib.randn(1, 1, 3), lib.randn(1, 1, 3))
        out, hidden = lstm(inputs[0].view(1, 1, -1), hidden)
        whole, _ = lstm(lib.cat(inputs).view(5, 1, -1), hidden)
        return [type(t.grad_fn).__name__ for t in (out, hidden[0], hidden[1], whole)]
    assert same(snippet) == ("returned", ("MkldnnRnnLayerBackward0", "StackBackward0", "StackBackward0",
                                          "MkldnnRnnLayerBackward0"))


def test_the_layers_gradient_can_be_differentiated_again():
    """create_graph through the layer's backward: torch differentiates it again; so does teachgrad (the values)."""
    def snippet(lib):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(3, 4)
        x = lib.tensor(_data(5, 2, 3).tolist(), requires_grad=True)
        out, _ = lstm(x)
        g, = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        return [round(v, 3) for v in gg.reshape(-1).tolist()]
    same(snippet)


def test_forward_mode_through_the_layer_is_refused_as_torch_refuses_it():
    def snippet(lib):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(3, 4)
        with lib.autograd.forward_ad.dual_level():
            x = lib.autograd.forward_ad.make_dual(lib.ones(5, 2, 3), lib.ones(5, 2, 3))
            return lstm(x)[0]
    assert same(snippet)[0] == "raised"


def test_float64_and_projections_still_run_step_by_step_as_torch_does():
    def snippet(lib):
        torch.manual_seed(0)
        names = []
        for module, dtype in ((torch.nn.LSTM(3, 4).double(), torch.float64), (torch.nn.LSTM(3, 4, proj_size=2), DTYPE)):
            out, _ = module(lib.ones(5, 2, 3, dtype=dtype, requires_grad=True))
            names.append(type(out.grad_fn).__name__)
        return names
    assert same(snippet) == ("returned", ("StackBackward0", "StackBackward0"))
