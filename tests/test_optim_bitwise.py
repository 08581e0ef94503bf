"""Training under tg.optim gives torch's parameters bit for bit, after every step of a long run.

tg.optim's optimizers are torch.optim's own (teachgrad/optim.py hands them the Variables' data and
gradients), so an update is torch's arithmetic in torch's order. What could still drift is everything
around it: the gradients the backward pass leaves (matmul, linear, their accumulation into `.grad`), what
`zero_grad` leaves behind, gradient accumulation over micro-batches, clipping, the schedulers. Each test
trains the same small float32 MLP from one seed under torch (torch tensors, torch.optim) and under
teachgrad (Variables, tg.optim) for 50 steps and compares every parameter with torch.equal after every step.
"""
import pytest
import torch

import teachgrad as tg

STEPS = 50


def _data():
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(32, 24, generator=gen) * 0.2, torch.randn(32, generator=gen) * 0.1,
              torch.randn(4, 32, generator=gen) * 0.2, torch.randn(4, generator=gen) * 0.1]
    batches = [(torch.randn(2, 6, 24, generator=gen), torch.randint(0, 4, (12,), generator=gen)) for _ in range(4)]
    return params, batches


def _loss(lib, params, x, y):
    """A little of a transformer: a 3-D batch through linear, self-attention over views, linear to 4 classes."""
    w1, b1, w2, b2 = params
    F = lib.nn.functional
    heads = F.linear(x, w1, b1).view(2, 6, 2, 16).transpose(1, 2)         # (batch, head, time, 16), a view
    attention = (heads @ heads.transpose(-2, -1) * 0.25).softmax(dim=-1)   # 4-D matmul (bmm)
    mixed = (attention @ heads).transpose(1, 2).reshape(2, 6, 32)         # against a non-contiguous view
    logits = (F.gelu(mixed) @ w2.t() + b2).reshape(-1, 4)                 # matmul folded into one mm
    return F.cross_entropy(logits, y)


def train(lib, make_optimizer, make_scheduler=None, set_to_none=True, micro_batches=1):
    """Parameters after each step of training under `lib` (torch or teachgrad)."""
    init, batches = _data()
    if lib is tg:
        params = [tg.tensor(p.clone(), requires_grad=True) for p in init]
        batches = [(tg.tensor(x), tg.tensor(y)) for x, y in batches]
    else:
        params = [p.clone().requires_grad_() for p in init]
    optimizer = make_optimizer(lib, params)
    scheduler = make_scheduler(lib, optimizer) if make_scheduler else None
    history = []
    for step in range(STEPS):
        for micro in range(micro_batches):
            x, y = batches[(step * micro_batches + micro) % len(batches)]
            loss = _loss(lib, params, x, y)
            (loss / micro_batches if micro_batches > 1 else loss).backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        optimizer.zero_grad(set_to_none=set_to_none)
        history.append([(p.data if lib is tg else p.detach()).clone() for p in params])
    return history


def assert_same_training(**kwargs):
    ours, theirs = train(tg, **kwargs), train(torch, **kwargs)
    for step, (mine, torchs) in enumerate(zip(ours, theirs)):
        for i, (a, b) in enumerate(zip(mine, torchs)):
            assert torch.equal(a, b), f"parameter {i} differs after step {step + 1}: {(a - b).abs().max().item()}"


OPTIMIZERS = {
    "SGD": lambda lib, p: lib.optim.SGD(p, lr=0.1),
    "SGD-momentum": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9),
    "SGD-nesterov": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "SGD-dampening-wd": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.2, weight_decay=1e-2),
    "SGD-maximize": lambda lib, p: lib.optim.SGD(p, lr=0.01, momentum=0.5, maximize=True),
    "Adam": lambda lib, p: lib.optim.Adam(p, lr=1e-2),
    "Adam-wd-amsgrad": lambda lib, p: lib.optim.Adam(p, lr=1e-2, weight_decay=1e-2, amsgrad=True),
    "Adam-foreach": lambda lib, p: lib.optim.Adam(p, lr=1e-2, foreach=True),
    "Adam-for-loop": lambda lib, p: lib.optim.Adam(p, lr=1e-2, foreach=False),
    "AdamW": lambda lib, p: lib.optim.AdamW(p, lr=1e-2),
    "AdamW-amsgrad-betas": lambda lib, p: lib.optim.AdamW(p, lr=1e-2, betas=(0.8, 0.95), weight_decay=0.1,
                                                          amsgrad=True),
    "RMSprop": lambda lib, p: lib.optim.RMSprop(p, lr=1e-3),
    "RMSprop-centered-momentum-wd": lambda lib, p: lib.optim.RMSprop(p, lr=1e-3, momentum=0.9, centered=True,
                                                                     weight_decay=1e-2),
    "Adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.1),
    "Adagrad-decay-wd": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, lr_decay=1e-2, weight_decay=1e-2,
                                                         initial_accumulator_value=0.1),
    "Adadelta": lambda lib, p: lib.optim.Adadelta(p, lr=1.0, weight_decay=1e-3),
    "Adamax": lambda lib, p: lib.optim.Adamax(p, lr=1e-2),
    "NAdam": lambda lib, p: lib.optim.NAdam(p, lr=1e-2, decoupled_weight_decay=True, weight_decay=1e-2),
    "RAdam": lambda lib, p: lib.optim.RAdam(p, lr=1e-2),
    "ASGD": lambda lib, p: lib.optim.ASGD(p, lr=1e-2, t0=10),
    "Rprop": lambda lib, p: lib.optim.Rprop(p, lr=1e-2),
    "param-groups": lambda lib, p: lib.optim.SGD([{"params": p[:2]}, {"params": p[2:], "lr": 0.01}], lr=0.1,
                                                 momentum=0.9),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_matches_torch_bit_for_bit(name):
    assert_same_training(make_optimizer=OPTIMIZERS[name])


