"""The backward engine: from the output back to the leaves, one node at a time.

1. Walk the graph from the roots and count, for every node, how many edges lead into it.
   Asked for some `inputs` only (`grad`, `backward(inputs=...)`), mark the nodes on a path
   to them: no other node runs, fires its hooks or frees its saved tensors.
2. Seed each root with its gradient (ones for a scalar output).
3. Run a node once every gradient bound for it has arrived (its count dropped to zero),
   summing gradients that meet at the same input; newest node first, as torch does.
   Running a node: its tensor hooks, `retain_grad`, its pre-hooks, its backward, each gradient
   fitted to its input (dtype, shape, device), its post-hooks; then it drops its saved tensors
   (unless `retain_graph`).
4. A leaf's `AccumulateGrad` adds what reaches it into `.grad`.

A leaf's first gradient is copied into `.grad`, unless the engine knows nobody else holds that
tensor (a built-in op has just computed it): then the leaf keeps it as it is, as torch does.
"""
import contextlib
import heapq
import itertools
import threading
from collections import namedtuple

import torch

from . import anomaly_mode, forward_ad, function, grad_mode, torch_leaves
from .function import AccumulateGrad
from .ops.broadcast import unbroadcast

Step = namedtuple("Step", "node grad_outputs grad_inputs")
Step.__doc__ = "One node run by the engine: the gradients it received and the ones it sent on its edges."

_local = threading.local()   # each thread records its own backward passes

GraphTask = namedtuple("GraphTask", "id whole_graph graph")
GraphTask.__doc__ = ("One backward() or grad() call; whole_graph: a backward() without inputs= (runs every node); "
                     "graph: what _run fills in for will_engine_execute_node.")
_task_ids = itertools.count()
_tasks = threading.local()


@contextlib.contextmanager
def _graph_task(whole_graph):
    stack = _tasks.__dict__.setdefault("stack", [])
    stack.append(GraphTask(next(_task_ids), whole_graph, {}))
    try:
        yield
    finally:
        stack.pop()


def current_graph_task():
    """The backward pass running now in this thread (a checkpoint recomputes once per pass), or None."""
    stack = getattr(_tasks, "stack", None)
    return stack[-1] if stack else None


def will_engine_execute_node(node):
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


