"""The Reducer: what averages the gradients of every process while backward still runs.

torch's `DistributedDataParallel` hands the work to a Reducer (C++, torch/csrc/distributed/c10d/reducer.cpp; its
design is in torch's "DDP notes" and Li et al., VLDB 2020). This one follows it step for step, on teachgrad's engine:

1. **Buckets.** The parameters' gradients are laid end to end in a few flat tensors, the buckets, so one all-reduce
   moves many small gradients. `compute_bucket_assignment_by_size` fills a bucket until it holds `bucket_cap_mb`
   (the first one smaller, 1 MiB by default, so the last gradients backward produces are not kept waiting). Buckets
   are listed in the reverse order of the parameters, the order backward produces their gradients; after the first
   iteration they are built again in the order the gradients really arrived.
2. **A hook per parameter.** `register_post_accumulate_grad_hook`: once a parameter's `.grad` holds this backward's
   gradient, it is copied into its place in its bucket (divided by the number of processes on the way).
3. **An all-reduce per full bucket.** When the last gradient of a bucket has arrived (and every bucket before it has
   been sent), the bucket's all-reduce starts, asynchronously: backward goes on computing the next gradients while
   the bucket travels. A communication hook (`register_comm_hook`) may replace the all-reduce.
4. **A callback at the end of backward** (`Variable._execution_engine.queue_callback`): it waits for every bucket
   and copies the averaged gradients back into each parameter's `.grad`.

A parameter whose gradient never arrives keeps its bucket from being sent: the next forward raises torch's
"Expected to have finished reduction in the prior iteration..." unless `find_unused_parameters=True`, where the
graph is walked after forward to find such parameters and mark them ready at once.

Guarded by tests/test_data_parallel.py (every rank's gradients and parameters against torch's DDP, bit for bit).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
import torch.distributed as dist

from ...core.engine import execution_engine
from ...core.node import AccumulateGrad

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024   # torch's dist._DEFAULT_FIRST_BUCKET_BYTES

PRIOR_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. ")
OUTPUTS_IN_LOSS = "making sure all `forward` function outputs participate in calculating loss. "
NOT_LOCATED = (
    "\nIf you already have done the above, then the distributed data parallel module wasn't able to locate the "
    "output tensors in the return value of your module's `forward` function. Please include the loss function and "
    "the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, "
    "iterable).")
DEBUG_HINT = (
    "\n In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print "
    "out information about which particular parameters did not receive gradient on this rank as part of this error")


def compute_bucket_assignment_by_size(tensors: Sequence[torch.Tensor], size_limits: Sequence[int],
                                      tensor_indices: Sequence[int] | None = None) -> list[list[int]]:
    """Group tensors into buckets of at most about `size_limits` bytes each (torch's
    `dist._compute_bucket_assignment_by_size`): the first bucket of each dtype and device gets the first limit, the
    next ones the next limit, and the last limit from then on. A bucket is closed once it reaches its limit.
    Without `tensor_indices` the buckets are sorted by the smallest index they hold; with them (the order the
    gradients arrived) they stay in the order they were filled."""
    result = []                       # (indices of a bucket)
    open_buckets = {}                 # (dtype, device) -> [indices, bytes, position in size_limits]
    for i, tensor in enumerate(tensors):
        index = i if tensor_indices is None else tensor_indices[i]
        bucket = open_buckets.setdefault((tensor.dtype, tensor.device), [[], 0, 0])
        bucket[0].append(index)
        bucket[1] += tensor.numel() * tensor.element_size()
        if bucket[1] >= size_limits[bucket[2]]:
            result.append(bucket[0])
            open_buckets[(tensor.dtype, tensor.device)] = [[], 0, min(bucket[2] + 1, len(size_limits) - 1)]
    result += [bucket[0] for bucket in open_buckets.values() if bucket[0]]
    if tensor_indices is None:
        result.sort(key=min)
    return result


class GradBucket:
    """One bucket as a communication hook sees it (torch's `dist.GradBucket`): `buffer()` the flat tensor of its
    gradients, `gradients()` and `parameters()` one per parameter, `index()`, `is_last()`."""

    def __init__(self, index: int, bucket_count: int, buffer: torch.Tensor, offsets: list[int], lengths: list[int],
                 params: list[torch.Tensor]) -> None:
        self._index, self._bucket_count, self._buffer = index, bucket_count, buffer
        self._offsets, self._lengths, self._params = offsets, lengths, params

    def index(self) -> int:
        return self._index

    def is_last(self) -> bool:
        return self._index == self._bucket_count - 1

    def buffer(self) -> torch.Tensor:
        return self._buffer

    def set_buffer(self, buffer: torch.Tensor) -> None:
        self._buffer = buffer

    def gradients(self) -> list[torch.Tensor]:
        return [_view(self._buffer, p, offset) for p, offset in zip(self._params, self._offsets)]

    def parameters(self) -> list[torch.Tensor]:
        return list(self._params)


class _Bucket:
    """A bucket: which parameters, their places in one flat tensor, and how many gradients it still waits for."""

    def __init__(self, indices: list[int], params: list[torch.Tensor]):
        self.indices = indices
        self.params = [params[i] for i in indices]
        self.offsets, self.lengths, offset = [], [], 0
        for p in self.params:
            self.offsets.append(offset)
            self.lengths.append(p.numel())
            offset += p.numel()
        self.gradients = torch.empty(offset, dtype=self.params[0].dtype, device=self.params[0].device)
        self.views_in = [_view(self.gradients, p, o) for p, o in zip(self.params, self.offsets)]
        self.views_out = self.views_in
        self.pending = len(indices)
        self.future = None


def _view(flat, param, offset):
    """A parameter's place in a bucket, laid out as the parameter is (torch's gradient layout contract)."""
    if _dense(param):
        return flat.as_strided(param.shape, param.stride(), offset)
    return flat.narrow(0, offset, param.numel()).view(param.shape)


def _dense(t):
    """Whether `t`'s elements fill its memory without gaps or overlap, in some order of its dimensions."""
    expected = 1
    for size, stride in sorted(zip(t.shape, t.stride()), key=lambda pair: pair[1]):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _same_memory(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


class Reducer:
    """Averages the gradients of `params` over `process_group` during backward (see the module's docstring)."""

    def __init__(self, params: list[torch.Tensor], bucket_indices: list[list[int]], process_group: Any,
                 bucket_bytes_cap: int, first_bucket_bytes_cap: int, find_unused_parameters: bool,
                 gradient_as_bucket_view: bool) -> None:
        self.params = params
        self.process_group = process_group
        self.bucket_size_limits = [first_bucket_bytes_cap, bucket_bytes_cap]
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.comm_hook: tuple[Callable, Any] | None = None
        self.expect_autograd_hooks = False      # set by prepare_for_backward, cleared by finalize_backward
        self.require_finalize = False           # a gradient was marked ready: finalize_backward must run
        self.has_rebuilt_buckets = False
        self.rebuilt_param_indices: list[int] = []
        self.unused_parameters: list[int] = []
        self.ready_in_this_iteration: set[int] = set()
        self.local_used = (torch.zeros(len(params), dtype=torch.int32, device=params[0].device)   # (nccl: on the
                           if find_unused_parameters else None)                               # device)
        self.local_used_work = None
        self.num_iterations = 0
        self.initialize_buckets(bucket_indices)
        self.hooks = [p.register_post_accumulate_grad_hook(self._hook_for(i)) for i, p in enumerate(params)]

    def initialize_buckets(self, bucket_indices: list[list[int]]) -> None:
        self.buckets = [_Bucket(indices, self.params) for indices in bucket_indices]
        self.locators = {}                       # parameter index -> (bucket index, place in the bucket)
        for b, bucket in enumerate(self.buckets):
            for k, index in enumerate(bucket.indices):
                self.locators[index] = (b, k)
            if self.gradient_as_bucket_view:    # a gradient already there moves into its bucket
                for k, p in enumerate(bucket.params):
                    if p.grad is not None and not _same_memory(p.grad, bucket.views_in[k]):
                        bucket.views_in[k].copy_(p.grad)
                        p.grad = bucket.views_in[k]
        self.next_bucket = 0

    def _hook_for(self, index):
        def autograd_hook(param):
            self.autograd_hook(index)
        return autograd_hook

    # --- forward ---

    def prepare_for_forward(self) -> None:
        self.num_iterations += 1

    def rebuild_buckets(self) -> bool:
        """Before a forward: the prior reduction must have finished; after the first iteration the buckets are
        built again in the order the gradients arrived (only without find_unused_parameters, as torch)."""
        self.ensure_prior_reduction_finished()
        if self.find_unused_parameters or self.has_rebuilt_buckets or not self.rebuilt_param_indices:
            return False
        order = self.rebuilt_param_indices
        self.initialize_buckets(compute_bucket_assignment_by_size([self.params[i] for i in order],
                                                                  self.bucket_size_limits, order))
        self.has_rebuilt_buckets = True
        self.rebuilt_param_indices = []
        return True

    def prepare_for_backward(self, outputs: list) -> None:
        """After a forward that will be reduced: expect the hooks; with find_unused_parameters, walk teachgrad's
        graph back from the outputs and list the parameters it does not reach."""
        self.expect_autograd_hooks = True
        self.next_bucket = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
        self.has_marked_unused = False
        self.ready_in_this_iteration = set()
        if self.find_unused_parameters:
            reached = _leaves_reached(outputs)
            self.unused_parameters = [i for i, p in enumerate(self.params) if id(p) not in reached]

    # --- backward: the hooks ---

    def autograd_hook(self, index: int) -> None:
        """A parameter's gradient has been accumulated into its `.grad`."""
        if self.find_unused_parameters and self.params[index].grad is not None:
            self.local_used[index] = 1
        if not self.expect_autograd_hooks:       # under no_sync(): gradients just accumulate
            return
        if not self.has_marked_unused:
            self.has_marked_unused = True
            for unused in self.unused_parameters:
                self.mark_variable_ready(unused)
        if not self.find_unused_parameters and not self.has_rebuilt_buckets:
            self.rebuilt_param_indices.append(index)
        self.mark_variable_ready(index)

    def mark_variable_ready(self, index: int) -> None:
        if index in self.ready_in_this_iteration:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of the following reasons: "
                "1) Use of a module parameter outside the `forward` function. 2) Reused parameters in multiple "
                f"reentrant backward passes.\nParameter at index {index} has been marked as ready twice.")
        self.ready_in_this_iteration.add(index)
        self.require_finalize = True
        b, k = self.locators[index]
        bucket = self.buckets[b]
        self._copy_into_bucket(bucket, k)
        bucket.pending -= 1
        if bucket.pending == 0:
            self.mark_bucket_ready(b)
        if self.next_bucket == len(self.buckets):   # every bucket sent: the rest happens at the end of backward
            if self.find_unused_parameters:
                self.local_used_work = dist.all_reduce(self.local_used, group=self.process_group, async_op=True)
            execution_engine.queue_callback(self.finalize_backward)

    def _copy_into_bucket(self, bucket, k):
        """The gradient into its place in the bucket, divided by the number of processes on the way (unless a comm
        hook does the averaging); a parameter without a gradient sends zeros."""
        param, view = bucket.params[k], bucket.views_in[k]
        grad = param.grad
        if grad is None:
            view.zero_()
        elif not _same_memory(grad, view):
            if self.comm_hook is None:
                torch.mul(grad, 1.0 / self.process_group.size(), out=view)
            else:
                view.copy_(grad)
            if self.gradient_as_bucket_view:
                param.grad = view
        elif self.comm_hook is None:
            view.div_(self.process_group.size())

    def mark_bucket_ready(self, b: int) -> None:
        """Buckets are sent in order: this one and every full one after it, once all before it have gone."""
        if b > self.next_bucket:
            return
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self.all_reduce_bucket(self.buckets[self.next_bucket])
            self.next_bucket += 1

    def all_reduce_bucket(self, bucket: _Bucket) -> None:
        grad_bucket = GradBucket(self.next_bucket, len(self.buckets), bucket.gradients, bucket.offsets,
                                 bucket.lengths, bucket.params)
        if self.comm_hook is None:   # a sum: the gradients were divided on their way in
            bucket.future = dist.all_reduce(bucket.gradients, group=self.process_group, async_op=True).get_future()
        else:
            hook, state = self.comm_hook
            bucket.future = hook(state, grad_bucket)

    # --- the end of backward ---

    def finalize_backward(self) -> None:
        """Queued on the engine: wait for every bucket, and put the averages into the parameters' `.grad`."""
        self.expect_autograd_hooks = False
        self.require_finalize = False
        if self.find_unused_parameters:   # which parameters some rank used (torch waits only once it meets a
            self.local_used_work.wait()   # parameter this rank did not use: the same answer, a little later)
        for bucket in self.buckets:
            bucket.future.wait()
            result = bucket.future.value()
            if isinstance(result, (list, tuple)):
                result = result[0]
            bucket.views_out = [_view(result, p, o) for p, o in zip(bucket.params, bucket.offsets)]
            self._copy_out_of_bucket(bucket)
        if self.find_unused_parameters:
            self.local_used.zero_()

    def _copy_out_of_bucket(self, bucket):
        for k, param in enumerate(bucket.params):
            index = bucket.indices[k]
            # a parameter no process used keeps its .grad as it was
            if self.find_unused_parameters and int(self.local_used[index]) == 0:
                continue
            out = bucket.views_out[k]
            if not self.gradient_as_bucket_view:
                if param.grad is None:
                    param.grad = out.clone()
                else:
                    param.grad.copy_(out)
            else:
                view_in = bucket.views_in[k]
                if not _same_memory(view_in, out):
                    view_in.copy_(out)
                if param.grad is None:
                    param.grad = view_in

    def ensure_prior_reduction_finished(self) -> None:
        """torch's check before a new forward: every gradient of the last reduced backward must have arrived."""
        if not self.require_finalize:
            return
        unmarked = [i for i in range(len(self.params)) if i not in self.ready_in_this_iteration]
        message = PRIOR_REDUCTION
        if not self.find_unused_parameters:
            message += ("You can enable unused parameter detection by passing the keyword argument "
                        "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
                        + OUTPUTS_IN_LOSS + NOT_LOCATED)
        else:
            message += ("Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` "
                        "outputs participate in computing loss. You can fix this by " + OUTPUTS_IN_LOSS + NOT_LOCATED)
        message += (f"\nParameter indices which did not receive grad for rank {self.process_group.rank()}: "
                    + " ".join(str(i) for i in unmarked) + DEBUG_HINT)
        raise RuntimeError(message)


def _leaves_reached(outputs):
    """The ids of the torch tensors whose AccumulateGrad node teachgrad's graph reaches from `outputs`."""
    seen, reached = set(), set()
    stack = [out.grad_fn for out in outputs if getattr(out, "grad_fn", None) is not None]
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            reached.add(id(node.variable))
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return reached
