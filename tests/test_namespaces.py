"""The names a program written for torch imports resolve under teachgrad, and answer as torch's do:
random generators and sampling, nn, optim, utils.data, cuda, all/any, softmax, one_hot, range indices.

Each twin test runs the same lines with `lib` bound to torch and to teachgrad (tests/twins.py) and
compares values, dtypes, gradients, node names, and errors (type and message).
"""
import copy
import pickle

import pytest
import torch

import teachgrad as tg
from tests.helpers import graph_names
from tests.twins import same


def _nn(lib):
    return lib.nn


def _name(x):
    return None if x.grad_fn is None else x.grad_fn.name()


# --- Generator and sampling (issue 22, item 2) --------------------------------------------------

def test_generator_is_torchs():
    assert tg.Generator is torch.Generator
    assert tg.default_generator is torch.default_generator


@pytest.mark.parametrize("draw", [
    lambda lib, g: lib.randn(3, 2, generator=g),
    lambda lib, g: lib.rand(4, generator=g, dtype=torch.float64),
    lambda lib, g: lib.randint(0, 10, (5,), generator=g),
    lambda lib, g: lib.randint(7, (2, 2), generator=g),
    lambda lib, g: lib.randperm(6, generator=g),
    lambda lib, g: lib.normal(2.0, 3.0, size=(4,), generator=g),
    lambda lib, g: lib.normal(lib.zeros(3), 1.0, generator=g),
    lambda lib, g: lib.normal(0.5, lib.ones(2, 2), generator=g),
    lambda lib, g: lib.normal(lib.zeros(3), lib.arange(1.0, 4.0), generator=g),
    lambda lib, g: lib.multinomial(lib.tensor([0.1, 0.5, 0.4]), 5, replacement=True, generator=g),
    lambda lib, g: lib.multinomial(lib.tensor([[0.1, 0.9], [0.7, 0.3]]), 2, generator=g),
    lambda lib, g: lib.tensor([0.2, 0.3, 0.5]).multinomial(2, generator=g),
    lambda lib, g: lib.multinomial(lib.tensor([0.1, 0.9]), 3),            # refused without replacement
    lambda lib, g: lib.normal(0.0, 1.0),                                     # no size: refused
    lambda lib, g: lib.randn(2, generator=g, requires_grad=True).requires_grad,
])
def test_seeded_draws_match_torch(draw):
    same(lambda lib: draw(lib, torch.Generator().manual_seed(1234)))


def test_seeded_draws_from_the_global_generator_match_torch():
    def program(lib):
        lib.manual_seed(7)
        logits = lib.randn(4, 6)
        probs = logits.softmax(1)
        return lib.multinomial(probs, 1), lib.randperm(5), lib.randint(0, 3, (2,))
    same(program)


@pytest.mark.parametrize("args", ["tensor_float", "float_tensor", "tensor_tensor"])
def test_normal_records_a_node_with_zero_gradients(args):
    """torch does not differentiate through sampling: NormalBackward1/2/3, whose gradients are zeros."""
    def program(lib):
        g = torch.Generator().manual_seed(0)
        mean = lib.zeros(2, 3, requires_grad=True)
        std = lib.ones(3, requires_grad=True)
        call = {"tensor_float": (mean, 2.0), "float_tensor": (1.0, std), "tensor_tensor": (mean, std)}[args]
        y = lib.normal(*call, generator=g)
        (y * 3).sum().backward()
        return y, _name(y), mean.grad, std.grad
    same(program)


def test_multinomial_of_probabilities_that_require_grad_is_not_recorded():
    def program(lib):
        p = lib.tensor([0.25, 0.75], requires_grad=True)
        draws = lib.multinomial(p, 4, replacement=True, generator=torch.Generator().manual_seed(3))
        return draws, draws.requires_grad, p.multinomial(1, generator=torch.Generator().manual_seed(3))
    same(program)


# --- nn, optim, utils.data (item 3) --------------------------------------------------------------

@pytest.mark.parametrize("name", ["Module", "Linear", "ReLU", "Tanh", "Sigmoid", "Sequential", "Embedding", "Dropout",
                                  "LayerNorm", "CrossEntropyLoss", "MSELoss", "ModuleList", "ModuleDict", "BatchNorm1d",
                                  "Conv2d", "Flatten", "Identity", "GELU", "Softmax", "NLLLoss", "BCEWithLogitsLoss"])
