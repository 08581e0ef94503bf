"""The contract floor: the least a Python engine over torch's kernels does to keep teachgrad's always-on promises.

A yardstick for `make bench`, not a part of teachgrad. It answers one question: how fast could teachgrad be,
at best, without giving up what it does on every op and every node whether or not a feature is in use?
So it does that, and nothing more, written as two functions with nothing around them (`Function.apply`
for one op, `backward` for the loop), for the ops the bench runs (mm, +, -, * by a number, relu, ** a
number, mean); anything else raises NotImplementedError.

What it keeps, as teachgrad keeps it:
- each op's node is its ctx, an object with attributes: `needs_input_grad`, one edge per input, a sequence
  number, each input's (shape, dtype, device), what forward saved; a leaf's AccumulateGrad, held by a weak
  reference;
- saved tensors with the version counter they had, checked when read and dropped after backward; an output
  saved as data only; an inference tensor refused;
- the one check per op or per node for each feature not in use: saved-tensor hooks, forward mode, anomaly
  mode, a user's Function, several outputs, hooks;
- torch's layouts and argument forms: a column-major factor of mm gets a gradient laid out as it is
  (torch's mm_mat1_backward), `mean`'s keepdim alias, `**`'s number check;
- the engine: dependencies counted, a ready queue by sequence number (newest first), each gradient fitted
  to its input (summed back from a broadcast, cast to its dtype), gradients summed where they meet, and a
  leaf's first `.grad` kept uncopied only when nobody else holds it and it is laid out as the leaf.

What it leaves out, each of which teachgrad checks for once per op or node: views and in-place writes,
hooks, forward mode, user Functions, saved-tensor hooks, anomaly mode, `inputs=`, `grad()`, create_graph,
retain_graph, torch tensors as leaves, profiler and recorders.
"""
import heapq
import itertools
import numbers
import threading
import weakref

import torch

_sequence_nr = itertools.count()
_accumulate_lock = threading.Lock()
_saved_tensors_hooks = []     # the check for saved-tensor hooks (never set here)
_forward_level = -1           # the check for forward mode (never set here)
_anomaly_enabled = False      # the check for anomaly mode (never set here)


class Variable:
    """A torch tensor and its place in the graph, with the slots teachgrad's Variable has."""

    __slots__ = ("data", "grad", "grad_fn", "requires_grad", "output_nr", "accumulator", "retains_grad",
                 "hooks", "view", "fw_grad", "name", "__weakref__")

    def __init__(self, data, requires_grad=False):
        self.data, self.grad, self.grad_fn, self.requires_grad, self.output_nr = data, None, None, requires_grad, 0
        self.accumulator = self.retains_grad = self.hooks = self.view = self.fw_grad = self.name = None

    @classmethod
    def make(cls, data, grad_fn=None, output_nr=0):
        v = cls.__new__(cls)
        v.data, v.grad, v.grad_fn, v.requires_grad, v.output_nr = data, None, grad_fn, False, output_nr
        v.accumulator = v.retains_grad = v.hooks = v.view = v.fw_grad = v.name = None
        return v

    def __matmul__(self, other):
        return matmul(self, other) if isinstance(other, (Variable, torch.Tensor)) else NotImplemented

    def __add__(self, other):
        return Add.apply(self, other) if isinstance(other, (Variable, float, int)) else NotImplemented

    def __sub__(self, other):
        return Sub.apply(self, other) if isinstance(other, (Variable, float, int)) else NotImplemented

    def __mul__(self, other):
        return Mul.apply(self, other) if isinstance(other, (float, int)) else NotImplemented

    def __pow__(self, exponent):
        return self.pow(exponent) if isinstance(exponent, (float, int)) else NotImplemented

    def pow(self, exponent):
        if isinstance(exponent, numbers.Number):
            return Pow.apply(self, exponent)
        raise NotImplementedError("a tensor exponent")

    def relu(self):
        return Relu.apply(self)

    def mean(self, dim=None, keepdim=False, *, keepdims=None):
        keepdim = keepdim if keepdims is None else keepdims
        if dim is None and not keepdim:
            return Mean.apply(self)
        raise NotImplementedError("mean over dims")

    def backward(self):
        backward(self)


def tensor(value, requires_grad=False):
    return Variable(torch.tensor(value), requires_grad)


def matmul(a, b):
    if a.data.dim() == 2 and b.data.dim() == 2:
        return Mm.apply(a, b)
    raise NotImplementedError("matmul beyond matrix @ matrix")


