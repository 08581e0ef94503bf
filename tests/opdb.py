"""torch's own test database run against teachgrad: every op of `op_db` (torch.testing._internal's
OpInfos, with their sample inputs and flags) is called through teachgrad's op of the same name, on
torch's samples in float64, and compared with torch: values, the gradient of every input (one
backward pass of the outputs weighted by a fixed random cotangent), the node name of each output,
forward-mode tangents where torch supports forward AD, and second derivatives where torch supports
gradgrad.

Each op gets one status, the worst of its samples (STATUSES lists them, worst first):

    silently wrong   a value, gradient or tangent differs from torch's, or a gradient is missing
    crashes          teachgrad raises where torch does not, with an error that does not say why
    raises           teachgrad raises where torch does not, saying what it does not do
    refused by name  teachgrad has no op of that name and says so (the clear "no op of that name" error)
    other node       values and gradients agree, the node name (type(out.grad_fn).__name__) differs
    agrees           all of it agrees
    not checked      torch has no float64 CPU samples for it

`tests/test_op_db.py` runs a fixed few samples of each op on every `make test`; `make opdb` runs them
all and writes docs/op-coverage.md (scripts/op_coverage.py). Importing op_db needs the `expecttest`
package (a test dependency).
"""
import itertools
import re
import warnings
from dataclasses import dataclass, field

import torch
import torch.autograd.forward_ad as torch_fwAD

import teachgrad as tg
import teachgrad.autograd.forward_ad as tg_fwAD

# which ops had each part compared on at least one sample (op_db key), filled as the checks run
COMPARED = {"gradient": set(), "tangent": set(), "second derivative": set()}
STATUSES = ("silently wrong", "crashes", "raises", "refused by name", "other node", "agrees", "not checked")
RTOL = ATOL = 1e-7
SEED = 0


def load_op_db():
    from torch.testing._internal.common_methods_invocations import op_db   # needs expecttest
    return op_db