def test_nn_gives_torchs_modules(name):
    assert getattr(tg.nn, name) is getattr(torch.nn, name)


def test_nn_functional_and_init_are_teachgrads():
    import teachgrad.nn.functional as F
    import teachgrad.nn.init as init
    assert tg.nn.functional is F and F.__name__ == "teachgrad.nn.functional"
    assert tg.nn.init is init and init.__name__ == "teachgrad.nn.init"
    assert F.cross_entropy is not torch.nn.functional.cross_entropy


def test_nn_init_fills_a_variable_as_torch_fills_a_tensor():
    def program(lib):
        w = lib.empty(3, 4)
        b = lib.zeros(4, requires_grad=True)
        g = torch.Generator().manual_seed(5)
        same_w = lib.nn.init.normal_(w, mean=1.0, std=0.5, generator=g) is w
        lib.nn.init.kaiming_uniform_(w, a=5 ** 0.5, generator=g)
        with lib.no_grad():
            lib.nn.init.constant_(b, 0.25)
        return same_w, w, b, b.requires_grad, b.is_leaf, lib.nn.init.calculate_gain("tanh")
    same(program)


def test_nn_init_of_a_leaf_that_requires_grad_outside_no_grad_matches_torch():
    """torch's init functions run under no_grad themselves: a leaf that requires grad can be filled."""
    same(lambda lib: lib.nn.init.ones_(lib.zeros(2, requires_grad=True)))


def test_parameter_of_a_variable_is_a_torch_parameter_sharing_its_storage():
    v = tg.randn(3, 2)
    p = tg.nn.Parameter(v)
    assert isinstance(p, torch.nn.Parameter) and p.requires_grad and p.is_leaf
    assert type(p).__name__ == "Parameter" and repr(p) == repr(torch.nn.Parameter(v.data))
    assert p.data_ptr() == v.data.data_ptr()
    assert isinstance(p, tg.nn.Parameter) and isinstance(torch.nn.Parameter(torch.ones(1)), tg.nn.Parameter)
    assert not isinstance(torch.ones(1), tg.nn.Parameter) and not isinstance(v, tg.nn.Parameter)
    assert not tg.nn.Parameter(v, requires_grad=False).requires_grad


def test_parameter_inside_a_module_is_registered_as_under_torch():
    def program(lib):
        lib.manual_seed(0)

        class Scale(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.randn(3))
                self.b = lib.nn.Parameter(lib.zeros(3), requires_grad=False)

        m = Scale()
        return [(n, tuple(p.shape), p.requires_grad) for n, p in m.named_parameters()], m.w
    same(program)


def test_parameter_errors_match_torch():
    same(lambda lib: lib.nn.Parameter([1.0, 2.0]))


def _train_variables(lib, optimizer, steps=3, **options):
    """A least-squares fit of Variables (leaves) with an optimizer: the parameters after each step."""
    lib.manual_seed(0)
    x = lib.randn(8, 3, dtype=torch.float64)
    y = lib.randn(8, dtype=torch.float64)
    w = lib.zeros(3, dtype=torch.float64, requires_grad=True)
    b = lib.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = getattr(lib.optim, optimizer)([w, b], **options)
    seen = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        seen.append((loss, w.clone().detach(), b.clone().detach()))
    return seen, w.grad, w.is_leaf, w.requires_grad


@pytest.mark.parametrize("optimizer, options", [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05}), ("AdamW", {"lr": 0.05, "weight_decay": 0.1}), ("RMSprop", {"lr": 0.01}),
    ("Adagrad", {"lr": 0.1}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Rprop", {}), ("Adadelta", {}),
])
def test_optimizer_over_variables_matches_torch(optimizer, options):
    same(lambda lib: _train_variables(lib, optimizer, **options))


def test_lbfgs_over_variables_matches_torch():
    """LBFGS calls the closure several times in one step: each time the gradients are handed over."""
    def program(lib):
        lib.manual_seed(1)
        target = lib.randn(4, dtype=torch.float64)
        w = lib.zeros(4, dtype=torch.float64, requires_grad=True)
        opt = lib.optim.LBFGS([w], lr=0.5, max_iter=5)

        def closure():
            opt.zero_grad()
            loss = ((w - target) ** 2).sum() + (w ** 4).sum()
            loss.backward()
            return loss

        return [opt.step(closure) for _ in range(2)], w
    same(program)


