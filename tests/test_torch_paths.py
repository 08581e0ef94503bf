"""torch's submodule paths under `import teachgrad as torch` (issue 34): each path torch has for what teachgrad
provides imports from teachgrad, as a real module, and gives what torch's gives (or teachgrad's version of it)."""
import importlib
import pkgutil

import pytest
import torch

import teachgrad as tg
from tests.twins import same

PATHS = {   # teachgrad's path -> the names a program imports from it
    "utils.data.dataloader": ["DataLoader", "default_collate", "get_worker_info", "default_convert"],
    "utils.data.dataset": ["Dataset", "TensorDataset", "ConcatDataset", "Subset", "random_split", "IterableDataset"],
    "utils.data.sampler": ["Sampler", "RandomSampler", "SequentialSampler", "BatchSampler"],
    "utils.data.distributed": ["DistributedSampler"],
    "nn.modules": ["Module", "Linear", "Conv2d", "Sequential", "MSELoss"],
    "nn.modules.module": ["Module"],
    "nn.modules.linear": ["Linear", "Identity"],
    "nn.modules.loss": ["CrossEntropyLoss", "_Loss"],
    "nn.modules.utils": ["_pair"],
    "nn.parameter": ["Parameter"],
    "nn.utils": ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "weight_norm"],
    "nn.utils.rnn": ["pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "PackedSequence"],
    "optim.optimizer": ["Optimizer", "required"],
    "optim.lr_scheduler": ["StepLR", "LRScheduler", "OneCycleLR"],
    "optim.swa_utils": ["AveragedModel", "SWALR"],
    "autograd.grad_mode": ["no_grad", "enable_grad", "inference_mode", "set_grad_enabled"],
}
OURS = {("utils.data.dataloader", "DataLoader"): tg.utils.data.DataLoader,
        ("utils.data.dataloader", "default_collate"): tg.utils.data.default_collate,
        ("nn.parameter", "Parameter"): tg.nn.Parameter, ("optim.optimizer", "Optimizer"): tg.optim.Optimizer,
        ("nn.utils", "clip_grad_norm_"): tg.nn.utils.clip_grad_norm_,
        ("nn.utils", "clip_grad_value_"): tg.nn.utils.clip_grad_value_,
        ("nn.utils", "parameters_to_vector"): tg.nn.utils.parameters_to_vector,
        ("nn.utils", "vector_to_parameters"): tg.nn.utils.vector_to_parameters}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_path_is_a_module_of_teachgrad_and_gives_what_torch_gives(path):
    module = importlib.import_module("teachgrad." + path)
    assert module.__name__ == "teachgrad." + path and module.__file__.startswith(tg.__path__[0])
    theirs = importlib.import_module("torch." + path)
    for name in PATHS[path]:
        expected = OURS.get((path, name), getattr(theirs, name, None))
        if path.startswith("autograd.grad_mode"):
            expected = getattr(tg, name)
        assert getattr(module, name) is expected, (path, name)
        assert name in vars(importlib.import_module("teachgrad." + path)) or hasattr(module, name)


def test_every_submodule_of_torch_nn_modules_has_its_path():
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if not info.name.startswith("_") and not info.name.startswith("linear_cross_entropy"):
            ours = importlib.import_module("teachgrad.nn.modules." + info.name)
            theirs = importlib.import_module("torch.nn.modules." + info.name)
            assert all(getattr(ours, name) is getattr(theirs, name) for name in getattr(theirs, "__all__", []))


def test_star_imports():
    namespace = {}
    exec("from teachgrad.utils.data.dataset import *\nfrom teachgrad.optim.lr_scheduler import *\n"
         "from teachgrad.utils.data.dataloader import *", namespace)
    assert namespace["TensorDataset"] is torch.utils.data.TensorDataset and namespace["StepLR"]
    assert namespace["DataLoader"] is tg.utils.data.DataLoader


def test_a_dataloader_over_a_dataset_of_variables_stacks_them_as_torch_stacks_tensors():
    def snippet(lib):
        from importlib import import_module
        dataset_module = import_module(lib.__name__ + ".utils.data.dataset")
        loader_module = import_module(lib.__name__ + ".utils.data.dataloader")

        class Pairs(dataset_module.Dataset):
            def __len__(self):
                return 5

            def __getitem__(self, i):
                x = lib.arange(3, dtype=lib.float64) + i
                return x, {"y": x.sum(), "i": i}

        batches = list(loader_module.DataLoader(Pairs(), batch_size=2))
        tensors = dataset_module.TensorDataset(lib.arange(6.0).view(3, 2), lib.tensor([1, 2, 3]))
        return batches, list(loader_module.DataLoader(tensors, batch_size=2)), type(batches[0][0]).__name__
    result = same(lambda lib: snippet(lib)[:2])
    assert snippet(tg)[2] == "Variable" and result[0] == "returned"


@pytest.mark.parametrize("use", [
    lambda lib, m: (lib.nn.utils.clip_grad_norm_(m, 1.0), [p.grad for p in m]),
    lambda lib, m: (lib.nn.utils.clip_grad_norm_(m, 100.0, norm_type=1.0), [p.grad for p in m]),
    lambda lib, m: (lib.nn.utils.clip_grad_norm_(m[0], 0.5), m[0].grad),
    lambda lib, m: (lib.nn.utils.clip_grad_value_(m, 0.5), [p.grad for p in m]),
    lambda lib, m: lib.nn.utils.parameters_to_vector(m),
    lambda lib, m: (lib.nn.utils.vector_to_parameters(lib.arange(5.0, dtype=lib.float64), m), m),
], ids=["clip-norm", "clip-norm-1", "clip-one", "clip-value", "to-vector", "from-vector"])
def test_nn_utils_over_variables(use):
    def snippet(lib):
        params = [lib.tensor([3.0, -4.0], dtype=lib.float64, requires_grad=True),
                  lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)]
        (params[0] ** 2).sum().backward()
        (params[1] * 3).sum().backward()
        return use(lib, params)
    same(snippet)


def test_parameters_to_vector_records_the_graph():
    def snippet(lib):
        params = [lib.tensor([3.0, -4.0], dtype=lib.float64, requires_grad=True)]
        vector = lib.nn.utils.parameters_to_vector(params)
        (vector * vector).sum().backward()
        return vector.grad_fn.name(), params[0].grad
    same(snippet)


def test_lr_scheduler_with_a_teachgrad_optimizer():
    def snippet(lib):
        from importlib import import_module
        schedulers = import_module(lib.__name__ + ".optim.lr_scheduler")
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        scheduler = schedulers.StepLR(opt, step_size=1, gamma=0.5)
        for _ in range(3):
            (w * w).sum().backward()
            opt.step()
            opt.zero_grad()
            scheduler.step()
        return w, scheduler.get_last_lr()
    same(snippet)