def op_key(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


# ---- which teachgrad callable stands for the op -------------------------------------------------------------

@dataclass
class Resolved:
    kind: str   # "own": teachgrad's op; "torch's": torch's function run on the data (api/interop.py); "missing"
    path: str   # the name called: tg.<name> or Variable.<name>
    tg_call: object = None      # what is called with Variables (for "missing": the error teachgrad gives)
    torch_call: object = None   # what is called with torch tensors


def resolve(op):
    """tg.<name> (dotted: tg.nn.functional.relu, tg.linalg.norm), else the Variable method or property of that name.

    Where op_db's function is not torch's function of that name but a wrapper (a lambda that reorders the
    arguments, seeds the generator, or calls a method: `where`, `polygamma`, `randn`, `T`), the wrapper itself
    is called with Variables: torch's functions and methods in it reach teachgrad's ops (api/interop.py)."""
    torch_function, _ = _walk(torch, op.name)
    direct = torch_function is not None and op.op is torch_function
    if "." not in op.name and op.op is getattr(torch.Tensor, op.name, None):   # torch.Tensor.__radd__, .item
        attribute = getattr(tg.Variable, op.name, None)
        if attribute is None:
            return Resolved("missing", f"Variable.{op.name}",
                            AttributeError(f"'Variable' object has no attribute '{op.name}'"), op.op)
        kind = "torch's" if getattr(attribute, "runs_torchs", False) else "own"
        return Resolved(kind, f"Variable.{op.name}", attribute, op.op)
    found, error = _walk(tg, op.name)
    if found is not None and callable(found) and not isinstance(found, torch.dtype):
        kind = "torch's" if getattr(found, "runs_torchs", False) else "own"
        return Resolved(kind, f"tg.{op.name}", found if direct else op.op, op.op)
    if "." not in op.name and hasattr(tg.Variable, op.name):
        attribute = getattr(tg.Variable, op.name)
        kind = "torch's" if getattr(attribute, "runs_torchs", False) else "own"
        if not direct:
            return Resolved(kind, f"Variable.{op.name}", op.op, op.op)
        return Resolved(kind, f"Variable.{op.name}", attribute, op.method_variant or op.op)
    if torch_function is None and hasattr(torch.Tensor, op.name):   # a Tensor attribute only: x.H, x.mH
        return Resolved("missing", f"Variable.{op.name}",
                        AttributeError(f"'Variable' object has no attribute '{op.name}'"), op.op)
    return Resolved("missing", f"tg.{op.name}", error or TypeError(f"tg.{op.name} is not a function"), op.op)


def _walk(root, dotted):
    value = root
    for part in dotted.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as error:
            return None, error
    return value, None


# ---- samples as torch tensors and as teachgrad Variables ---------------------------------------------------

def _map(value, leaf):
    if isinstance(value, torch.Tensor):
        return leaf(value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_map(v, leaf) for v in value)
    if isinstance(value, list):
        return [_map(v, leaf) for v in value]
    if isinstance(value, dict):
        return {k: _map(v, leaf) for k, v in value.items()}
    return value


def _torch_leaf(t):
    return t.detach().clone().requires_grad_(t.requires_grad)


def _tg_leaf(t):
    return tg.Variable(t.detach().clone(), requires_grad=t.requires_grad)


def _tensors(value):
    """The tensors in an output or argument, in order (Variables and torch tensors alike)."""
    if isinstance(value, (torch.Tensor, tg.Variable)):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _data(t):
    return t.data if isinstance(t, tg.Variable) else t.detach()


def _call(fn, sample, leaf, process=True):
    inp, args, kwargs = _map(sample.input, leaf), _map(sample.args, leaf), _map(sample.kwargs, leaf)
    _seed(42)   # random ops draw the same numbers in both (op_db's wrapper_set_seed seeds with 42)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(inp, *args, **kwargs)
        if process:
            out = sample.output_process_fn_grad(out)
    return _tensors([inp, args, kwargs]), out


# ---- comparing one sample -----------------------------------------------------------------------------------

class Differs(Exception):
    """teachgrad's result differs from torch's (silently wrong)."""


def _close(ours, theirs, what):
    if theirs is None and ours is None:
        return
    if theirs is None or ours is None:   # a gradient torch does not compute counts as zeros, and the other way round
        present = _data(ours if theirs is None else theirs)
        if present.is_floating_point() and not bool((present == 0).all()):
            side = "teachgrad" if ours is None else "torch"
            raise Differs(f"{what}: {side} gives None where the other gives a nonzero gradient")
        return
    a, b = _data(ours), _data(theirs)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise Differs(f"{what}: {a.dtype}{list(a.shape)} where torch gives {b.dtype}{list(b.shape)}")
    if not torch.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True) if a.is_floating_point() or a.is_complex() \
            else not torch.equal(a, b):
        err = (a - b).abs().nan_to_num(nan=float("inf")).max().item() if a.is_floating_point() else "exact"
        raise Differs(f"{what}: differs from torch's (max abs difference {err})")


def _outputs(out):
    return _tensors(out) if not isinstance(out, (torch.Tensor, tg.Variable)) else [out]


# ops whose values are whatever memory held: only their dtypes and shapes are compared
UNINITIALIZED = ("empty", "empty_like", "empty_permuted", "empty_strided", "new_empty", "new_empty_strided")


def _compare_values(ours, theirs, op):
    o, t = _outputs(ours), _outputs(theirs)
    if op.name in UNINITIALIZED:
        o, t = [torch.zeros_like(_data(x)) for x in o], [torch.zeros_like(_data(x)) for x in t]
    if len(o) != len(t):
        raise Differs(f"value: {len(o)} tensors where torch gives {len(t)}")
    if not o and ours != theirs:
        raise Differs(f"value: {ours!r} where torch gives {theirs!r}")
    for i, (a, b) in enumerate(zip(o, t)):
        _close(a, b, f"value of output {i}")


def _cotangents(outputs, seed):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(o.shape, dtype=o.dtype, generator=generator) for o in outputs]


def check_sample(op, resolved, sample):
    """Compare one sample; returns (status, detail) with status one of STATUSES."""
    try:
        torch_inputs, torch_out = _call(resolved.torch_call, sample, _torch_leaf)
    except Exception:   # noqa: BLE001  (torch refuses this sample: nothing to compare)
        return None
    try:
        tg_inputs, tg_out = _call(resolved.tg_call, sample, _tg_leaf)
        _compare_values(tg_out, torch_out, op)
        nodes = _compare_grads(op, torch_inputs, torch_out, tg_inputs, tg_out)
        _compare_tangents(op, resolved, sample)
    except Differs as error:
        return "silently wrong", str(error)
    except Exception as error:   # noqa: BLE001
        return classify_error(error)
    return ("other node", nodes) if nodes else ("agrees", "")