class SavedTensor:
    __slots__ = ("data", "variable", "version", "output_nr", "hooks")

    def __init__(self, data, variable=None, output_nr=None):
        self.data, self.variable, self.version = data, variable, data._version
        self.output_nr, self.hooks = output_nr, None

    def unpack(self):
        if self.data._version != self.version:
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                               "inplace operation")
        return self.data


class AccumulateGrad:
    __slots__ = ("variable", "_next_nodes", "_sequence_nr", "_pre_hooks", "_post_hooks", "_tensor_pre_hooks",
                 "__weakref__")

    def __init__(self, variable):
        self.variable, self._next_nodes, self._sequence_nr = variable, (), float("inf")
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = None


class Function:
    """An op and its node (the node is the ctx its forward and backward get)."""

    _to_save = ()
    _saved = ()
    _num_outputs = 1
    _pre_hooks = _post_hooks = _tensor_pre_hooks = None
    check_gradients = False   # not a user's Function

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        return tuple([None if s is None else s.unpack() for s in self._saved])

    @classmethod
    def apply(cls, *args):
        ctx = cls()
        if not (torch.is_grad_enabled() and not torch.is_inference_mode_enabled()):
            raw = [a.data if type(a) is Variable else a for a in args]
            ctx.needs_input_grad = (False,) * len(args)
            return Variable.make(cls.forward(ctx, *raw))
        raw, needs, nodes, input_nrs, metas = [], [], [], [], []
        for arg in args:
            if type(arg) is Variable:
                data = arg.data
                node = arg.grad_fn
                if node is None and arg.requires_grad:   # a leaf keeps its AccumulateGrad by a weak reference
                    node = arg.accumulator() if arg.accumulator is not None else None
                    if node is None:
                        node = AccumulateGrad(arg)
                        arg.accumulator = weakref.ref(node)
                raw.append(data)
                needs.append(node is not None)
                nodes.append(node)
                input_nrs.append(arg.output_nr if node is not None else 0)
                metas.append((tuple(data.shape), data.dtype, data.device) if node is not None else None)
            else:
                raw.append(arg)
                needs.append(False)
                nodes.append(None)
                input_nrs.append(0)
                metas.append(None)
        ctx.needs_input_grad = tuple(needs)
        output = cls.forward(ctx, *raw)
        if True not in ctx.needs_input_grad:
            return Variable.make(output)
        ctx._next_nodes, ctx._input_nrs, ctx._input_meta = tuple(nodes), tuple(input_nrs), tuple(metas)
        ctx._sequence_nr = next(_sequence_nr)
        if _anomaly_enabled or not (type(output) is torch.Tensor and output.dtype.is_floating_point):
            raise NotImplementedError("anomaly mode, integer outputs")
        result = Variable.make(output, ctx, 0)
        if ctx._to_save:
            if _saved_tensors_hooks:
                raise NotImplementedError("saved-tensor hooks")
            saved = []
            for tensor in ctx._to_save:
                if tensor is None:
                    saved.append(None)
                elif tensor.is_inference():
                    raise RuntimeError("Inference tensors cannot be saved for backward.")
                elif tensor is output:
                    saved.append(SavedTensor(tensor, None, 0))
                else:
                    position = next((k for k, data in enumerate(raw) if data is tensor), None)
                    saved.append(SavedTensor(tensor, None if position is None else args[position]))
            ctx._saved, ctx._to_save = tuple(saved), ()
        if _forward_level >= 0:
            raise NotImplementedError("forward mode")
        return result


def _column_major(matrix):
    stride = matrix.stride()
    return stride[0] == 1 and stride[1] == matrix.shape[0]


