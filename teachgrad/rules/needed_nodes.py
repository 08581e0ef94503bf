"""`grad()` and `backward(inputs=...)`: only the nodes on a path to the inputs run (torch's exec_info).

Other nodes do not run, fire no hooks and keep their saved tensors, so a second `grad()` for another input
works; `grad()` catches each input's gradient as it reaches the input's node, instead of filling `.grad`.

Guarded by tests/test_engine.py and tests/test_engine_fidelity.py (`inputs=`, hooks that fire or not, saved
tensors kept), tests/test_autograd_api.py and tests/test_torch_boundary.py.
"""
from .hooks import call_tensor_pre_hooks


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


def exec_info(roots, inputs, capture):
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


def catch_input_grads(node, grad_outputs, where, captured, needed, create_graph):
    """grad() catches its inputs' gradients as they reach their node; True when the node need not run."""
    _capture(node, grad_outputs, where, captured, node in needed, create_graph)
    return node not in needed


def _capture(node, grad_outputs, where, captured, runs, create_graph):
    """grad() catches its inputs' gradients as they reach their node: as they arrive if the node runs
    anyway (torch's order), else after the node's tensor hooks (the only hooks that then fire)."""
    if not runs:
        grad_outputs = call_tensor_pre_hooks(node, grad_outputs, create_graph)
    for output_nr, k in where:
        captured[k] = grad_outputs[output_nr]
