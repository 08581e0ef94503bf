"""The backward engine: from the output back to the leaves, one node at a time.

1. Walk the graph from the roots and count, for every node, how many edges lead into it.
2. Seed each root with its gradient (ones for a scalar output).
3. Run a node once every gradient bound for it has arrived (its count dropped to zero),
   summing gradients that meet at the same input; newest node first, as torch does.
4. A leaf's `AccumulateGrad` adds what reaches it into `.grad`.
Without `retain_graph`, each node drops its saved tensors once it has run.

A leaf's first gradient is copied into `.grad`, unless the engine knows nobody else holds that
tensor (a built-in op has just computed it): then the leaf keeps it as it is, as torch does.
"""
import contextlib
import heapq
import itertools
import threading
from collections import namedtuple

import torch

from . import function, grad_mode
from .function import AccumulateGrad

Step = namedtuple("Step", "node grad_outputs grad_inputs")
Step.__doc__ = "One node run by the engine: the gradients it received and the ones it sent on its edges."

_recorders = []

GraphTask = namedtuple("GraphTask", "id whole_graph")
GraphTask.__doc__ = "One backward() or grad() call; whole_graph: a backward() without inputs= (runs every node)."
_task_ids = itertools.count()
_tasks = threading.local()


@contextlib.contextmanager
def _graph_task(whole_graph):
    stack = _tasks.__dict__.setdefault("stack", [])
    stack.append(GraphTask(next(_task_ids), whole_graph))
    try:
        yield
    finally:
        stack.pop()


def current_graph_task():
    """The backward pass running now in this thread (a checkpoint recomputes once per pass), or None."""
    stack = getattr(_tasks, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def record_backward():
    """Record every node the engine runs, in order, as a list of `Step`s.

        with record_backward() as steps:
            t.backward()
        [s.node.name() for s in steps]   # ['MulBackward0', 'AccumulateGrad', ...]
    """
    steps = []
    _recorders.append(steps)
    try:
        yield steps
    finally:
        _recorders.remove(steps)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add the gradient of `tensors` to the `.grad` of the leaves (or only of `inputs`)."""
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(tensors, _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    with _graph_task(inputs is None):
        _run(tensors, grads, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         materialize_grads=False):
    """Return the gradients of `outputs` with respect to `inputs`, leaving every `.grad` alone.

    An input the outputs do not depend on is an error, or gets None (`allow_unused=True`) or
    zeros (`materialize_grads=True`).
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_tuple = _as_tuple(inputs)
    for x in inputs_tuple:
        if not x.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    with _graph_task(False):
        captured = _run(outputs, grads, retain_graph, create_graph, inputs_tuple, accumulate=False)
    result = []
    for k, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
        if g is None and materialize_grads:
            g = function.Variable(torch.zeros_like(inputs_tuple[k].data), requires_grad=create_graph)
        result.append(None if g is None else _as_variable(g))
    return tuple(result)


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _as_variable(g):
    return g if isinstance(g, function.Variable) else function.Variable._make(g)


def _make_grads(outputs, grads, create_graph):
    """Check the given output gradients, and make ones for scalar outputs given none."""
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    Variable = function.Variable
    made = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Variable):
            raise TypeError(f"expected a teachgrad Variable, got {type(out).__name__}")
        if g is None:
            if out.requires_grad and out.data.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.requires_grad and not out.data.is_floating_point():
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            data = torch.ones_like(out.data, memory_format=torch.preserve_format)
        else:
            data = g.data if isinstance(g, Variable) else torch.as_tensor(g)
            if data.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {data.shape} and output[{i}] "
                    f"has a shape of {out.shape}."
                )
            if data.device != out.device:
                raise RuntimeError(f"invalid gradient at index {i} - expected device {out.device} but got {data.device}")
        if create_graph:
            made.append(g if isinstance(g, Variable) else Variable._make(data))
        else:
            made.append(data)
    return made


def _count_dependencies(roots):
    """How many edges lead into each node reachable from the roots."""
    dependencies = {}
    seen = set(roots)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            dependencies[next_node] = dependencies.get(next_node, 0) + 1
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return dependencies


