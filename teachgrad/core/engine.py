"""The backward engine: from the output back to the leaves, one node at a time.

1. Walk the graph from the roots and count, for every node, how many edges lead into it.
   Asked for some `inputs` only (`grad`, `backward(inputs=...)`), mark the nodes on a path
   to them: no other node runs, fires its hooks or frees its saved tensors.
2. Seed each root with its gradient (ones for a scalar output).
3. Run a node once every gradient bound for it has arrived (its count dropped to zero),
   summing gradients that meet at the same input; newest node first, as torch does.
   Running a node: its tensor hooks, `retain_grad`, its pre-hooks, its backward, each gradient
   fitted to its input (dtype, shape, device), its post-hooks; then it drops its saved tensors
   (unless `retain_graph`). A node without hooks, while no profiler, recorder or anomaly mode
   watches, is run by the loop itself: the same steps in fewer Python calls.
4. A leaf's `AccumulateGrad` adds what reaches it into `.grad`.
5. Once the last node has run, the callbacks queued during the pass run, in order (`queue_callback`, as
   torch's `Variable._execution_engine.queue_callback`).

A leaf's first gradient is copied into `.grad`, unless the engine knows nobody else holds that
tensor (a built-in op has just computed it): then the leaf keeps it as it is, as torch does.
"""
from __future__ import annotations

from heapq import heapify, heappop, heappush
import itertools
from typing import Any
import warnings

import torch

from ..rules import anomaly, batching, grad_mode, profiling
from ..rules.needed_nodes import catch_input_grads, exec_info
from .node import AccumulateGrad, BackwardNode, Node
from ..rules.backward_arguments import (BATCHED_CREATE_GRAPH, ONLY_INPUTS_IGNORED, as_tuple, batched_grad_outputs,
                                        checked_grad_call, checked_inputs, grad_results, make_grads)