def test_optimizer_reads_the_variables_grad_and_updates_its_data_in_place():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    data = w.data
    opt = tg.optim.SGD([w], lr=0.5)
    w.grad = tg.tensor([2.0, -2.0])
    opt.step()
    assert w.data is data and w.data.tolist() == [0.0, 3.0] and w._version == 1
    opt.zero_grad()
    assert w.grad is None
    w.grad = tg.tensor([1.0, 1.0])
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]


def test_optimizer_follows_a_variable_whose_data_is_replaced():
    def program(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5, momentum=0.9)
        for new_data in (None, lib.tensor([10.0, 20.0]).data if lib is tg else torch.tensor([10.0, 20.0])):
            if new_data is not None:
                w.data = new_data
            w.grad = lib.tensor([1.0, -1.0])
            opt.step()
        return w
    same(program)


def test_a_deep_copy_of_an_optimizer_over_variables_trains_the_copies():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    twin = copy.deepcopy(tg.optim.SGD([w], lr=0.5))
    (copied, tensor), = twin._variables
    assert copied is not w and copied.data is tensor and twin.param_groups[0]["params"][0] is tensor
    copied.grad = tg.tensor([1.0, 1.0])
    twin.step()
    assert copied.data.tolist() == [0.5, 1.5] and w.data.tolist() == [1.0, 2.0]


def test_optimizer_with_param_groups_and_a_scheduler_matches_torch():
    def program(lib):
        a = lib.tensor([1.0, -1.0], requires_grad=True)
        b = lib.tensor([0.5], requires_grad=True)
        opt = lib.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.01}], lr=0.1)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        for _ in range(3):
            opt.zero_grad()
            ((a * b).sum() ** 2).backward()
            opt.step()
            scheduler.step()
        return a, b, [g["lr"] for g in opt.param_groups], scheduler.get_last_lr()
    same(program)


def test_optimizer_state_dict_round_trip_matches_torch():
    def program(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)
        (w ** 2).sum().backward()
        opt.step()
        state = opt.state_dict()
        again = lib.optim.Adam([w], lr=0.1)
        again.load_state_dict(state)
        (w ** 2).sum().backward()
        again.step()
        return w, state["state"][0]["exp_avg"], state["param_groups"][0]["params"]
    same(program)


@pytest.mark.parametrize("params", [
    lambda lib: lib.ones(2, requires_grad=True),                              # a lone tensor: refused
    lambda lib: [],                                                           # nothing to optimize
    lambda lib: [lib.ones(2, requires_grad=True) * 2],                       # a non-leaf
    lambda lib: [lib.ones(2, requires_grad=True), 3.0],                     # not a tensor
    lambda lib: {"params": lib.ones(2, requires_grad=True)},                # a dict is a group, not a list of them
    lambda lib: [("w", lib.ones(2, requires_grad=True)), lib.ones(1, requires_grad=True)],  # names missing
])
def test_optimizer_refusals_match_torch(params):
    same(lambda lib: lib.optim.SGD(params(lib), lr=0.1))


def test_optimizer_with_named_parameters_matches_torch():
    def program(lib):
        w = lib.tensor([3.0], requires_grad=True)
        opt = lib.optim.SGD([("w", w)], lr=0.1)
        (w * w).sum().backward()
        opt.step()
        return w, opt.param_groups[0]["param_names"]
    same(program)


def test_optimizer_classes_are_torchs_optimizers():
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "LBFGS"):
        ours = getattr(tg.optim, name)
        assert issubclass(ours, getattr(torch.optim, name)) and issubclass(ours, torch.optim.Optimizer)
    assert issubclass(tg.optim.Optimizer, torch.optim.Optimizer)
    from teachgrad.optim.lr_scheduler import StepLR
    assert StepLR is torch.optim.lr_scheduler.StepLR


def test_a_custom_optimizer_subclassing_tg_optim_optimizer_trains_variables():
    class PlainSGD(tg.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, {"lr": lr})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.add_(p.grad, alpha=-group["lr"])

    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = PlainSGD([w], lr=0.25)
    (w * w).sum().backward()
    opt.step()
    assert w.data.tolist() == [0.5, 1.0]