class Mm(Function):
    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        ctx.column_major = needs[0] and _column_major(a), needs[1] and _column_major(b)
        return a.mm(b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_cm, b_cm = ctx.column_major
        grad_a = (b.mm(grad.t()).t() if a_cm else grad.mm(b.t())) if ctx.needs_input_grad[0] else None
        grad_b = (grad.t().mm(a).t() if b_cm else a.t().mm(grad)) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.needs_input_grad[1] else None


class Mul(Function):
    """A tensor times a number."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.number = b
        ctx.save_for_backward(None, None)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors   # (read, as teachgrad's Mul reads what it saved: nothing, for a number)
        return grad * ctx.number, None


_threshold_backward = torch.ops.aten.threshold_backward.default


class Relu(Function):
    @staticmethod
    def forward(ctx, a):
        result = a.relu()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return _threshold_backward(grad, result, 0)


class Pow(Function):
    @staticmethod
    def forward(ctx, a, exponent):
        ctx.exponent = exponent
        ctx.save_for_backward(a)
        return a.pow(exponent)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        n = ctx.exponent
        return grad * (n * a.pow(n - 1)), None


class Mean(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.shape, ctx.count = a.shape, a.numel()
        return a.mean()

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape) / ctx.count


def _sum_to(grad, shape):
    lead = grad.dim() - len(shape)
    stretched = [lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1]
    if not stretched:
        return grad.sum(tuple(range(lead))) if lead > 1 else grad.sum(0)
    summed = grad.sum(list(range(lead)) + stretched, keepdim=True)
    return summed.view(shape) if lead else summed


def _fresh(node, g, grad_outputs, grad_inputs):
    """Whether `g` is a new tensor only this edge holds (then `.grad` may keep it uncopied)."""
    if node._post_hooks or g._base is not None:
        return False
    for arrived in grad_outputs:
        if arrived is g:
            return False
    sent = 0
    for other in grad_inputs:
        if other is g:
            sent += 1
    return sent == 1


def _accumulate(node, grad, owned):
    with _accumulate_lock:
        leaf = node.variable
        if leaf.grad is None:
            data = leaf.data
            if owned and (not torch._C._is_grad_layout_enforcement_enabled()
                          or (data.is_contiguous() and grad.stride() == data.stride())):
                grad = grad.detach()
            else:
                grad = torch.empty_like(data).copy_(grad)
            leaf.grad = Variable.make(grad)
        else:
            leaf.grad.data.add_(grad)


def backward(root):
    root_node = root.grad_fn
    if root.data.numel() != 1 or not root.data.is_floating_point():
        raise RuntimeError("grad can be implicitly created only for real scalar outputs")
    buffers = {root_node: [torch.ones_like(root.data)]}
    dependencies, stack = {}, [root_node]
    while stack:
        for next_node in stack.pop()._next_nodes:
            if next_node is not None:
                count = dependencies.get(next_node)
                dependencies[next_node] = 1 if count is None else count + 1
                if count is None:
                    stack.append(next_node)
    owned, order = set(), itertools.count()
    ready = [(-root_node._sequence_nr, next(order), root_node)]
    with torch.no_grad():
        while ready:
            node = heapq.heappop(ready)[2]
            grad_outputs = buffers.pop(node)
            if node._tensor_pre_hooks or node._pre_hooks or node._post_hooks or _anomaly_enabled:
                raise NotImplementedError("hooks, anomaly mode")
            if type(node) is AccumulateGrad:
                if grad_outputs[0] is not None:
                    _accumulate(node, grad_outputs[0], node in owned)
                continue
            if node._num_outputs > 1 or node.check_gradients:
                raise NotImplementedError("several outputs, a user's Function")
            if grad_outputs[0] is None:
                grad_inputs = [None] * len(node._next_nodes)
            else:
                grads = node.backward(node, *grad_outputs)
                grads = grads if isinstance(grads, tuple) else (grads,)
                if len(grads) != len(node.needs_input_grad):
                    raise RuntimeError("function backward returned an incorrect number of gradients")
                grad_inputs = list(grads)
                for k, (g, meta) in enumerate(zip(grad_inputs, node._input_meta)):
                    if g is not None and meta is not None and (g.shape, g.dtype, g.device) != meta:
                        shape, dtype, _ = meta
                        g = _sum_to(g, shape) if g.shape != shape else g
                        grad_inputs[k] = g if g.dtype is dtype else g.to(dtype)
            for saved in node._saved:
                if saved is not None:
                    saved.data = saved.variable = None
            for next_node, input_nr, g in zip(node._next_nodes, node._input_nrs, grad_inputs):
                if next_node is None:
                    continue
                buffer = buffers.get(next_node) or buffers.setdefault(next_node, [None])
                if g is not None:
                    buffer[input_nr] = g if buffer[input_nr] is None else buffer[input_nr] + g
                    if type(next_node) is AccumulateGrad:
                        if buffer[input_nr] is not g or _fresh(node, g, grad_outputs, grad_inputs):
                            owned.add(next_node)
                        else:
                            owned.discard(next_node)
                dependencies[next_node] -= 1
                if not dependencies[next_node]:
                    heapq.heappush(ready, (-next_node._sequence_nr, next(order), next_node))


class no_grad(torch.no_grad):
    """torch's own grad mode, as teachgrad's."""
