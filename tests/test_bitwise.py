"""First-order gradients equal torch's to the bit, not only to round-off.

A program that trains for 200,000 steps (makemore's MLP) ends where torch ends only if every step's
gradient has torch's bits: a last-bit difference per step grows into a different model. So on plain
tensors an op's backward calls torch's own backward kernel (tanh_backward, _log_softmax_backward_data,
gelu_backward, ...) or writes torch's formula in torch's order (`-grad * ((a / b) / b)` for a / b).
The comparison is torch.equal, on this machine's kernels, whatever the CPU.
"""
import pytest
import torch
import torch.nn.functional as TF

import teachgrad as tg
import teachgrad.nn.functional as GF

torch.manual_seed(0)
A, B = torch.randn(16, 24), torch.randn(16, 24)
P = torch.rand(16, 24) * 0.9 + 0.05             # probabilities, away from 0 and 1
V = torch.randn(24)
Y = torch.randint(0, 24, (16,))
IMAGES, KERNELS = torch.randn(4, 3, 8, 8), torch.randn(5, 3, 3, 3)
BATCH_A, BATCH_B = torch.randn(4, 16, 24), torch.randn(4, 24, 8)


def _labels(lib):
    return Y if lib is torch else tg.tensor(Y)


CASES = {
    "exp": (lambda L, F, a: a.exp(), [A]),
    "log": (lambda L, F, p: p.log(), [P]),
    "sqrt": (lambda L, F, p: p.sqrt(), [P]),
    "pow 2": (lambda L, F, a: a ** 2, [A]),
    "pow 3": (lambda L, F, a: a ** 3, [A]),
    "pow 0.5": (lambda L, F, p: p ** 0.5, [P]),
    "a / b": (lambda L, F, a, p: a / p, [A, P]),
    "1 / a": (lambda L, F, p: 1.0 / p, [P]),
    "a * v broadcast": (lambda L, F, a, v: a * v, [A, V]),
    "a + v broadcast": (lambda L, F, a, v: a + v, [A, V]),
    "mean keepdim": (lambda L, F, a: a.mean(0, keepdim=True), [A]),
    "var": (lambda L, F, a: a.var(0), [A]),
    "std keepdim": (lambda L, F, a: a.std(0, keepdim=True), [A]),
    "norm": (lambda L, F, a: a.norm(), [A]),
    "tanh": (lambda L, F, a: a.tanh(), [A]),
    "sigmoid": (lambda L, F, a: a.sigmoid(), [A]),
    "relu": (lambda L, F, a: F.relu(a), [A]),
    "gelu": (lambda L, F, a: F.gelu(a), [A]),
    "gelu tanh": (lambda L, F, a: F.gelu(a, approximate="tanh"), [A]),
    "silu": (lambda L, F, a: F.silu(a), [A]),
    "softplus": (lambda L, F, a: F.softplus(a), [A]),
    "elu": (lambda L, F, a: F.elu(a), [A]),
    "leaky_relu": (lambda L, F, a: F.leaky_relu(a, 0.1), [A]),
    "softmax": (lambda L, F, a: F.softmax(a, 1), [A]),
    "log_softmax": (lambda L, F, a: F.log_softmax(a, 1), [A]),
    "cross_entropy": (lambda L, F, a: F.cross_entropy(a, _labels(L)), [A]),
    "cross_entropy sum": (lambda L, F, a: F.cross_entropy(a, _labels(L), reduction="sum"), [A]),
    "mse_loss": (lambda L, F, a, b: F.mse_loss(a, b), [A, B]),
    "binary_cross_entropy": (lambda L, F, p: F.binary_cross_entropy(p, P), [P]),
    "bce with logits": (lambda L, F, a: F.binary_cross_entropy_with_logits(a, P), [A]),
    "bce with logits, pos_weight": (lambda L, F, a: F.binary_cross_entropy_with_logits(a, P, pos_weight=V.abs()), [A]),
    "layer_norm": (lambda L, F, a, w, b: F.layer_norm(a, (24,), w, b), [A, V, V]),
    "batch_norm training": (lambda L, F, a, w, b: F.batch_norm(a, None, None, w, b, training=True), [A, V, V]),
    "linear": (lambda L, F, a, w, b: F.linear(a, w, b), [A, B[:8], V[:8]]),
    "matmul batched": (lambda L, F, a, b: a @ b, [BATCH_A, BATCH_B]),
    "conv2d": (lambda L, F, x, w: F.conv2d(x, w, padding=1), [IMAGES, KERNELS]),
    "max_pool2d": (lambda L, F, x: F.max_pool2d(x, 2), [IMAGES]),
    "index with a tensor": (lambda L, F, a: a[_labels(L) % 16], [A]),
    "logsumexp": (lambda L, F, a: a.logsumexp(1), [A]),
    "cumsum": (lambda L, F, a: a.cumsum(1), [A]),
}


def _grads(lib, F, make, inputs, seed=1):
    xs = [x.clone().requires_grad_() if lib is torch else tg.tensor(x.clone(), requires_grad=True) for x in inputs]
    out = make(lib, F, *xs)
    shape = out.shape
    grad = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    out.backward(grad if lib is torch else tg.tensor(grad))
    return [x.grad if lib is torch else x.grad.data for x in xs]


@pytest.mark.parametrize("name", CASES)
def test_first_order_gradients_are_torchs_to_the_bit(name):
    make, inputs = CASES[name]
    theirs, ours = _grads(torch, TF, make, inputs), _grads(tg, GF, make, inputs)
    for k, (t, o) in enumerate(zip(theirs, ours)):
        assert torch.equal(o, t), f"{name}: input {k} differs from torch by up to {(o - t).abs().max().item():.3g}"


def test_a_makemore_style_step_is_torchs_to_the_bit():
    def step(lib, F):
        g = torch.Generator().manual_seed(2147483647)
        C, W1, b1 = lib.randn((27, 10), generator=g), lib.randn((30, 200), generator=g), lib.randn(200, generator=g)
        W2, b2 = lib.randn((200, 27), generator=g), lib.randn(27, generator=g)
        params = [C, W1, b1, W2, b2]
        for p in params:
            p.requires_grad = True
        X = torch.randint(0, 27, (32, 3), generator=g)
        T = torch.randint(0, 27, (32,), generator=g)
        X, T = (X, T) if lib is torch else (tg.tensor(X), tg.tensor(T))
        h = lib.tanh(C[X].view(-1, 30) @ W1 + b1)
        F.cross_entropy(h @ W2 + b2, T).backward()
        return [p.grad if lib is torch else p.grad.data for p in params]
    for t, o in zip(step(torch, TF), step(tg, GF)):
        assert torch.equal(o, t)