def test_data_loader_batches_variables_as_torch_batches_tensors():
    def program(lib):
        x = lib.arange(12.0).reshape(6, 2)
        y = lib.tensor([0, 1, 0, 1, 1, 0])
        data = lib.utils.data.TensorDataset(x, y)
        loader = lib.utils.data.DataLoader(data, batch_size=4, shuffle=True,
                                           generator=torch.Generator().manual_seed(0))
        return [batch for batch in loader], len(data), data[2]
    same(program)


def test_utils_data_gives_torchs_tools():
    import teachgrad.utils.data as data
    for name in ("Dataset", "TensorDataset", "Subset", "random_split", "Sampler", "RandomSampler", "IterableDataset"):
        assert getattr(data, name) is getattr(torch.utils.data, name)
    assert issubclass(data.DataLoader, torch.utils.data.DataLoader)


def test_random_split_and_a_plain_dataset_match_torch():
    def program(lib):
        class Squares(lib.utils.data.Dataset):
            def __len__(self):
                return 5

            def __getitem__(self, i):
                return lib.tensor([float(i)]), i * i

        train, test = lib.utils.data.random_split(Squares(), [3, 2], generator=torch.Generator().manual_seed(1))
        return list(lib.utils.data.DataLoader(train, batch_size=2)), [test[i] for i in range(len(test))]
    same(program)


def test_parameter_of_a_variable_trains_inside_teachgrads_graph():
    """Needs the torch-leaf mechanism (branch `boundary`): a torch Parameter entering a teachgrad op is a leaf."""
    def program(lib):
        lib.manual_seed(0)
        w = lib.nn.Parameter(lib.randn(3, 2))
        x = lib.randn(4, 3)
        opt = lib.optim.SGD([w], lr=0.1)
        loss = (x @ w).tanh().sum()
        loss.backward()
        grad = w.grad.clone()
        opt.step()
        return loss, _name(loss), grad, w.detach()
    close_twins(program)


def test_torch_modules_train_on_variables_with_tg_optim():
    """Needs `boundary`: nn.Linear's parameters are leaves of teachgrad's graph when the input is a Variable."""
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        x, y = lib.randn(5, 3), lib.tensor([0, 1, 1, 0, 1])
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = lib.nn.CrossEntropyLoss()(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss)
        return losses, _name(losses[0]), [p.detach() for p in model.parameters()]
    close_twins(program)


def close_twins(program):
    """Run under both; tensors agree within float32 round-off (torch's fused kernels round their own way),
    everything else exactly."""
    def compare(ours, theirs):
        if isinstance(theirs, torch.Tensor):
            assert isinstance(ours, (tg.Variable, torch.Tensor)), ours
            torch.testing.assert_close(ours.data if isinstance(ours, tg.Variable) else ours.detach(), theirs.detach())
        elif isinstance(theirs, (list, tuple)):
            assert len(ours) == len(theirs)
            for o, t in zip(ours, theirs):
                compare(o, t)
        else:
            assert ours == theirs
    compare(program(tg), program(torch))


# --- cuda, all/any, softmax, one_hot, range indices (item 8) --------------------------------------

def test_cuda_answers_as_torchs():
    assert tg.cuda is torch.cuda
    import teachgrad.cuda
    assert teachgrad.cuda is torch.cuda
    same(lambda lib: (lib.cuda.is_available(), lib.cuda.device_count()))
    same(lambda lib: "cuda" if lib.cuda.is_available() else "cpu")


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.all(x > -10), lambda lib, x: lib.any(x > 1), lambda lib, x: lib.all(x > 0, 1),
    lambda lib, x: lib.any(x > 0, dim=0, keepdim=True), lambda lib, x: lib.all(x), lambda lib, x: lib.any(x),
    lambda lib, x: (x > 0).all(), lambda lib, x: (x > 0).any(1), lambda lib, x: (x > 0).all(dim=0, keepdim=True),
    lambda lib, x: lib.all(x > 0, dim=(0, 1)), lambda lib, x: (x > 0).any(dim=5),
    lambda lib, x: lib.all(x, dim=1).requires_grad,
])
def test_all_and_any_match_torch(call):
    def program(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, 3.0]], requires_grad=True)
        return call(lib, x)
    same(program)