def classify_error(error):
    message = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    text = str(error)
    if "no op of that name" in text or (isinstance(error, AttributeError) and "has no attribute" in text):
        return "refused by name", message
    if "descriptor" in text and "doesn't apply to a 'Variable' object" in text:
        return "not checked", ("op_db's wrapper calls torch.Tensor's method unbound, which takes torch tensors only "
                               f"({message})")
    if "teachgrad" in text:
        return "raises", message
    return "crashes", message


def _differentiable(inputs, outputs):
    ins = [t for t in inputs if t.requires_grad]
    outs = [o for o in _outputs(outputs) if o.requires_grad]
    return ins, outs


def _compare_grads(op, torch_inputs, torch_out, tg_inputs, tg_out):
    """Gradients of every input for one backward pass (and a second one where torch supports gradgrad);
    returns a note on node names that differ, or ''."""
    if not op.supports_autograd:
        return ""
    t_ins, t_outs = _differentiable(torch_inputs, torch_out)
    g_ins, g_outs = _differentiable(tg_inputs, tg_out)
    if not t_outs:
        return ""
    all_torch = _outputs(torch_out)
    all_tg = _outputs(tg_out)
    missing = [i for i, o in enumerate(all_torch) if o.requires_grad and not all_tg[i].requires_grad]
    if missing or len(g_ins) != len(t_ins):
        raise Differs(f"gradient: output {missing} does not require grad in teachgrad (a missing gradient)")
    pairs = [(g, t) for g, t in zip(all_tg, all_torch) if t.requires_grad]
    names = [(type(g.grad_fn).__name__, type(t.grad_fn).__name__) for g, t in pairs]
    cts = _cotangents([t for _, t in pairs], SEED + 1)
    gradgrad = op.supports_gradgrad
    t_grads = torch.autograd.grad([t for _, t in pairs], t_ins, cts, allow_unused=True, create_graph=gradgrad)
    g_grads = tg.autograd.grad([g for g, _ in pairs], g_ins, [tg.Variable(c) for c in cts], allow_unused=True,
                               create_graph=gradgrad)
    for i, (a, b) in enumerate(zip(g_grads, t_grads)):
        _close(a, b, f"gradient of input {i}")
    COMPARED["gradient"].add(op_key(op))
    if gradgrad:
        # a first gradient that does not require grad in teachgrad is a constant: its second derivative is zero
        t_second = [(g, t) for g, t in zip(g_grads, t_grads) if t is not None and t.requires_grad]
        if t_second:
            cts2 = _cotangents([t for _, t in t_second], SEED + 2)
            recorded = [(g, tg.Variable(c)) for (g, _), c in zip(t_second, cts2) if g is not None and g.requires_grad]
            try:
                t2 = torch.autograd.grad([t for _, t in t_second], t_ins, cts2, allow_unused=True)
            except RuntimeError as refused:   # op_db says gradgrad, yet torch's own has no derivative of a kernel's
                _refused_alike(refused, lambda: tg.autograd.grad([g for g, _ in recorded], g_ins,   # backward
                                                                 [c for _, c in recorded], allow_unused=True))
                return _node_names(names)
            g2 = (tg.autograd.grad([g for g, _ in recorded], g_ins, [c for _, c in recorded], allow_unused=True)
                  if recorded else [None] * len(g_ins))
            for i, (a, b) in enumerate(zip(g2, t2)):
                _close(a, b, f"second derivative of input {i}")
            COMPARED["second derivative"].add(op_key(op))
    return _node_names(names)


def _refused_alike(refused, ours):
    """Torch refused a second derivative (scaled_dot_product_attention's fused kernel, ctc_loss): teachgrad must
    refuse it with the same error, never give a number."""
    try:
        ours()
    except RuntimeError as error:
        if str(error) != str(refused):
            raise Differs(f"second derivative: torch refuses it ({refused}), teachgrad with another message ({error})")
        return
    raise Differs(f"second derivative: torch refuses it ({refused}), teachgrad gives one")


