"""Gradients checked against finite differences: `gradcheck` and `gradgradcheck`, at torch's path
`torch.autograd.gradcheck` (`tg.autograd.gradcheck`, also `tg.check.gradcheck`).

    tg.autograd.gradcheck(f, (x,))       # True, or GradcheckError naming the entries that differ
    tg.autograd.gradgradcheck(f, (x,))   # the same for second derivatives

Complex inputs and outputs are checked as torch checks them: each complex input z = x + iy is perturbed along
x and along y, each complex output seen as its real and imaginary parts, so every check is one of real numbers.
The gradient torch's convention gives z is dL/dx + i dL/dy (teachgrad/ops/complex.py): its real part is checked
against the finite differences along x, its imaginary part against those along y.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeAlias
import warnings

import torch

from ..core import engine
from ..features import forward_ad
from ..rules import grad_mode
from ..core.function import Function
from ..core.variable import Variable
from .. import func as tg_func
from .. import ops

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    Number: TypeAlias = int | float | bool           # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree (torch.autograd.gradcheck.GradcheckError)."""


# --- gradcheck ----------------------------------------------------------------------------------

def _requires_grad(x):
    """A Variable that gradients flow to (an input gradcheck checks, an output backward can start from)."""
    return isinstance(x, Variable) and x.requires_grad


def _differentiable(values):
    return [v for v in values if _requires_grad(v)]


def _differentiable_positions(values):
    return [i for i, v in enumerate(values) if _requires_grad(v)]


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, (tuple, list)) else (out,)


def _unversioned(x):
    """x's storage through torch's `.data`, whose version counter is its own: writing into it leaves x's version,
    and so the history of its views, as they were (torch's gradcheck perturbs its inputs the same way)."""
    return x.data.data


def numerical_jacobian(fn: Callable[..., Any], inputs: Sequence[Any], eps: float = 1e-6) -> list[list[torch.Tensor]]:
    """d output / d input by central differences: one matrix (input.numel × output.numel) per pair.

    `fn` runs in the grad mode of the caller, as torch's gradcheck runs it.
    """
    outputs = _outputs(fn, inputs)
    jacobians = []
    for x in inputs:
        if not _requires_grad(x):
            continue
        columns = [torch.zeros(x.numel(), o.numel(), dtype=o.dtype, device=o.device) for o in outputs]
        data = _unversioned(x)
        # every element in row-major order (as reshape(-1) lists them), also in a non-contiguous tensor
        for i, position in enumerate(itertools.product(*(range(n) for n in data.shape))):
            original = data[position].item()
            data[position] = original + eps
            plus = [o.data.reshape(-1).clone() for o in _outputs(fn, inputs)]
            data[position] = original - eps
            minus = [o.data.reshape(-1).clone() for o in _outputs(fn, inputs)]
            data[position] = original
            for column, p, m in zip(columns, plus, minus):
                column[i] = (p - m) / (2 * eps)
        jacobians.append(columns)
    return jacobians