def test_softmax_without_dim_is_refused_as_torch_refuses_it():
    x = [[0.5, -1.0, 2.0]]
    same(lambda lib: lib.softmax(lib.tensor(x)))
    same(lambda lib: lib.tensor(x).log_softmax())
    same(lambda lib: lib.log_softmax(lib.tensor(x, requires_grad=True)))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.softmax(x, 1), lambda lib, x: lib.softmax(x, dim=0), lambda lib, x: lib.log_softmax(x, -1),
    lambda lib, x: lib.softmax(x, 1, dtype=torch.float64), lambda lib, x: x.softmax(dim=1),
    lambda lib, x: x.log_softmax(0, dtype=torch.float64), lambda lib, x: lib.log_softmax(x, dim=1),
])
def test_softmax_functions_and_methods_match_torch(call):
    def program(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, 3.0]], requires_grad=True)
        y = call(lib, x)
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=y.dtype)).sum().backward()
        return y, x.grad
    ours, theirs = tg_and_torch(program)
    assert ours[0].dtype == theirs[0].dtype and torch.equal(ours[0].data, theirs[0].detach())
    assert graph_names(ours[0]) == graph_names(theirs[0])
    torch.testing.assert_close(ours[1].data, theirs[1], rtol=1e-6, atol=1e-7)   # (torch's backward kernel rounds
                                                                                # float32 its own way)


@pytest.mark.parametrize("call", [
    lambda lib, F: F.one_hot(lib.tensor([0, 2, 1])), lambda lib, F: F.one_hot(lib.tensor([0, 2]), 4),
    lambda lib, F: F.one_hot(lib.tensor([[1], [0]]), num_classes=2), lambda lib, F: F.one_hot(lib.tensor([0, 3]), 2),
    lambda lib, F: F.one_hot(lib.tensor([0.0, 1.0])), lambda lib, F: F.one_hot(lib.tensor([1, 0])).float() @ lib.eye(2),
])
def test_one_hot_matches_torch(call):
    same(lambda lib: call(lib, lib.nn.functional))


@pytest.mark.parametrize("index", [
    lambda lib, y: (range(4), y), lambda lib, y: range(2), lambda lib, y: range(1, 4, 2),
    lambda lib, y: (range(3), range(3)), lambda lib, y: (slice(None), range(2)), lambda lib, y: range(0),
    lambda lib, y: (range(4), 7),
])
def test_indexing_with_a_range_matches_torch(index):
    """`logprobs[range(n), Yb]`, as the makemore lectures write it: forward, node name and backward."""
    def program(lib):
        logprobs = lib.arange(20.0, dtype=torch.float64).reshape(4, 5).requires_grad_()
        y = lib.tensor([1, 4, 0, 2])
        picked = logprobs[index(lib, y)]
        (picked * lib.arange(1.0, picked.numel() + 1, dtype=torch.float64).reshape(picked.shape)).sum().backward()
        return picked.detach(), _name(picked), logprobs.grad
    same(program)


def test_writing_through_a_range_index_matches_torch():
    def program(lib):
        base = lib.zeros(3, 4, requires_grad=True)
        x = base * 1
        x[range(3), lib.tensor([0, 1, 3])] = lib.tensor([1.0, 2.0, 3.0])
        x.sum().backward()
        return x.detach(), _name(x), base.grad
    same(program)


def test_the_loss_of_a_makemore_style_program_matches_torch():
    """The cross-entropy written out as the makemore lectures do: counts, probs, range indexing."""
    def program(lib):
        g = lib.Generator().manual_seed(2147483647)
        W = lib.randn((27, 27), generator=g, requires_grad=True)
        xs = lib.tensor([0, 5, 13, 13, 1])
        ys = lib.tensor([5, 13, 13, 1, 0])
        xenc = lib.nn.functional.one_hot(xs, num_classes=27).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdim=True)
        loss = -probs[range(5), ys].log().mean() + 0.01 * (W ** 2).mean()
        loss.backward()
        ix = lib.multinomial(probs[0].detach(), num_samples=1, replacement=True, generator=g).item()
        return loss, _name(loss), W.grad, ix
    ours, theirs = tg_and_torch(program)
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[3] == theirs[3]
    torch.testing.assert_close(ours[2].data, theirs[2], rtol=1e-6, atol=1e-7)


def tg_and_torch(program):
    return program(tg), program(torch)


def test_generator_state_pickles_as_torchs():
    g = tg.Generator().manual_seed(3)
    state = pickle.loads(pickle.dumps(g.get_state()))
    assert torch.equal(state, torch.Generator().manual_seed(3).get_state())