def _node_names(names):
    differing = [f"{ours} (torch: {theirs})" for ours, theirs in names if ours != theirs]
    return "node " + ", ".join(differing) if differing else ""


def _compare_tangents(op, resolved, sample):
    """Forward mode: each floating input given a fixed random tangent; the outputs' tangents compared."""
    if not op.supports_forward_ad:
        return
    generator = torch.Generator().manual_seed(SEED + 3)
    tangents = {}

    def tangent_of(t):
        key = id(t)
        if key not in tangents:
            tangents[key] = torch.randn(t.shape, dtype=t.dtype, generator=generator) if t.requires_grad else None
        return tangents[key]

    def dual(fwAD, make):
        def leaf(t):
            tangent = tangent_of(t)
            primal = make(t.detach().clone())
            return primal if tangent is None else fwAD.make_dual(primal, make(tangent.clone()))
        return leaf

    try:
        with torch_fwAD.dual_level():
            _, out = _call(resolved.torch_call, sample, dual(torch_fwAD, lambda t: t), process=False)
            theirs = [torch_fwAD.unpack_dual(o).tangent for o in _outputs(out)]
    except Exception:   # noqa: BLE001  (torch has no forward AD for this sample)
        return
    with tg_fwAD.dual_level():
        _, out = _call(resolved.tg_call, sample, dual(tg_fwAD, tg.Variable), process=False)
        ours = [tg_fwAD.unpack_dual(o).tangent for o in _outputs(out)]
    if len(ours) != len(theirs):
        raise Differs(f"forward AD: {len(ours)} outputs where torch gives {len(theirs)}")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if b is not None and a is None and bool((b != 0).any()):
            raise Differs(f"forward AD: output {i} has no tangent in teachgrad")
        _close(a, b, f"tangent of output {i}")
    COMPARED["tangent"].add(op_key(op))


# ---- one op, all of it --------------------------------------------------------------------------------------

@dataclass
class Result:
    key: str
    path: str
    kind: str
    status: str
    detail: str = ""
    samples: int = 0
    counts: dict = field(default_factory=dict)


def samples_of(op, limit=None, reference=False):
    """torch's samples for the op, float64 on the CPU, requiring grad. op.sample_inputs wraps the generator in a
    tracker that reads the call stack and reseeds for each sample, which costs more than the checks; the
    generator itself (op.sample_inputs_func) gives the same samples."""
    _seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = op.sample_inputs_func(op, "cpu", torch.float64, True)
        if reference and op.reference_inputs_func is not None:
            samples = itertools.chain(samples, op.reference_inputs_func(op, "cpu", torch.float64, True))
        return list(itertools.islice(samples, limit))


def _seed(seed):
    """torch.manual_seed for the CPU generator, without its cost (it also seeds every other device's)."""
    torch.default_generator.manual_seed(seed)


def check_op(op, limit=None, reference=False):
    resolved = resolve(op)
    key = op_key(op)
    if torch.float64 not in op.supported_dtypes("cpu"):
        return Result(key, resolved.path, resolved.kind, "not checked", "torch has no float64 CPU samples")
    if resolved.kind == "missing":
        return Result(key, resolved.path, resolved.kind, "refused by name", *classify_error(resolved.tg_call)[1:])
    try:
        samples = samples_of(op, limit, reference)
    except Exception as error:   # noqa: BLE001
        return Result(key, resolved.path, resolved.kind, "not checked", f"torch's samples fail: {error}")
    counts, first = {}, {}
    for sample in samples:
        outcome = check_sample(op, resolved, sample)
        if outcome is None:
            continue
        status, detail = outcome
        counts[status] = counts.get(status, 0) + 1
        first.setdefault(status, detail)
    if not counts:
        return Result(key, resolved.path, resolved.kind, "not checked", "torch raises on every sample")
    worst = min(counts, key=STATUSES.index)
    return Result(key, resolved.path, resolved.kind, worst, first[worst], sum(counts.values()), counts)