@contextlib.contextmanager
def record_backward():
    """Record every node the engine runs in this thread, in order, as a list of `Step`s.

        with record_backward() as steps:
            t.backward()
        [s.node.name() for s in steps]   # ['MulBackward0', 'AccumulateGrad', ...]
    """
    steps = []
    recorders = _local.__dict__.setdefault("recorders", [])
    recorders.append(steps)
    try:
        yield steps
    finally:
        recorders[:] = [r for r in recorders if r is not steps]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add the gradient of `tensors` to the `.grad` of the leaves (or only of `inputs`)."""
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _checked_inputs(inputs, "backward")
        for x in inputs:
            x.retain_grad()   # as torch: a non-leaf input gets its .grad this way (and one that needs none is refused)
    grads = _make_grads(tensors, _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    with _graph_task(inputs is None):
        _run(tensors, grads, retain_graph, create_graph, inputs, capture=False)


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
    inputs_tuple = _checked_inputs(inputs, "grad")
    for i, out in enumerate(outputs):   # as torch: the outputs are checked before the inputs
        if isinstance(out, function.Variable) and not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for x in inputs_tuple:
        if not x.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    with _graph_task(False):
        captured = _run(outputs, grads, retain_graph, create_graph, inputs_tuple, capture=True)
    result = []
    for k, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
        if g is None and materialize_grads:
            g = function.Variable(torch.zeros_like(inputs_tuple[k].data), requires_grad=create_graph)
        if isinstance(inputs_tuple[k], torch_leaves.TorchLeaf):   # a torch tensor's gradient: a torch tensor
            if create_graph:
                raise RuntimeError(torch_leaves.CREATE_GRAPH)
            result.append(None if g is None else _plain_tensor(g))
        else:
            result.append(None if g is None else _as_variable(g))
    return tuple(result)


def _plain_tensor(g):
    return g.data if isinstance(g, function.Variable) else g


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _checked_inputs(inputs, caller):
    """`inputs` as a tuple of Variables, refused as torch refuses them when empty or not tensors.

    A torch tensor that requires grad is a leaf of teachgrad's graph: its TorchLeaf stands for it."""
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{caller}()` cannot be empty.")
    for x in inputs:
        if not isinstance(x, (function.Variable, torch.Tensor)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(x).__name__}")
    return tuple(_input_variable(x) if isinstance(x, torch.Tensor) else x for x in inputs)


def _input_variable(tensor):
    return torch_leaves.leaf(tensor) if tensor.requires_grad else function.Variable._make(tensor)


def _as_variable(g):
    return g if isinstance(g, function.Variable) else function.Variable._make(g)


def _make_grads(outputs, grads, create_graph):
    """Check the given output gradients, and make ones for scalar outputs given none."""
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
            if not isinstance(g, (Variable, torch.Tensor)):
                raise TypeError(f"gradients can be either Tensors or None, but got {_typename(g)}")
            data = g.data if isinstance(g, Variable) else g
            if data.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {data.shape} and output[{i}] "
                    f"has a shape of {out.shape}."
                )
            data = _fit_dtype(data, out.dtype)
            data = _fit_device(data, out.device, lambda message: message, i)
            if isinstance(g, Variable) and data is g.data:
                data = g
        if create_graph or forward_ad._current_level >= 0:   # a dual level: gradients carry tangents too
            made.append(data if isinstance(data, Variable) else Variable._make(data))
        else:
            made.append(data.data if isinstance(data, Variable) else data)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return made


def _count_dependencies(roots):
    """How many edges lead into each node reachable from the roots."""
    dependencies = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        for next_node in node._next_nodes:
            if next_node is None:
                continue
            count = dependencies.get(next_node)
            if count is None:   # reached for the first time: walk on from it (a root was walked already)
                dependencies[next_node] = 1
                if next_node not in roots:
                    stack.append(next_node)
            else:
                dependencies[next_node] = count + 1
    return dependencies


def _needed(roots, targets):
    """The nodes on a path from the roots to a target (torch's exec_info): only these run.

    A target is needed itself only if it leads to another target below it; `grad()` catches the
    gradient of a target that is not needed without running it.
    """
    needed = set()
    done = set()
    for root in roots:
        stack = [(root, iter(root._next_nodes))]
        done.add(root)
        while stack:
            node, edges = stack[-1]
            for next_node in edges:
                if next_node is None:
                    continue
                if next_node not in done:
                    done.add(next_node)
                    stack.append((next_node, iter(next_node._next_nodes)))
                    break
                if next_node in needed or next_node in targets:
                    needed.add(node)
            else:
                stack.pop()
                if stack and (node in needed or node in targets):
                    needed.add(stack[-1][0])
    return needed


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


def _exec_info(roots, inputs, capture):
    """Which nodes run when only `inputs` are asked for; for grad(), where each input's gradient is caught.

    Returns (captures, needed, execute): captures maps a node to [(output_nr, k)] for inputs[k];
    needed nodes run; execute (None: every node) is what may be reached at all.
    """
    if inputs is None:
        return {}, None, None
    if not capture:
        targets = {x._edge()[0] for x in inputs}
        needed = _needed(roots, targets) | targets
        return {}, needed, needed
    captures = {}
    for k, x in enumerate(inputs):
        node, output_nr = x._edge()
        captures.setdefault(node, []).append((output_nr, k))
    needed = _needed(roots, captures)
    return captures, needed, needed | captures.keys()


def _run(outputs, grads, retain_graph, create_graph, inputs, capture):
    """Run backward from `outputs`. With `capture` (grad()), return the inputs' gradients instead of filling `.grad`."""
    buffers = _seed(outputs, grads)                      # node -> [the gradient of each of its outputs, summed]
    captures, needed, execute = _exec_info(buffers, inputs, capture)
    captured = [None] * (len(inputs) if capture else 0)
    dependencies = _count_dependencies(buffers)          # node -> how many gradients it still waits for
    _share_with_task(buffers, dependencies, execute, capture)
    watch = _Watch(create_graph)                         # anomaly mode, record_backward, `.grad` kept uncopied
    ready = [(-node._sequence_nr, next(watch.order), node) for node in buffers   # newest first, as torch's
             if node not in dependencies and (execute is None or node in execute)]          # ready queue
    heapq.heapify(ready)
    with grad_mode.set_grad_enabled(create_graph):
        while ready:
            node = heapq.heappop(ready)[2]
            grad_outputs = buffers.pop(node)
            if captures and node in captures and _captured(node, grad_outputs, captures[node], captured, needed,
                                                           create_graph):
                continue                                 # grad() caught it, and nothing below it is asked for
            grad_outputs, grad_inputs = _call_function(node, grad_outputs, watch)
            if not retain_graph:
                node._release()                          # drop what forward saved
            for next_node, input_nr, g in zip(node._next_nodes, node._input_nrs, grad_inputs):
                if next_node is None or (execute is not None and next_node not in execute):
                    continue
                buffer = buffers.get(next_node) or buffers.setdefault(next_node, [None] * next_node._num_outputs)
                if g is not None:                        # gradients meeting at one input are summed
                    buffer[input_nr] = g if buffer[input_nr] is None else buffer[input_nr] + g
                    if type(next_node) is AccumulateGrad:
                        watch.track_owner(next_node, buffer[input_nr] is not g, node, g, grad_outputs, grad_inputs)
                dependencies[next_node] -= 1
                if not dependencies[next_node]:
                    heapq.heappush(ready, (-next_node._sequence_nr, next(watch.order), next_node))
    return captured


def _share_with_task(buffers, dependencies, execute, capture):
    """What will_engine_execute_node asks about this pass (references only: nothing is copied for a question
    rarely asked)."""
    task = current_graph_task()
    if task is not None:
        task.graph.update(dependencies=dependencies, roots=tuple(buffers), execute=execute, grad=capture)


class _Watch:
    """What the engine does around each node beyond running it, kept apart from the loop: anomaly mode's checks,
    `record_backward`'s recorders, and the rule for when a leaf's `.grad` may keep a gradient uncopied."""

    def __init__(self, create_graph):
        self.create_graph = create_graph
        self.recorders = getattr(_local, "recorders", None) or ()
        self.check_nan = anomaly_mode._enabled and anomaly_mode._check_nan
        self.owned = set()   # AccumulateGrad nodes whose buffered gradient nobody else holds (no copy needed)
        self.may_own = not (create_graph or self.recorders)   # else a gradient may be recorded, or held by the graph
        self.order = itertools.count()   # among nodes of one sequence number, the first ready runs first

    def track_owner(self, accumulator, summed, sender, g, grad_outputs, grad_inputs):
        """Whether the gradient now waiting at a leaf's AccumulateGrad is one nobody else holds (a sum the
        engine made, or a fresh result of a built-in backward): then `.grad` can keep it uncopied, as torch's."""
        if (summed and not self.create_graph) or (self.may_own and _fresh(sender, g, grad_outputs, grad_inputs)):
            self.owned.add(accumulator)
        else:
            self.owned.discard(accumulator)


def _captured(node, grad_outputs, where, captured, needed, create_graph):
    """grad() catches its inputs' gradients as they reach their node; True when the node need not run."""
    _capture(node, grad_outputs, where, captured, node in needed, create_graph)
    return node not in needed


def _capture(node, grad_outputs, where, captured, runs, create_graph):
    """grad() catches its inputs' gradients as they reach their node: as they arrive if the node runs
    anyway (torch's order), else after the node's tensor hooks (the only hooks that then fire)."""
    if not runs:
        grad_outputs = _call_tensor_pre_hooks(node, grad_outputs, create_graph)
    for output_nr, k in where:
        captured[k] = grad_outputs[output_nr]


def _call_function(node, grad_outputs, watch):
    """Run one node as torch's engine does: the hooks on what it made, its backward (a leaf's AccumulateGrad adds
    into `.grad`), its post-hooks. Returns the gradients it got (after its hooks) and one per edge."""
    try:
        hooked = node._tensor_pre_hooks or node._retains_grad_hooks or node._pre_hooks
        if hooked:
            grad_outputs = _call_tensor_pre_hooks(node, grad_outputs, watch.create_graph)
            grad_outputs = _call_pre_hooks(node, grad_outputs, watch.create_graph)
        if type(node) is AccumulateGrad:
            if grad_outputs[0] is not None:
                node.apply(grad_outputs[0], owned=not hooked and node in watch.owned)
            grad_inputs = ()
        else:
            grad_inputs = _call_node(node, grad_outputs)
        if node._post_hooks:
            grad_inputs = _call_post_hooks(node, grad_inputs, grad_outputs, watch.create_graph)
        if watch.check_nan:
            _check_nan(node, grad_inputs)
    except Exception:
        if anomaly_mode._enabled:   # name the forward op that made the node
            anomaly_mode.warn_forward_stack(node)
        raise
    for steps in watch.recorders:
        steps.append(Step(node, _plain(grad_outputs), _plain(grad_inputs)))
    return grad_outputs, grad_inputs


def _fresh(node, g, grad_outputs, grad_inputs):
    """Whether a built-in node has just computed `g`: a new tensor, sent on this one edge only.

    Not fresh: a gradient passed through unchanged (Add's), a view (T's), one sent twice, or any
    that a user's code could hold (a custom Function's, one a hook has seen).
    """
    if node._forward_cls.check_gradients or node._post_hooks or g._base is not None:
        return False
    for arrived in grad_outputs:
        if arrived is g:
            return False
    sent = 0
    for other in grad_inputs:
        if other is g:
            sent += 1
    return sent == 1


def _call_node(node, grad_outputs):
    """Run one node's backward and return one gradient per edge, each fitted to its input."""
    if node._num_outputs > 1:
        if all(g is None for g in grad_outputs):   # (list.count would compare with ==)
            return [None] * len(node._next_nodes)
        if node.materialize_grads:
            grad_outputs = [_zeros(meta) if g is None else g for g, meta in zip(grad_outputs, node._output_meta)]
    elif grad_outputs[0] is None:
        return [None] * len(node._next_nodes)
    if node._forward_cls.check_gradients:
        grads = _call_user_backward(node, grad_outputs)
    else:
        grads = node._forward_cls.backward(node, *grad_outputs)   # (what node.apply does)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != len(node.needs_input_grad):
            raise RuntimeError(_wrong_number_message(node, len(grads)))
    slots = node._input_slots
    grad_inputs = list(grads) if len(slots) == len(grads) else [grads[i] for i in slots]
    _fit_to_inputs(node, grad_inputs)
    return grad_inputs


def _call_user_backward(node, grad_outputs):
    """A user's backward, checked; in a first-order pass it gets Variables (as torch's gets tensors)."""
    first_order = not grad_mode.is_grad_enabled()
    if first_order:
        grad_outputs = [_hook_value(g) for g in grad_outputs]
    grads = node.apply(*grad_outputs)
    grads = _checked_user_gradients(node, grads if isinstance(grads, tuple) else (grads,))
    if first_order:
        grads = tuple(_unwrap(g, create_graph=False) for g in grads)
    return grads


def _wrong_number_message(node, got):
    return (f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.needs_input_grad)}, got {got})")


def _checked_user_gradients(node, grads):
    """What a user's backward returned: one tensor or None per forward input (extra trailing Nones dropped)."""
    expected = len(node.needs_input_grad)
    if len(grads) > expected and all(g is None for g in grads[expected:]):
        grads = grads[:expected]
    if len(grads) != expected:
        raise RuntimeError(_wrong_number_message(node, len(grads)))
    for i, g in enumerate(grads):
        if g is None:
            continue
        if i not in node._input_slots:
            raise RuntimeError(f"function {node.name()} returned a gradient different than None at position {i + 1}, "
                               "but the corresponding forward input was not a Variable")
        if not isinstance(g, (torch.Tensor, function.Variable)):
            raise RuntimeError(f"expected Variable or None (got {_typename(g)})")
    return grads


def _fit_to_inputs(node, grad_inputs):
    """Make each gradient look like its input, as torch's engine does for every node (validate_outputs)."""
    metas = node._input_meta
    for k, g in enumerate(grad_inputs):
        if g is not None and metas[k] is not None and (g.shape, g.dtype, g.device) != metas[k]:
            grad_inputs[k] = _fitted(node, k, g, metas[k])


def _fitted(node, k, g, meta):
    """A gradient that does not match its input (shape, dtype, device): summed, cast, moved, or refused."""
    shape, dtype, device = meta
    message = lambda text: f"Function {node.name()} returned an {text}"   # noqa: E731
    if g.shape != shape:
        g = _fit_shape(g, shape, message, k)
    g = _fit_dtype(g, dtype)
    return _fit_device(g, device, message, k)


def _fit_shape(g, shape, message, k):
    """A gradient of a broadcast shape is summed back to the input's; any other shape is a bug."""
    if not _expandable(shape, g.shape):
        raise RuntimeError(message(f"invalid gradient at index {k} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(shape)}"))
    return unbroadcast(g, shape)


def _expandable(shape, to):
    """Whether `shape` broadcasts to `to`."""
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


def _fit_dtype(g, dtype):
    """A gradient takes its input's dtype (an f16 input of an f32 product gets an f16 gradient)."""
    return g if g.dtype is dtype else g.to(dtype)


def _fit_device(g, device, message, k):
    """A gradient must be on its input's device; only a scalar is moved there."""
    if g.device == device:
        return g
    if g.dim() == 0:
        return g.to(device)
    raise RuntimeError(message(f"invalid gradient at index {k} - expected device {device} but got {g.device}"))


# --- hooks, in torch's order: tensor hooks, retain_grad, node pre-hooks | backward | post-hooks ---

def _call_tensor_pre_hooks(node, grad_outputs, create_graph):
    """Hooks registered on the tensors this node made (each sees its tensor's gradient), then retain_grad."""
    if not (node._tensor_pre_hooks or node._retains_grad_hooks):
        return grad_outputs
    grad_outputs = list(grad_outputs)
    for output_nr, hook in list(node._tensor_pre_hooks or ()):
        g = grad_outputs[output_nr]
        result = hook(_hook_value(g))
        if result is not None:
            grad_outputs[output_nr] = _unwrap(_checked_hook_result(hook, g, result), create_graph)
    for output_nr, hook in list((node._retains_grad_hooks or {}).items()):
        hook(grad_outputs[output_nr])
    return grad_outputs


def _call_pre_hooks(node, grad_outputs, create_graph):
    """`Node.register_prehook` hooks: each gets the gradients of the outputs and may replace them."""
    for hook in list(node._pre_hooks or ()):
        result = hook(tuple(_hook_value(g) for g in grad_outputs))
        if result is not None:
            grad_outputs = _checked_hook_tuple(hook, grad_outputs, result, create_graph)
    return grad_outputs


def _call_post_hooks(node, grad_inputs, grad_outputs, create_graph):
    """`Node.register_hook` hooks: each gets (grad_inputs, grad_outputs) and may replace grad_inputs."""
    given_outputs = tuple(_hook_value(g) for g in grad_outputs)
    for hook in list(node._post_hooks):
        result = hook(tuple(_hook_value(g) for g in grad_inputs), given_outputs)
        if result is not None:
            grad_inputs = _checked_hook_tuple(hook, grad_inputs, result, create_graph)
    return grad_inputs


def _hook_value(g):
    """What a hook (or a user's backward) is handed: a Variable (or None)."""
    return None if g is None else _as_variable(g)


def _unwrap(g, create_graph):
    if g is None or create_graph or not isinstance(g, function.Variable):
        return g
    return g.data


def _checked_hook_tuple(hook, before, result, create_graph):
    """A node hook's return value: a tuple as long as what it was given, each entry checked."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{_typename(result)}'")
    if len(result) != len(before):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(before)})")
    return [g if new is None else _unwrap(_checked_hook_result(hook, g, new), create_graph)
            for g, new in zip(before, result)]


def _checked_hook_result(hook, original, result):
    """A gradient a hook returned: a tensor of the same dtype, device and size as the one it replaces."""
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, (function.Variable, torch.Tensor)):
        raise TypeError(f"expected Variable, but hook returned '{_typename(result)}'")
    if result is original:
        return result
    if result.dtype != original.dtype or result.device.type != original.device.type:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {_type_name(original)} "
                           f"got {_type_name(result)})")
    if result.shape != original.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def _typename(x):
    """A value's type as torch's messages name it (a Variable is a Tensor)."""
    return "Tensor" if isinstance(x, function.Variable) else type(x).__name__


def _hook_name(hook):
    return getattr(hook, "__name__", "<unknown>")


def _type_name(g):
    return (g.data if isinstance(g, function.Variable) else g).type()


def _check_nan(node, grad_inputs):
    """In anomaly mode: a backward that returns NaN is an error at the node that made it."""
    for i, g in enumerate(grad_inputs):
        if g is not None and torch.isnan(g.data if isinstance(g, function.Variable) else g).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _zeros(meta):
    shape, dtype, device = meta
    zeros = torch.zeros(shape, dtype=dtype, device=device)
    return function.Variable._make(zeros) if grad_mode.is_grad_enabled() else zeros


def _plain(grads):
    return tuple(None if g is None else (g.data if isinstance(g, function.Variable) else g).detach() for g in grads)
