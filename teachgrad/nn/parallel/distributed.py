"""`DistributedDataParallel` at torch's path, on teachgrad's engine.

    dist.init_process_group("gloo")                   # one process per rank (torchrun, or mp.start_processes)
    model = tg.nn.parallel.DistributedDataParallel(net)
    loss = loss_fn(model(x_of_this_rank), y_of_this_rank)
    loss.backward()                                   # every rank's .grad: the average over all ranks' batches

Each process runs the same model on its own share of the batch. At construction the parameters and buffers of
rank 0 are sent to every rank, so all start equal; during each backward the Reducer (reducer.py) averages the
gradients over the ranks, bucket by bucket, while backward still runs. With the same gradients everywhere, the
same optimizer step keeps the models equal.

torch's own class registers its hooks with torch's autograd engine, which never runs for a model on teachgrad;
teachgrad refuses it there (teachgrad/rules/torch_leaves.py) and this one takes its place, with torch's arguments.

Guarded by tests/test_data_parallel.py (against torch's DDP, bit for bit, on 2 and 4 gloo ranks).
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable, Iterator

import torch
import torch.distributed as dist

from ...features.custom_function import Function   # (a user's Function, as torch's DDP writes its _DDPSink)
from .reducer import DEFAULT_FIRST_BUCKET_BYTES, Reducer, compute_bucket_assignment_by_size

DEFAULT_BUCKET_CAP_MB = 25
_MB = 1024 * 1024


class DistributedDataParallel(torch.nn.Module):
    """Data parallel training of `module` over torch.distributed, as torch's `DistributedDataParallel`.

    Taken as torch takes them: `process_group`, `broadcast_buffers`, `bucket_cap_mb`, `find_unused_parameters`,
    `gradient_as_bucket_view`; `device_ids` and `output_device` as torch's single-device form (the module already
    on its device). What teachgrad does not do is refused by name: `static_graph=True`, `mixed_precision`,
    `delay_all_reduce_named_params`, `bucket_cap_mb_list`, ...
    """

    def __init__(self, module: torch.nn.Module, device_ids: list | None = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 **unsupported: Any) -> None:
        super().__init__()
        if static_graph:
            raise NotImplementedError("teachgrad's DistributedDataParallel does not do static_graph=True (torch's "
                                      "delayed first all-reduce): leave it False")
        for name, value in unsupported.items():
            if value is not None and value is not False:
                raise NotImplementedError(f"teachgrad's DistributedDataParallel does not take {name}= "
                                          "(it follows torch's default DDP: buckets, hooks, comm hooks)")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True   # off inside no_sync()
        self.require_forward_param_sync = True   # whether the last forward was one to reduce
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        parameters = self._params_for_reducer()
        if not parameters:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if init_sync:
            self._broadcast_from_rank_0(parameters + (self._buffers_to_sync() if broadcast_buffers else []))
        # The buckets, as torch lays them out: one for all until the first backward shows the order the gradients
        # arrive (without find_unused_parameters), else filled in parameter order, the first one smaller.
        self.bucket_bytes_cap = int((bucket_cap_mb if bucket_cap_mb is not None else DEFAULT_BUCKET_CAP_MB) * _MB)
        first_cap = DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        if not find_unused_parameters:
            limits = [2 ** 63 - 1]
        elif first_cap < self.bucket_bytes_cap:
            limits = [first_cap, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        buckets = compute_bucket_assignment_by_size(parameters, limits)
        # reversed: the last parameters' gradients are the first backward produces
        self.reducer = Reducer(parameters, list(reversed(buckets)), self.process_group, self.bucket_bytes_cap,
                               first_cap, find_unused_parameters, gradient_as_bucket_view)

    def _params_for_reducer(self) -> list[torch.Tensor]:
        """The parameters that require grad, module by module as torch lists them, each once."""
        seen, params = set(), []
        for module_name, submodule in self.module.named_modules():
            for name, p in submodule.named_parameters(recurse=False):
                full_name = f"{module_name}.{name}" if module_name else name
                if p.requires_grad and full_name not in self.parameters_to_ignore and p not in seen:
                    seen.add(p)
                    params.append(p)
        return params

    def _buffers_to_sync(self) -> list[torch.Tensor]:
        return [b for name, b in self.module.named_buffers() if name not in self.parameters_to_ignore]

    def _broadcast_from_rank_0(self, tensors: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for t in tensors:
                dist.broadcast(t, src=dist.get_global_rank(self.process_group, 0)
                               if self.process_group is not dist.group.WORLD else 0, group=self.process_group)

    # --- the forward: before, the module's own, after ---

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        grad_enabled = torch.is_grad_enabled()
        if grad_enabled and self.require_backward_grad_sync:
            self.reducer.prepare_for_forward()
        if grad_enabled:
            self.reducer.rebuild_buckets()   # (raises if the last reduction did not finish)
        if self.require_forward_param_sync and self.broadcast_buffers and self._buffers_to_sync():
            self._broadcast_from_rank_0(self._buffers_to_sync())
        output = self.module(*inputs, **kwargs)
        if grad_enabled and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(_find_variables(output) if self.find_unused_parameters else [])
        else:
            self.require_forward_param_sync = False
        if self.find_unused_parameters:
            output = _through_sink(output)
        return output

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside: backward accumulates into `.grad` without all-reducing; the first backward after it reduces
        what was accumulated."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state: object, hook: Callable) -> None:
        """`hook(state, bucket)` replaces each bucket's all-reduce: it returns a `torch.futures.Future` of the
        bucket's reduced (and averaged) tensor. torch's `ddp_comm_hooks.default_hooks` work as they are."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        signature = inspect.signature(hook)
        bucket_annotation = signature.parameters["bucket"].annotation if "bucket" in signature.parameters else None
        if bucket_annotation not in (None, inspect.Parameter.empty, dist.GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if signature.return_annotation not in (inspect.Signature.empty, torch.futures.Future[torch.Tensor]):
            raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self.reducer.comm_hook = (hook, state)


class _DDPSink(Function):
    """torch's _DDPSink: with find_unused_parameters, the outputs pass through one node, so that an output left out
    of the loss still gets a gradient, None, from it; backward then reaches that output's parameters without a
    gradient, their post-accumulate-grad hooks run all the same, and the reducer counts them ready."""

    @staticmethod
    def forward(ctx: Any, *outputs: torch.Tensor) -> tuple:
        ctx.set_materialize_grads(False)
        return tuple(t.clone() for t in outputs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        return grads


def _through_sink(output: Any) -> Any:
    """The module's output with each Variable that has a grad_fn replaced by its copy through one _DDPSink."""
    recorded = [v for v in _find_variables(output) if getattr(v, "grad_fn", None) is not None]
    if not recorded:
        return output
    passed = dict(zip(map(id, recorded), _DDPSink.apply(*recorded)))

    def rebuild(item):
        if isinstance(item, tuple) and hasattr(item, "_fields"):   # a namedtuple
            return type(item)(*(rebuild(i) for i in item))
        if isinstance(item, (list, tuple)):
            return type(item)(rebuild(i) for i in item)
        if isinstance(item, dict):
            return {k: rebuild(v) for k, v in item.items()}
        return passed.get(id(item), item)
    return rebuild(output)


def _find_variables(output: Any) -> list:
    """Every Variable or tensor in a module's output (lists, tuples, dicts), for the graph walk."""
    if isinstance(output, (list, tuple)):
        return [v for item in output for v in _find_variables(item)]
    if isinstance(output, dict):
        return [v for item in output.values() for v in _find_variables(item)]
    return [output] if hasattr(output, "grad_fn") else []