def run(ops, limit=None, reference=False, progress=None):
    results = []
    for op in ops:
        results.append(check_op(op, limit, reference))
        if progress:
            progress(results[-1])
    return results


def clean(detail):
    """A message without memory addresses, so the table is the same from run to run."""
    return re.sub(r" at 0x[0-9a-f]+", "", detail)


# ---- torch's nn modules (module_db), constructed by torch and called with Variables ----------------------------

def load_module_db():
    from torch.testing._internal.common_modules import module_db   # needs expecttest
    return module_db


def check_module_input(module_info, module_input):
    """One ModuleInput: the module built twice (same seed, float64), one called with torch tensors, one with
    Variables (its parameters stay torch tensors: leaves of teachgrad's graph). Values, the gradients of the
    inputs and of every parameter, and the node names are compared."""
    import copy
    if module_input.forward_input is None:
        return None
    constructor, forward = module_input.constructor_input, module_input.forward_input
    try:
        _seed(SEED)
        theirs_module = module_info.module_cls(*constructor.args, **constructor.kwargs).to(torch.float64)
        ours_module = copy.deepcopy(theirs_module)
        _seed(42)
        t_args, t_kwargs = _map(forward.args, _torch_leaf), _map(forward.kwargs, _torch_leaf)
        torch_out = theirs_module(*t_args, **t_kwargs)
    except Exception:   # noqa: BLE001  (torch refuses this input)
        return None
    try:
        _seed(42)
        g_args, g_kwargs = _map(forward.args, _tg_leaf), _map(forward.kwargs, _tg_leaf)
        tg_out = ours_module(*g_args, **g_kwargs)
        _compare_values(tg_out, torch_out, module_info)
        t_outs = [o for o in _outputs(torch_out) if o.requires_grad]
        if not t_outs:
            return "agrees", ""
        g_all = _outputs(tg_out)
        pairs = [(g, t) for g, t in zip(g_all, _outputs(torch_out)) if t.requires_grad]
        if any(not g.requires_grad for g, _ in pairs):
            raise Differs("gradient: an output does not require grad in teachgrad (a missing gradient)")
        cts = _cotangents([t for _, t in pairs], SEED + 1)
        torch.autograd.backward([t for _, t in pairs], cts)
        tg.autograd.backward([g for g, _ in pairs], [tg.Variable(c) for c in cts])
        t_ins = [t for t in _tensors([t_args, t_kwargs]) if t.requires_grad]
        g_ins = [t for t in _tensors([g_args, g_kwargs]) if t.requires_grad]
        for i, (a, b) in enumerate(zip(g_ins, t_ins)):
            _close(a.grad, b.grad, f"gradient of input {i}")
        for (name, a), (_, b) in zip(ours_module.named_parameters(), theirs_module.named_parameters()):
            _close(a.grad, b.grad, f"gradient of parameter {name}")
        differing = [f"{type(g.grad_fn).__name__} (torch: {type(t.grad_fn).__name__})" for g, t in pairs
                     if type(g.grad_fn).__name__ != type(t.grad_fn).__name__]
    except Differs as error:
        return "silently wrong", str(error)
    except Exception as error:   # noqa: BLE001
        return classify_error(error)
    return ("other node", "node " + ", ".join(differing)) if differing else ("agrees", "")


def check_module(module_info):
    name = module_info.name
    if torch.float64 not in module_info.supported_dtypes("cpu"):
        return Result(name, name, "module", "not checked", "torch has no float64 CPU inputs")
    try:
        _seed(SEED)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inputs = module_info.module_inputs_func(module_info, device="cpu", dtype=torch.float64,
                                                    requires_grad=True, training=True)
    except Exception as error:   # noqa: BLE001
        return Result(name, name, "module", "not checked", f"torch's inputs fail: {error}")
    counts, first = {}, {}
    for module_input in inputs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = check_module_input(module_info, module_input)
        if outcome is None:
            continue
        status, detail = outcome
        counts[status] = counts.get(status, 0) + 1
        first.setdefault(status, detail)
    if not counts:
        return Result(name, name, "module", "not checked", "torch raises on every input")
    worst = min(counts, key=STATUSES.index)
    return Result(name, name, "module", worst, first[worst], sum(counts.values()), counts)