def _run(outputs, grads, retain_graph, create_graph, inputs, accumulate):
    """Run backward from `outputs`. With `accumulate`, fill `.grad`; else return the inputs' gradients."""
    buffers = {}  # node -> [gradient of each of its outputs]
    for i, (out, g) in enumerate(zip(outputs, grads)):
        node, output_nr = out._edge()
        if node is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        buffer = buffers.setdefault(node, [None] * node._num_outputs)
        buffer[output_nr] = g if buffer[output_nr] is None else buffer[output_nr] + g

    # Where to catch the inputs' gradients: at a leaf's AccumulateGrad, or at the node that made it.
    targets = {}
    if inputs is not None:
        for k, x in enumerate(inputs):
            targets.setdefault(x._edge(), []).append(k)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    owned = set()  # ids of buffered gradients that a built-in op computed and nobody else holds
    dependencies = _count_dependencies(buffers)
    ready = [(-node._sequence_nr, n, node) for n, node in enumerate(buffers) if node not in dependencies]
    heapq.heapify(ready)
    tiebreak = len(ready)

    with grad_mode.set_grad_enabled(create_graph):
        while ready:
            node = heapq.heappop(ready)[2]
            grad_outputs = buffers.pop(node)
            if owned:
                ours = [id(g) in owned for g in grad_outputs]
                owned.difference_update(id(g) for g in grad_outputs)
            else:
                ours = None
            if node._pre_hooks:
                grad_outputs = _call_pre_hooks(node, grad_outputs, create_graph)
            if targets:
                for output_nr, g in enumerate(grad_outputs):
                    for k in targets.get((node, output_nr), ()):
                        captured[k] = g if captured[k] is None else captured[k] + g
                        if accumulate and not isinstance(node, AccumulateGrad):
                            inputs[k]._accumulate_grad(g)

            if isinstance(node, AccumulateGrad):
                if accumulate and grad_outputs[0] is not None and (inputs is None or (node, 0) in targets):
                    node.apply(grad_outputs[0], owned=bool(ours and ours[0]) and not node._pre_hooks)
                grad_inputs = ()
            else:
                grad_inputs = _call_node(node, grad_outputs)
                if not retain_graph:
                    node._release()
            if node._post_hooks:
                for hook in node._post_hooks:
                    hook(tuple(grad_inputs), tuple(grad_outputs))
            for steps in _recorders:
                steps.append(Step(node, _plain(grad_outputs), _plain(grad_inputs)))

            fresh = () if create_graph else _fresh(node, grad_outputs, grad_inputs)
            for (next_node, input_nr), g in zip(node.next_functions, grad_inputs):
                if next_node is None:
                    continue
                buffer = buffers.get(next_node)
                if buffer is None:
                    buffer = buffers[next_node] = [None] * next_node._num_outputs
                if g is not None:
                    if buffer[input_nr] is None:
                        buffer[input_nr] = g
                        if id(g) in fresh:
                            owned.add(id(g))
                    else:
                        owned.discard(id(buffer[input_nr]))
                        buffer[input_nr] = buffer[input_nr] + g
                        if not create_graph:
                            owned.add(id(buffer[input_nr]))
                left = dependencies[next_node] - 1
                dependencies[next_node] = left
                if left == 0:
                    heapq.heappush(ready, (-next_node._sequence_nr, tiebreak, next_node))
                    tiebreak += 1
    return captured


def _fresh(node, grad_outputs, grad_inputs):
    """Ids of the gradients a built-in node has just computed: new tensors, each sent on one edge.

    Not fresh: a gradient passed through unchanged (Add's), a view (T's), one sent twice, or any
    that a user's code could hold (a custom Function's, one a hook or a recording has seen).
    """
    if isinstance(node, AccumulateGrad) or node._forward_cls.check_gradients or node._post_hooks or _recorders:
        return ()
    arrived = {id(g) for g in grad_outputs}
    ids = [id(g) for g in grad_inputs if g is not None and g._base is None]
    return {i for i in ids if i not in arrived and ids.count(i) == 1}


def _call_node(node, grad_outputs):
    """Run one node's backward and return one gradient per edge in `next_functions`."""
    if all(g is None for g in grad_outputs):   # (list.count would compare tensors with ==)
        return (None,) * len(node.next_functions)
    if node._num_outputs > 1 and node.materialize_grads:
        grad_outputs = [_zeros(meta) if g is None else g for g, meta in zip(grad_outputs, node._output_meta)]
    grads = node.apply(*grad_outputs)
    if not isinstance(grads, tuple):
        grads = (grads,)
    slots = node._input_slots
    if len(grads) != len(node.needs_input_grad):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.needs_input_grad)}, got {len(grads)})"
        )
    grad_inputs = [grads[i] for i in slots]
    if node._forward_cls.check_gradients:
        _validate(node, grad_inputs)
    return grad_inputs


def _validate(node, grad_inputs):
    """Check a user Function's gradients against its inputs: shape, dtype and device."""
    for k, (g, meta) in enumerate(zip(grad_inputs, node._input_meta)):
        if g is None or meta is None:
            continue
        shape, dtype, device = meta
        if g.shape != shape:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {k} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
            )
        if g.device != device:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {k} - expected device "
                f"{device} but got {g.device}"
            )


def _call_pre_hooks(node, grad_outputs, create_graph):
    Variable = function.Variable
    grad_outputs = list(grad_outputs)
    for output_nr, hooks in node._pre_hooks.items():
        for hook in list(hooks):
            g = grad_outputs[output_nr]
            if g is None:
                continue
            new = hook(g if isinstance(g, Variable) else Variable._make(g))
            if new is not None:
                if not isinstance(new, Variable):
                    new = Variable._make(new)
                grad_outputs[output_nr] = new if create_graph else new.data
    return grad_outputs


def _zeros(meta):
    shape, dtype, device = meta
    zeros = torch.zeros(shape, dtype=dtype, device=device)
    return function.Variable._make(zeros) if grad_mode.is_grad_enabled() else zeros


def _plain(grads):
    return tuple(None if g is None else (g.data if isinstance(g, function.Variable) else g).detach() for g in grads)
