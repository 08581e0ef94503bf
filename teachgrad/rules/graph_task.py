"""The backward pass running now, for code that asks about it while it runs (kept beside the engine's loop).

- `current_graph_task()`: the pass running in this thread (a checkpoint recomputes its segment once per pass);
- what that pass knows of its graph (`share_with_task`), which teachgrad/core/engine.py's
  `will_engine_execute_node(node)` reads (torch._C._will_engine_execute_node, which `register_multi_grad_hook` asks);
- `record_backward()`: every node the engine runs, in order, as `Step`s (what the notebooks draw and print);
- `queue_callback(fn)`: `fn()` runs once this pass has run its last node (torch's
  `Variable._execution_engine.queue_callback`: a data-parallel reducer waits there for its last all-reduce).

Guarded by tests/test_autograd_api.py (multi-grad hooks), tests/test_checkpoint.py (one recomputation per
pass), tests/test_engine.py, tests/test_engine_fidelity.py (record_backward) and tests/test_queue_callback.py.
"""
import contextlib
import itertools
import threading
from collections import namedtuple

from . import variable_class


Step = namedtuple("Step", "node grad_outputs grad_inputs")
Step.__doc__ = "One node run by the engine: the gradients it received and the ones it sent on its edges."

_local = threading.local()   # each thread records its own backward passes

GraphTask = namedtuple("GraphTask", "id whole_graph graph")
GraphTask.__doc__ = ("One backward() or grad() call; whole_graph: a backward() without inputs= (runs every node); "
                     "graph: what _run fills in for will_engine_execute_node.")
_task_ids = itertools.count()
_tasks = threading.local()


class graph_task:
    """`with graph_task(whole_graph) as task:` one backward pass, the newest on this thread's stack while it runs.

    A class rather than a `contextlib.contextmanager` generator: it is entered on every backward() and grad(),
    and a generator-based manager costs a few microseconds more each time."""

    def __init__(self, whole_graph):
        self.task = GraphTask(next(_task_ids), whole_graph, {})

    def __enter__(self):
        stack = _tasks.__dict__.get("stack")
        if stack is None:
            stack = _tasks.stack = []
        stack.append(self.task)
        self.stack = stack
        return self.task

    def __exit__(self, *exc):
        self.stack.pop()
        return False


def current_graph_task():
    """The backward pass running now in this thread (a checkpoint recomputes once per pass), or None."""
    stack = getattr(_tasks, "stack", None)
    return stack[-1] if stack else None


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


def queue_callback(callback):
    """Run `callback()` when the backward pass running now in this thread has run its last node, after the
    callbacks queued before it (one queued by a callback runs too), as torch's engine runs its final callbacks.
    Kept in the pass's own dict, made only when something is queued: a pass with none pays one lookup."""
    task = current_graph_task()
    if task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task.graph.setdefault("final_callbacks", []).append(callback)


def run_final_callbacks(task):
    """The callbacks queued during `task`, in order, those they queue included (torch's exec_post_processing)."""
    callbacks = task.graph["final_callbacks"]
    i = 0
    while i < len(callbacks):
        callbacks[i]()
        i += 1


def share_with_task(task, buffers, dependencies, execute, capture):
    """What will_engine_execute_node asks about this pass (references only: nothing is copied for a question
    rarely asked)."""
    task.graph.update(dependencies=dependencies, roots=tuple(buffers), execute=execute, grad=capture)


def recorders():
    """The lists that `record_backward` blocks open in this thread are filling (none: an empty tuple)."""
    return _local.__dict__.get("recorders") or ()   # (not getattr: a miss would raise and catch an AttributeError)


def record_step(recorders, node, grad_outputs, grad_inputs):
    """Give every open `record_backward` block the node the engine has just run, with plain copies of its gradients."""
    for steps in recorders:
        steps.append(Step(node, _plain(grad_outputs), _plain(grad_inputs)))


def _plain(grads):
    return tuple(None if g is None else (g.data if isinstance(g, variable_class.Variable) else g).detach() for g in grads)
