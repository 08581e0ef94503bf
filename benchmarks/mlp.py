"""The bench's MLP: its data, and the training step torch and teachgrad run with the same lines (teachgrad's Variables
take torch tensors). benchmarks/bench.py times it against the other libraries' steps; benchmarks/opcount.py counts
teachgrad's Python in it.
"""
import torch


def mlp_data(width, batch, seed=0):
    """Four layers width -> width -> width -> width -> 1, weights stored (in, out) for `h @ W + b`, as
    torch tensors: [(W, b), ...], x, y. Each library makes its own parameters from these values."""
    gen = torch.Generator().manual_seed(seed)
    sizes = [width] * 4 + [1]
    params = [(torch.randn(n_in, n_out, generator=gen) / n_in ** 0.5, torch.zeros(n_out))
              for n_in, n_out in zip(sizes, sizes[1:])]
    x = torch.randn(batch, width, generator=gen)
    y = (torch.rand(batch, 1, generator=gen) > 0.5).float()
    return params, x, y


def mse_step(params, x, y):
    """torch's step, and teachgrad's: the same lines run on both (teachgrad's Variables take torch tensors)."""
    def step():
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = h.relu()
        loss = ((h - y) ** 2).mean()
        for w, b in params:
            w.grad = b.grad = None
        loss.backward()
        return loss, [p.grad for pair in params for p in pair]
    return step