from ..rules.grad_layout import track_owner
from ..rules.graph_task import graph_task, record_step, recorders, run_final_callbacks, share_with_task
from ..rules.graph_task import Step, current_graph_task, queue_callback, record_backward  # noqa: F401 (engine's API)
from ..rules.hooks import call_post_hooks, call_pre_hooks, call_tensor_pre_hooks
from ..rules.validate_outputs import fitted, wrong_number_message
from ..rules import variable_class


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs: Any = None) -> None:
    """Add the gradient of `tensors` to the `.grad` of the leaves (or only of `inputs`)."""
    tensors = as_tuple(tensors)
    if batching.vmap_depth:   # called inside tg.func.vmap: torch's answer (teachgrad/rules/batching.py)
        batching.refuse_engine_call("backward", tensors)
    if inputs is not None:
        inputs = checked_inputs(inputs, "backward")
        for x in inputs:
            x.retain_grad()   # as torch: a non-leaf input gets its .grad this way (and one that needs none is refused)
    grads = make_grads(tensors, as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    with graph_task(inputs is None) as task:
        _run(task, tensors, grads, retain_graph, create_graph, inputs, capture=False)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Return the gradients of `outputs` with respect to `inputs`, leaving every `.grad` alone.

    An input the outputs do not depend on is an error, or gets None (`allow_unused=True`) or
    zeros (`materialize_grads=True`). `only_inputs` is ignored (torch warns when it is False).
    `is_grads_batched=True`: the first dimension of each grad_output is a batch, one gradient per batch element.
    """
    if not only_inputs:
        warnings.warn(ONLY_INPUTS_IGNORED, FutureWarning, stacklevel=2)
    outputs, inputs_tuple, allow_unused = checked_grad_call(outputs, inputs, allow_unused, materialize_grads)
    if batching.vmap_depth:   # called inside tg.func.vmap: torch's answer (teachgrad/rules/batching.py)
        batching.refuse_engine_call("grad", outputs)
    grad_outputs = as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs_tuple, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = make_grads(outputs, grad_outputs, create_graph)
    with graph_task(False) as task:
        captured = _run(task, outputs, grads, retain_graph, create_graph, inputs_tuple, capture=True)
    return grad_results(captured, inputs_tuple, allow_unused, materialize_grads, create_graph)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad(is_grads_batched=True): torch runs the backward once under vmap; here it runs once per batch
    element (the graph kept until the last), and each input's gradients are stacked along a first dimension."""
    if create_graph:
        raise NotImplementedError(BATCHED_CREATE_GRAPH)
    per_element = batched_grad_outputs(outputs, grad_outputs)
    captured = [[] for _ in inputs]
    for b, grads in enumerate(per_element):
        keep = retain_graph or b < len(per_element) - 1
        with graph_task(False) as task:
            for k, g in enumerate(_run(task, outputs, make_grads(outputs, grads, False), keep, False, inputs, capture=True)):
                captured[k].append(g)
    stacked = [None if gs[0] is None else torch.stack([g.data if isinstance(g, variable_class.Variable) else g
                                                        for g in gs]) for gs in captured]
    return grad_results(stacked, inputs, allow_unused, materialize_grads, False)


def _count_dependencies(roots: dict) -> dict[Node, int]:
    """How many edges lead into each node reachable from the roots."""
    dependencies = {}
    stack = list(roots)
    while stack:
        for next_node in stack.pop()._next_nodes:
            if next_node in dependencies:
                dependencies[next_node] += 1
            elif next_node is not None:   # reached for the first time: walk on from it (a root was walked already)
                dependencies[next_node] = 1
                if next_node not in roots:
                    stack.append(next_node)
    return dependencies


def _seed(outputs, grads):
    """The roots' gradients, in the buffers the engine fills: node -> [gradient of each of its outputs]."""
    buffers = {}
    for i, (out, g) in enumerate(zip(outputs, grads)):
        node, output_nr = out._edge()
        if node is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        buffer = buffers.setdefault(node, [None] * node._num_outputs)
        buffer[output_nr] = g if buffer[output_nr] is None else buffer[output_nr] + g
    return buffers


def _run(task: Any, outputs: tuple, grads: list, retain_graph: bool, create_graph: bool, inputs: tuple | None,
         capture: bool) -> list:
    """Run backward from `outputs`. With `capture` (grad()), return the inputs' gradients instead of filling `.grad`."""
    buffers = _seed(outputs, grads)                      # node -> [the gradient of each of its outputs, summed]
    captures, needed, execute = exec_info(buffers, inputs, capture)
    captured = [None] * (len(inputs) if capture else 0)
    dependencies = _count_dependencies(buffers)          # node -> how many gradients it still waits for
    share_with_task(task, buffers, dependencies, execute, capture)
    watch = _Watch(create_graph)                         # anomaly mode, record_backward, `.grad` kept uncopied
    call_function = profiling.recorded(_call_function) if profiling.profiler_enabled() else _call_function
    # (speed) with nothing watching (no profiler, recorder or anomaly mode), a node without hooks is run by the
    # loop itself, without _call_function's checks: the same work in two or three Python calls fewer per node
    plain = call_function is _call_function and not watch.recorders and not anomaly.enabled
    order = itertools.count()                            # among nodes of one sequence number, the first ready
    ready = [(-node._sequence_nr, next(order), node) for node in buffers         # runs first; newest first, as
             if node not in dependencies and (execute is None or node in execute)]          # torch's ready queue
    heapify(ready)
    was_enabled = grad_mode.is_grad_enabled()
    grad_mode.set_enabled(create_graph)                  # recorded only with create_graph
    try:
        while ready:
            node = heappop(ready)[2]
            grad_outputs = buffers.pop(node)
            if captures and node in captures and catch_input_grads(node, grad_outputs, captures[node], captured,
                                                                   needed, create_graph):
                continue                                 # grad() caught it, and nothing below it is asked for
            if plain and isinstance(node, AccumulateGrad) and not (node._has_hooks or node._tensor_pre_hooks):
                if grad_outputs[0] is not None:          # a leaf without hooks: its gradient added into `.grad`
                    node.apply(grad_outputs[0], owned=node in watch.owned)
                else:                                    # reached without one: `.grad` unchanged, but torch runs
                    node.no_gradient()                   # the post-accumulate-grad hooks all the same
                continue                                 # (it has no edges, and nothing saved to release)
            if plain and isinstance(node, BackwardNode) and not node._has_hooks:
                grad_inputs = call_node(node, grad_outputs)   # an op's node without hooks
            else:
                grad_outputs, grad_inputs = call_function(node, grad_outputs, watch)   # (seen by torch's profiler)
            if not retain_graph:
                node._release()                          # drop what forward saved
            for next_node, input_nr, g in zip(node._next_nodes, node._input_nrs, grad_inputs):
                if next_node is None or (execute is not None and next_node not in execute):
                    continue
                buffer = buffers.get(next_node)
                if buffer is None:
                    buffer = buffers[next_node] = [None] * next_node._num_outputs
                if g is not None:                        # gradients meeting at one input are summed
                    waiting = buffer[input_nr]
                    buffer[input_nr] = g if waiting is None else waiting + g
                    if isinstance(next_node, AccumulateGrad) or next_node._view_node:   # (see grad_layout.py)
                        track_owner(watch, next_node, waiting is not None, node, g, grad_outputs, grad_inputs)
                count = dependencies[next_node] - 1
                dependencies[next_node] = count
                if not count:
                    heappush(ready, (-next_node._sequence_nr, next(order), next_node))
    finally:
        grad_mode.set_enabled(was_enabled)
    if "final_callbacks" in task.graph:                  # queue_callback was called during this pass
        run_final_callbacks(task)
    return captured


class _ExecutionEngine:
    """torch's `Variable._execution_engine`, the one engine, for what code asks it: `queue_callback(fn)` runs
    `fn()` at the end of the backward pass running now (raises outside one)."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        queue_callback(callback)


execution_engine = _ExecutionEngine()


class _Watch:
    """What the engine does around each node beyond running it, kept apart from the loop: anomaly mode's checks,
    `record_backward`'s recorders, and which gradients a leaf's `.grad` may keep uncopied (see grad_layout)."""

    def __init__(self, create_graph):
        self.create_graph = create_graph
        self.recorders = recorders()
        self.check_nan = anomaly.enabled and anomaly.check_nan
        self.owned = set()   # AccumulateGrad (and view) nodes whose buffered gradient nobody else holds: no copy
        self.may_own = not (create_graph or self.recorders)   # else a gradient may be recorded, or held by the graph
        self.sender = self.sent = None   # the last node track_owner counted, and its edges per memory (grad_layout)


def _call_function(node: Node, grad_outputs: list, watch: _Watch) -> tuple[list, list]:
    """Run one node as torch's engine does: the hooks on what it made, its backward (a leaf's AccumulateGrad adds
    into `.grad`), its post-hooks. Returns the gradients it got (after its hooks) and one per edge."""
    try:
        hooked = node._tensor_pre_hooks or node._retains_grad_hooks or node._pre_hooks
        if hooked:
            grad_outputs = call_tensor_pre_hooks(node, grad_outputs, watch.create_graph)
            grad_outputs = call_pre_hooks(node, grad_outputs, watch.create_graph)
        if isinstance(node, AccumulateGrad):
            if grad_outputs[0] is not None:
                node.apply(grad_outputs[0], owned=not hooked and node in watch.owned)
            else:
                node.no_gradient()
            grad_inputs = ()
        else:
            grad_inputs = call_node(node, grad_outputs)
        if node._post_hooks:
            grad_inputs = call_post_hooks(node, grad_inputs, grad_outputs, watch.create_graph)
        if watch.check_nan:
            anomaly.check_nan_in(node, grad_inputs)
    except Exception:
        if anomaly.enabled:   # name the forward op that made the node
            anomaly.warn_forward_stack(node)
        raise
    if watch.recorders:   # record_backward (see teachgrad/rules/graph_task.py)
        record_step(watch.recorders, node, grad_outputs, grad_inputs)
    return grad_outputs, grad_inputs


def will_engine_execute_node(node: Node) -> bool:
    """Whether the backward pass running now runs `node` (torch._C._will_engine_execute_node): it must be
    reachable from the roots and, with `inputs=`, on a path to one of them (register_multi_grad_hook asks)."""
    task = current_graph_task()
    if task is None or not task.graph:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    graph = task.graph
    if graph["grad"] and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    reached = node in graph["dependencies"] or node in graph["roots"]
    return reached and (graph["execute"] is None or node in graph["execute"])


def call_node(node: BackwardNode, grad_outputs: list) -> list:
    """Run one node's backward and return one gradient per edge, each fitted to its input."""
    if node._num_outputs > 1:
        if all(g is None for g in grad_outputs):   # (list.count would compare with ==)
            return [None] * len(node._next_nodes)
        if node.materialize_grads:
            grad_outputs = [_zeros(meta) if g is None else g for g, meta in zip(grad_outputs, node._output_meta)]
    elif grad_outputs[0] is None:
        return [None] * len(node._next_nodes)
    if node._trusted:   # a built-in op's backward
        grads = node._forward_cls.backward(node, *grad_outputs)
    else:               # a user's: checked (BackwardCFunction)
        grads = node._run_backward(grad_outputs)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(node.needs_input_grad):
        raise RuntimeError(wrong_number_message(node, len(grads)))
    slots = node._input_slots   # (None: every argument of forward is an input)
    grad_inputs = list(grads) if slots is None else [grads[i] for i in slots]
    k = 0
    for g, meta in zip(grad_inputs, node._input_meta):   # each fitted to its input (validate_outputs.py)
        if g is not None and meta is not None and (g.shape, g.dtype, g.device) != meta:
            grad_inputs[k] = fitted(node, k, g, meta)
        k += 1
    return grad_inputs


def _zeros(meta):
    shape, dtype, device = meta
    zeros = torch.zeros(shape, dtype=dtype, device=device)
    return variable_class.Variable._make(zeros) if grad_mode.is_grad_enabled() else zeros