def analytical_jacobian(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[list[torch.Tensor]]:
    """d output / d input from backward: one backward pass per output element."""
    differentiable = _differentiable(inputs)
    outputs = _outputs(fn, inputs)
    jacobians = [[torch.zeros(x.numel(), o.numel(), dtype=o.dtype, device=o.device) for o in outputs]
                 for x in differentiable]
    for k, out in enumerate(outputs):
        if not out.requires_grad:   # an output backward cannot reach: its Jacobian is zero, as torch takes it
            continue
        for j in range(out.numel()):
            seed = torch.zeros(out.numel(), dtype=out.dtype, device=out.device)
            seed[j] = 1
            grads = engine.grad(out, differentiable, seed.view(out.shape), retain_graph=True, allow_unused=True)
            for jacobian, x, g in zip(jacobians, differentiable, grads):
                if g is not None:
                    if g.shape != x.shape:
                        raise GradcheckError(f"gradient has shape {tuple(g.shape)} but its input has shape {tuple(x.shape)}")
                    jacobian[k][:, j] = g.data.reshape(-1)
    return jacobians


def gradcheck(func: Callable[..., Any], inputs: TensorLike | Sequence[Any], *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Compare backward's gradients with finite differences; True when every entry agrees.

    Use float64 inputs: in float32 the finite differences themselves are too coarse (a warning says so).

        x = tg.randn(3, dtype=torch.float64, requires_grad=True)
        tg.check.gradcheck(lambda x: (x * x).sum(), (x,))   # True

    The options are torch's. Besides the Jacobians, it checks that backward scales with grad_output (a
    zero grad_output gives zero gradients), gives each input a gradient of its size, dtype and device,
    handles outputs that get no gradient, and gives the same result twice (within `nondet_tol`).
    `fast_mode` compares one random projection vᵀJu instead of whole Jacobians; `check_forward_ad`
    checks forward mode's Jacobian too. `check_batched_grad` / `check_batched_forward_grad` compare the
    gradients (tangents) that `tg.func.vmap` computes for a batch of random grad_outputs (tangents) with those of
    a loop, as torch's do.
    """
    _check_options(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad, masked)
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    _check_inputs(inputs)
    func, inputs, legend = _in_real_numbers(func, inputs)
    try:
        if check_backward_ad:
            _check_backward(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, fast_mode)
            if check_undefined_grad:
                _check_undefined_grads(func, inputs)
            if check_batched_grad:
                _check_batched(func, inputs, atol, rtol, reverse=True)
        if check_forward_ad:
            _check_forward(func, inputs, eps, atol, rtol)
            if check_batched_forward_grad:
                _check_batched(func, inputs, atol, rtol, reverse=False)
    except GradcheckError as error:
        if raise_exception:
            if legend:
                raise GradcheckError(f"{error}\n(complex numbers checked as real pairs, as torch's gradcheck does: "
                                     f"{legend})") from None
            raise
        return False
    return True


def _in_real_numbers(func, inputs):
    """func and its inputs with every complex number split in two real ones, as torch's gradcheck splits them:
    each complex input that requires grad becomes two real leaves (its real and imaginary parts, joined again by
    `complex` inside), each complex output its real and imaginary parts. Without complex numbers, as they are."""
    split = [_requires_grad(x) and x.is_complex() for x in inputs]
    complex_outputs = [isinstance(o, Variable) and o.is_complex() for o in _outputs(func, inputs)]
    if not any(split) and not any(complex_outputs):
        return func, inputs, ""
    legend = "; ".join([f"inputs {i + sum(split[:i])}, {i + sum(split[:i]) + 1} are the real and imaginary parts "
                        f"of complex input {i}" for i, s in enumerate(split) if s] +
                       [f"outputs {k + sum(complex_outputs[:k])}, {k + sum(complex_outputs[:k]) + 1} those of complex "
                        f"output {k}" for k, c in enumerate(complex_outputs) if c])
    real_inputs = []
    for x, is_split in zip(inputs, split):
        if is_split:
            real_inputs += [Variable(x.data.real.clone(), requires_grad=True),
                            Variable(x.data.imag.clone(), requires_grad=True)]
        else:
            real_inputs.append(x)

    def in_real_numbers(*args):
        parts = iter(args)
        joined = [ops.Complex.apply(next(parts), next(parts)) if is_split else next(parts) for is_split in split]
        outputs = []
        for out in _outputs(func, joined):
            outputs += [out.real, out.imag] if isinstance(out, Variable) and out.is_complex() else [out]
        return tuple(outputs)
    return in_real_numbers, tuple(real_inputs), legend


def _check_options(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad, masked):
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if masked:
        raise NotImplementedError("teachgrad has no sparse tensors: masked=True does not apply")


def _check_inputs(inputs):
    """torch's checks on the inputs: one must require grad; float64 is advised; no stride-0 dimension."""
    requiring = False
    for i, x in enumerate(inputs):
        if not _requires_grad(x):
            continue
        if x.dtype not in (torch.float64, torch.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=3)
        if not all(stride > 0 or size <= 1 for stride, size in zip(x.stride(), x.shape)):
            raise RuntimeError(f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
        requiring = True
    if not requiring:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _check_backward(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, fast_mode):
    if fast_mode:
        _compare_projections(func, inputs, eps, atol, rtol, nondet_tol)
    else:
        analytical = analytical_jacobian(func, inputs)
        _compare(numerical_jacobian(func, inputs, eps), analytical, inputs, atol, rtol, "")
        for per_output, per_output_again in zip(analytical, analytical_jacobian(func, inputs)):
            for a, b in zip(per_output, per_output_again):
                _check_reentrant(a, b, nondet_tol)
    _check_backward_scales_with_grad_output(func, inputs, check_grad_dtypes)


def _check_reentrant(first, again, nondet_tol):
    """Backward run twice on the same values must agree (within nondet_tol)."""
    if first.numel() and (first - again).abs().max() > nondet_tol:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
            "times gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}.")


def _compare(numerical, analytical, inputs, atol, rtol, mode):
    """Entry by entry, the two Jacobians of each (output, input) pair; a GradcheckError names the entries that differ."""
    differentiable = _differentiable_positions(inputs)
    problems = []
    for i, num_per_out, ana_per_out in zip(differentiable, numerical, analytical):
        for k, (num, ana) in enumerate(zip(num_per_out, ana_per_out)):
            bad = ~torch.isclose(ana, num, rtol=rtol, atol=atol)
            if bad.any():
                entries = [
                    f"  d output[{k}][{o}] / d input[{i}][{n}]: analytical {ana[n, o].item():.6g}, numerical {num[n, o].item():.6g}"
                    for n, o in bad.nonzero().tolist()[:10]
                ]
                problems.append(f"Jacobian {mode}mismatch for output {k} with respect to input {i}:\n" + "\n".join(entries))
    if problems:
        raise GradcheckError("\n".join(problems))


def _compare_projections(func, inputs, eps, atol, rtol, nondet_tol):
    """fast_mode: for random unit vectors u (per input) and v (per output), vᵀ(Ju) by finite differences
    along u against (vᵀJ)u from backward, as torch's fast gradcheck does (no whole Jacobian is made)."""
    generator = torch.Generator().manual_seed(0)
    vs = [_unit(torch.rand(o.shape, dtype=o.dtype, generator=generator)) for o in _outputs(func, inputs)]
    problems = []
    for i, x in enumerate(inputs):
        if not _requires_grad(x):
            continue
        u = _unit(torch.rand(x.shape, dtype=x.dtype, generator=generator))
        data = _unversioned(x)
        original = data.clone()
        data.add_(u, alpha=eps)
        plus = [o.data.clone() for o in _outputs(func, inputs)]
        data.copy_(original).sub_(u, alpha=eps)
        minus = [o.data.clone() for o in _outputs(func, inputs)]
        data.copy_(original)
        outputs = _outputs(func, inputs)   # one forward; backward runs on it twice (the reentrancy check)
        for k, (out, v, p, m) in enumerate(zip(outputs, vs, plus, minus)):
            numerical = ((p - m) / (2 * eps) * v).sum()
            analytical, again = (_projected_gradient(out, x, v, u) for _ in range(2))
            if not torch.isclose(analytical, numerical, rtol=rtol, atol=atol):
                problems.append(f"Jacobian mismatch for output {k} with respect to input {i}:\n  vᵀJu for random unit "
                                f"vectors u, v (fast mode): analytical {analytical.item():.6g}, "
                                f"numerical {numerical.item():.6g}")
            _check_reentrant(analytical, again, nondet_tol)
    if problems:
        raise GradcheckError("\n".join(problems))


def _projected_gradient(out, x, v, u):
    """(vᵀJ)u for one output and input x: one backward pass with grad_output v (the graph is kept)."""
    grad = engine.grad(out, x, v, retain_graph=True, allow_unused=True)[0] if out.requires_grad else None
    return torch.zeros((), dtype=x.dtype) if grad is None else (grad.data * u).sum()


def _unit(t):
    return t / t.norm() if t.norm() > 0 else t


def _check_backward_scales_with_grad_output(func, inputs, check_grad_dtypes):
    """A zero grad_output must give zero gradients (a backward that forgot to multiply by it fails here);
    each gradient has its input's dtype, device and size."""
    differentiable = _differentiable(inputs)
    outputs = _differentiable(_outputs(func, inputs))
    if not outputs:
        return
    zeros = [torch.zeros_like(o.data) for o in outputs]
    for g, x in zip(engine.grad(outputs, differentiable, zeros, allow_unused=True), differentiable):
        if g is None:
            continue
        if not g.data.eq(0).all():
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("Gradient has dtype mismatch" if check_grad_dtypes else "grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function, node="UndefinedGradBackward"):
    """Its output's gradient never reaches its input: what backward sees for an output nobody used."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def _check_undefined_grads(func, inputs):
    """Backward must work when its outputs get no gradient (all of them, or one at a time), giving none or zeros."""
    differentiable = _differentiable(inputs)

    def check(outputs):
        zeros = [torch.zeros_like(o.data) for o in outputs]
        try:
            grads = engine.grad(outputs, differentiable, zeros, allow_unused=True)
        except RuntimeError as error:
            raise GradcheckError('Expected backward function to handle undefined output grads. Please look at "Notes '
                                 'about undefined output gradients" in "tools/autograd/derivatives.yaml"') from error
        if any(g is not None and not g.data.eq(0).all() for g in grads):
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are undefined "
                                 'or zero. Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"')

    def differentiable_outputs():
        return _differentiable(_outputs(func, inputs))

    outputs = differentiable_outputs()
    check([_UndefinedGrad.apply(o) for o in outputs])
    if len(outputs) > 1:   # then each one alone, on a fresh graph
        for undefined in range(len(outputs)):
            check([_UndefinedGrad.apply(o) if k == undefined else o for k, o in enumerate(differentiable_outputs())])


def _check_forward(func, inputs, eps, atol, rtol):
    """check_forward_ad: forward mode's Jacobian, one column per input element (a one-hot tangent), against
    finite differences."""
    differentiable = _differentiable_positions(inputs)
    with grad_mode.no_grad():
        outputs = _outputs(func, inputs)
    jacobians = []
    for i in differentiable:
        x = inputs[i]
        columns = [torch.zeros(x.numel(), o.numel(), dtype=o.dtype, device=o.device) for o in outputs]
        for n in range(x.numel()):
            tangent = torch.zeros(x.numel(), dtype=x.dtype, device=x.device)
            tangent[n] = 1
            with forward_ad.dual_level():
                duals = tuple(forward_ad.make_dual(a.detach(), tangent.view(x.shape)) if j == i else a
                              for j, a in enumerate(inputs))
                for column, out in zip(columns, _outputs(func, duals)):
                    tangent_out = forward_ad.unpack_dual(out).tangent
                    if tangent_out is not None:
                        column[n] = tangent_out.data.reshape(-1)
        jacobians.append(columns)
    _compare(numerical_jacobian(func, inputs, eps), jacobians, inputs, atol, rtol, "computed with forward mode ")


def _check_batched(func, inputs, atol, rtol, reverse):
    """check_batched_grad (reverse) / check_batched_forward_grad: for a batch of two random grad_outputs (tangents),
    the gradients (output tangents) computed under tg.func.vmap, with func run once on the batch, must equal a
    loop's, one backward pass (forward pass) per batch element."""
    positions = _differentiable_positions(inputs)
    differentiable = [inputs[p] for p in positions]
    outputs = _outputs(func, inputs)

    def on(xs):                                   # func with the differentiable inputs replaced by xs
        args = list(inputs)
        for p, x in zip(positions, xs):
            args[p] = x
        return _outputs(func, args)
    for k, out in enumerate(outputs):
        if not (_requires_grad(out) and out.is_floating_point()):
            continue
        if reverse:
            seeds = torch.randn((2,) + tuple(out.shape), dtype=out.dtype, device=out.device)
            expected = [engine.grad(out, differentiable, s, retain_graph=True, allow_unused=True) for s in seeds]
            batched = tg_func.vmap(lambda s: tg_func.vjp(lambda *xs: on(xs)[k], *differentiable)[1](s))(
                Variable._make(seeds))
            pairs = [(j, f"input {p}", batched[j], [e[j] for e in expected], x) for j, (p, x) in
                     enumerate(zip(positions, differentiable))]
        else:
            seeds = [torch.randn((2,) + tuple(x.shape), dtype=x.dtype, device=x.device) for x in differentiable]
            expected = [tg_func.jvp(lambda *xs: on(xs)[k], tuple(differentiable), tuple(s[i] for s in seeds))[1]
                        for i in range(2)]
            batched = tg_func.vmap(lambda *t: tg_func.jvp(lambda *xs: on(xs)[k], tuple(differentiable), t)[1])(
                *(Variable._make(s) for s in seeds))
            pairs = [(0, "its tangents", batched, expected, out)]
        for _, what, got, wanted, like in pairs:
            for i in range(2):
                w = torch.zeros_like(like.data) if wanted[i] is None else wanted[i].data
                if not torch.allclose(got.data[i], w, rtol=rtol, atol=atol):
                    kind = "gradient" if reverse else "forward-mode tangent"
                    raise GradcheckError(f"For output {k} and {what}:\n\nthe batched {kind} computed under vmap does "
                                         f"not match the one computed for each batch element in a loop.\n"
                                         f"Got: {got.data[i]}\nExpected: {w}")


def gradgradcheck(func: Callable[..., Any], inputs: TensorLike | Sequence[Any],
                  grad_outputs: TensorLike | Sequence[TensorLike] | None = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck the function that computes func's gradients with create_graph=True.

    That function takes the inputs and the output gradients (random in [-1, 1) unless given, as in
    torch) and returns d(outputs·grad_outputs)/d inputs; both kinds of argument are checked.
    """
    if check_batched_grad:
        raise NotImplementedError("teachgrad's gradgradcheck does not check batched second derivatives "
                                  "(check_batched_grad): its function of first derivatives calls the engine, which "
                                  "does not run under vmap")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outputs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if grad_outputs is None:
        grad_outputs = tuple(Variable(_random_like(o.data, gen_non_contig_grad_outputs), requires_grad=True)
                             for o in outputs)
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    count = len(inputs)
    differentiable = _differentiable_positions(inputs)

    def first_derivatives(*args):
        # as torch: the inputs that required grad require it again (forward mode hands in detached duals)
        xs = tuple(x.requires_grad_() if i in differentiable else x for i, x in enumerate(args[:count]))
        vs = tuple(v.requires_grad_() if isinstance(v, Variable) else v for v in args[count:])
        with grad_mode.enable_grad():   # also while gradcheck's finite differences run without grad
            outs = [o for o in _outputs(func, xs) if o.requires_grad]
            grads = engine.grad(outs, [xs[i] for i in differentiable], vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, fast_mode=fast_mode,
                     masked=masked)


def _random_like(data, non_contiguous):
    """Uniform in [-1, 1), as torch's default grad_outputs (both parts of a complex one); laid out with gaps when
    asked for non-contiguous."""
    if data.is_complex():
        return torch.view_as_complex(_random_like(torch.view_as_real(data), False).contiguous())
    if not non_contiguous or data.numel() < 2:
        return torch.empty_like(data).uniform_(-1, 1)
    wide = torch.empty(*data.shape[:-1], data.shape[-1] * 2 if data.dim() else 2, dtype=data.dtype, device=data.device)
    return wide.uniform_(-1, 1)[..., ::2] if data.dim() else wide.uniform_(-1, 1)[0]