@pytest.mark.parametrize("name", ["SGD-momentum", "Adam", "AdamW", "RMSprop"])
def test_zero_grad_to_zeros(name):
    """zero_grad(set_to_none=False): the next backward accumulates into zeroed gradients, as in torch."""
    assert_same_training(make_optimizer=OPTIMIZERS[name], set_to_none=False)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_gradient_accumulation(set_to_none):
    """Three micro-batches' gradients summed into .grad before each step."""
    assert_same_training(make_optimizer=OPTIMIZERS["AdamW"], micro_batches=3, set_to_none=set_to_none)


def _module_history(lib, make_optimizer, clip):
    """A torch module (its parameters torch tensors) called on the batch, as `tg.nn` trains one on Variables."""
    torch.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(24, 32), lib.nn.GELU(), lib.nn.Linear(32, 4))
    optimizer = make_optimizer(lib, model.parameters())
    _, batches = _data()
    history = []
    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        if lib is tg:
            x, y = tg.tensor(x), tg.tensor(y)
        lib.nn.functional.cross_entropy(model(x).reshape(-1, 4), y).backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        optimizer.zero_grad()
        history.append([p.detach().clone() for p in model.parameters()])
    return history


@pytest.mark.parametrize("optimizer", ["SGD-momentum", "AdamW"])
def test_module_training_with_clip_grad_norm(optimizer):
    """nn.Linear layers (torch's, on a Variable batch), gradients clipped to norm 0.5 before each step."""
    ours = _module_history(tg, OPTIMIZERS[optimizer], clip=0.5)
    theirs = _module_history(torch, OPTIMIZERS[optimizer], clip=0.5)
    for step, (mine, torchs) in enumerate(zip(ours, theirs)):
        for i, (a, b) in enumerate(zip(mine, torchs)):
            assert torch.equal(a, b), f"parameter {i} differs after step {step + 1}: {(a - b).abs().max().item()}"


SCHEDULERS = {
    "StepLR": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=7, gamma=0.5),
    "CosineAnnealingLR": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS),
    "OneCycleLR": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=STEPS),
    "LambdaLR-warmup": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 10)),
    "ExponentialLR": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
@pytest.mark.parametrize("optimizer", ["SGD-momentum", "AdamW"])
def test_lr_scheduler(name, optimizer):
    assert_same_training(make_optimizer=OPTIMIZERS[optimizer], make_scheduler=SCHEDULERS[name])


@pytest.mark.parametrize("name", ["SGD", "AdamW", "LBFGS"])
@pytest.mark.parametrize("torch_made_one_first", [False, True])
def test_step_hooks_and_the_profiler_range_run_once_a_step(name, torch_made_one_first):
    """torch wraps an optimizer class's step in its hooks and profiler range; tg.optim's step runs torch's step
    inside its own, and ran them twice once torch had wrapped its class too (any torch optimizer of that kind made
    in the process)."""
    if torch_made_one_first:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))])   # (torch patches its class's step)
    calls = {}
    for lib in (torch, tg):
        p = torch.nn.Parameter(torch.ones(3))
        p.grad = torch.ones(3)
        opt = getattr(lib.optim, name)([p], lr=0.1)
        seen = calls[lib.__name__] = []
        opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
        opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
        with torch.autograd.profiler.profile() as prof:
            opt.step((lambda: (p ** 2).sum()) if name == "LBFGS" else None)
        seen += [event.name for event in prof.function_events if event.name.startswith("Optimizer.step#")]
    assert calls["teachgrad"] == calls["torch"] == ["pre", "post", f"Optimizer.step#{name}.step"]


def test_step_hooks_run_once_after_torch_compile_wrapped_torchs_step():
    """torch.compile wraps some optimizers' steps again (LBFGS's, in dynamo's `disable`), above the hooks torch
    wraps it in: tg.optim's LBFGS ran its step hooks twice in a process that had compiled anything (in a fresh
    process, as the wrapping stays for the process's life)."""
    import subprocess
    import sys
    script = """if True:
        import torch, teachgrad as tg
        torch.optim.LBFGS([torch.nn.Parameter(torch.ones(1))])       # torch wraps LBFGS.step in its hooks
        torch.compile(lambda x: x.sin(), backend="aot_eager")(torch.ones(2))   # and dynamo wraps that
        for lib in (torch, tg):
            p = torch.nn.Parameter(torch.ones(3))
            opt = lib.optim.LBFGS([p], lr=0.1)
            seen = []
            opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
            opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
            opt.step(lambda: (p ** 2).sum().backward() or (p ** 2).sum())
            print(lib.__name__, seen)
    """
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["torch ['pre', 'post']", "teachgrad ['pre', 'post']"]