# --- torch.histogram, and torch's other ATen functions (makemore part 3 draws histograms of activations) -----

@pytest.mark.parametrize("call", [
    lambda lib, x: lib.histogram(x * 2, density=True),
    lambda lib, x: lib.histogram(x, bins=4, range=(-1.0, 1.0)),
    lambda lib, x: x.histogram(3),
    lambda lib, x: lib.histogram(x, lib.tensor([-3.0, 0.0, 3.0])),
    lambda lib, x: [(t.requires_grad, _name(t)) for t in lib.histogram(x * 2, 5)],
    lambda lib, x: lib.histogram(x, 5).bin_edges,
    lambda lib, x: lib.histogram(x, 3).hist.sum().backward(),          # torch's RuntimeError: no derivative
    lambda lib, x: lib.histogram(x.detach(), 3).hist.requires_grad,
])
def test_histogram_matches_torch_and_has_no_derivative(call):
    def program(lib):
        x = lib.linspace(-2.0, 2.0, 17).reshape(1, 17).requires_grad_()
        return call(lib, x[0])
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.argsort(x, 1), lambda lib, x: lib.isclose(x, x * 1.0000001).all(),
    lambda lib, x: lib.bincount(lib.tensor([0, 2, 2, 5])), lambda lib, x: lib.count_nonzero(x > 0),
    lambda lib, x: lib.searchsorted(lib.tensor([0.0, 1.0]), x), lambda lib, x: lib.numel(x),
    lambda lib, x: lib.logspace(0.0, 2.0, 3), lambda lib, x: lib.logspace(0.0, 2.0, 3, requires_grad=True).requires_grad,
    lambda lib, x: lib.logspace(0, 2, 3, dtype=lib.int64, requires_grad=True),   # refused as torch refuses it
])
def test_torchs_other_functions_answer_as_torchs_where_no_gradient_is_lost(call):
    def program(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, 3.0]], requires_grad=True)
        return call(lib, x)
    same(program)


def test_a_torch_function_teachgrad_cannot_record_is_refused_by_name_and_runs_under_no_grad():
    x = tg.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, 3.0]], requires_grad=True)
    with pytest.raises(TypeError, match="torch.cumulative_trapezoid was called with a teachgrad Variable that requires grad"):
        tg.cumulative_trapezoid(x)
    with tg.no_grad():
        assert torch.equal(tg.cumulative_trapezoid(x).data, torch.cumulative_trapezoid(x.data))
    with pytest.raises(AttributeError, match="module 'teachgrad' has no attribute 'vmap'"):
        tg.vmap   # torch.vmap is not one of torch's ATen functions: run on the data it would drop the Variables


def test_torchs_constants_dtypes_settings_and_files_are_torchs(tmp_path):
    for name in ("inf", "nan", "pi", "e", "half", "uint8", "finfo", "get_default_dtype", "set_printoptions", "backends",
                 "set_default_device"):
        assert getattr(tg, name) is getattr(torch, name)
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.save({"x": x}, tmp_path / "x.pt")
    back = tg.load(tmp_path / "x.pt")["x"]
    assert type(back) is tg.Variable and back.requires_grad and torch.equal(back.data, x.data)


def test_autograd_profiler_is_torchs_and_times_teachgrads_kernels():
    import teachgrad.autograd.profiler as profiler
    assert profiler is tg.autograd.profiler is torch.autograd.profiler
    x = tg.randn(2, 2, requires_grad=True)
    with tg.autograd.profiler.profile() as prof:
        (x * x).sum().backward()
    assert "aten::mul" in {event.key for event in prof.key_averages()}


@pytest.mark.parametrize("call", [
    lambda lib, i, x: i % 4, lambda lib, i, x: i // 2, lambda lib, i, x: 10 % i, lambda lib, i, x: 20 // i,
    lambda lib, i, x: x.detach() % 1.0,
])
def test_remainder_and_floor_division_of_tensors_match_torch(call):
    def program(lib):
        return call(lib, lib.tensor([5, 7, 9]), lib.tensor([1.5, 2.5], requires_grad=True))
    same(program)


def test_remainder_of_a_variable_that_requires_grad_is_refused_by_name():
    with pytest.raises(TypeError, match="Tensor.__mod__ was called with a teachgrad Variable that requires grad"):
        tg.tensor([1.5, 2.5], requires_grad=True) % 1.0
