"""Issue 34, the programs: ops called on an `nn.Parameter` the program made itself (`self.transitions =
nn.Parameter(torch.randn(5, 5))` in the PyTorch tutorial's Bi-LSTM CRF, then `self.transitions[next_tag]`) are
recorded by teachgrad, the Parameter a leaf of its graph, as torch records them (teachgrad/nn/parameter.py).
Under no_grad (an optimizer's step) they stay torch's own.
"""
import torch

from tests.twins import same


def _names(t):
    return type(t.grad_fn).__name__


def test_indexing_a_parameter_records_the_op_and_reaches_its_grad():
    def snippet(lib):
        torch.manual_seed(0)
        p = lib.nn.Parameter(lib.randn(4, 4, dtype=torch.float64))
        x = lib.randn(1, 4, dtype=torch.float64)
        row = p[2].view(1, -1)
        y = x + row + p[1].view(1, -1).expand(1, 4)
        out = lib.logsumexp(y, 1) + p[3, 0]
        out.sum().backward()
        return [_names(row), _names(y), _names(out)], p.grad, out
    same(snippet)


def test_methods_and_operators_on_a_parameter_are_recorded():
    def snippet(lib):
        torch.manual_seed(0)
        p = lib.nn.Parameter(lib.randn(3, 2, dtype=torch.float64))
        results = [p.t(), p * 2, 2 * p, p.sum(), p.T, p.exp(), p @ p.t()]
        scale = lib.tensor(1.5, dtype=torch.float64)   # a Variable under teachgrad: the graph is teachgrad's
        sum((r * scale).sum() for r in results).backward()
        return [_names(r) for r in results], p.grad
    same(snippet)


def test_a_modules_own_parameter_trains_with_torch_optim():
    def snippet(lib):
        torch.manual_seed(0)

        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.randn(3, dtype=torch.float64))

            def forward(self, x):
                return (x * self.w[0] + self.w[1:].sum()).pow(2).mean()

        model = Model()
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(lib.linspace(-1, 1, 5, dtype=torch.float64))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, model.w.detach(), repr(model.w)[:19], model.w.grad_fn, model.w.is_leaf
    same(snippet)


def test_a_parameter_indexed_by_a_tensor_of_the_program():
    """makemore's Bigram: `self.logits[idx]`, idx a tensor of the program (a Variable under teachgrad)."""
    def snippet(lib):
        p = lib.nn.Parameter(lib.zeros((5, 5), dtype=torch.float64))
        idx, targets = lib.tensor([[0, 1, 2]]), lib.tensor([[1, 2, 3]])
        logits = p[idx]
        loss = lib.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        loss.backward()
        return _names(logits), loss, p.grad
    same(snippet)


def test_under_no_grad_a_parameter_is_torchs():
    def snippet(lib):
        p = lib.nn.Parameter(lib.ones(2, dtype=torch.float64))
        with lib.no_grad():
            q = p * 3
            p.add_(1)
        return q, q.requires_grad, p.detach(), type(p.detach()).__name__ == "Tensor"
    assert same(snippet)[0] == "returned"
