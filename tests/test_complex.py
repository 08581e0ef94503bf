"""Complex numbers and torch.fft against torch, as twin tests: the same lines under `lib=torch` and `lib=teachgrad`
give the same values, node names, gradients (torch's convention: for a real loss of z = x + iy, z.grad is
dL/dx + i dL/dy, the conjugate Wirtinger derivative times 2), second derivatives, forward-mode tangents, gradcheck
verdicts and errors. Inputs in complex128 (and float64 where an op takes real ones).

Also the engine's rules for complex gradients (a real leaf that met a complex number, a complex leaf given a
real gradient, backward of a complex scalar), the views real/imag/view_as_real/view_as_complex/conj under
in-place writes, and small whole programs a learner writes (|fft(x)|² summed, a complex linear layer fitted by
gradient descent, a phase-retrieval loss)."""
import importlib

import pytest
import torch
import torch.autograd.forward_ad as torch_fw

import teachgrad as tg

from .twins import same

C = torch.complex128
Z = torch.tensor([0.5 + 1.0j, -1.2 + 0.3j, 0.8 - 0.7j, -0.4 - 1.1j], dtype=C)
W = torch.tensor([1.1 - 0.2j, 0.3 + 0.9j, -0.6 + 0.4j, 0.9 + 0.5j], dtype=C)
X = torch.tensor([0.7, -1.3, 0.4, 2.1], dtype=torch.float64)
ZM = torch.tensor([[0.5 + 1.0j, -1.2 + 0.3j, 0.8 - 0.7j], [-0.4 - 1.1j, 0.2 + 0.6j, 1.5 - 0.1j]], dtype=C)
WM = torch.tensor([[0.3 - 0.8j, 1.0 + 0.2j], [-0.7 + 0.5j, 0.4 + 0.4j], [0.9 - 0.3j, -0.2 - 1.0j]], dtype=C)
XM = torch.tensor([[0.2, -0.9, 1.4, 0.6, -0.3], [1.1, 0.5, -0.8, 0.1, 0.7], [-0.6, 0.3, 0.9, -1.2, 0.4]],
                  dtype=torch.float64)
ZB = ZM.reshape(1, 2, 3).expand(2, 2, 3) * torch.tensor([1.0, -0.5j], dtype=C).view(2, 1, 1)


def _leaf(lib, data):
    return lib.tensor(data.tolist(), dtype=data.dtype, requires_grad=True)


def _plain(x):
    return x.data if isinstance(x, tg.Variable) else x.detach()


def _grad_output(out):
    """A fixed, generic grad_output of out's shape and dtype (complex parts both nonzero)."""
    n = out.numel()
    real = torch.linspace(-1.0, 1.5, n, dtype=torch.float64).view(out.shape)
    return torch.complex(real, 0.5 - real.flip(-1) if out.dim() else real * 0.5) if out.is_complex() else real


def derivatives(lib, fn, data, second=True):
    """fn's value and node; the inputs' gradients for a generic grad_output; the second derivative (the gradient
    of the sum of |gradient|², a real loss); the tangent for tangents of (1 + 1j) (1 for a real input)."""
    leaves = [_leaf(lib, d) for d in data]
    out = fn(lib, *leaves)
    v = _grad_output(_plain(out))
    v = tg.Variable(v) if lib is tg else v
    grads = lib.autograd.grad(out, leaves, v, create_graph=True, allow_unused=True)
    recorded = [g for g in grads if g is not None and g.requires_grad]
    seconds = lib.autograd.grad(sum((g * g.conj()).real.sum() for g in recorded), leaves, allow_unused=True) \
        if recorded and second else [None] * len(leaves)
    fw = tg.autograd.forward_ad if lib is tg else torch_fw
    with fw.dual_level():
        duals = [fw.make_dual(_leaf(lib, d).detach(), torch.full_like(d, 1 + 1j if d.is_complex() else 1.0))
                 for d in data]
        tangent = fw.unpack_dual(fn(lib, *duals)).tangent
    zeros = [torch.zeros_like(d) for d in data]
    return {"value": _plain(out), "node": out.grad_fn.name(),
            "grads": [z if g is None else _plain(g) for g, z in zip(grads, zeros)],
            "seconds": [z if g is None else _plain(g) for g, z in zip(seconds, zeros)],
            "tangent": None if tangent is None else _plain(tangent)}


def assert_complex_twins(fn, *data, second=True):
    ours, theirs = derivatives(tg, fn, data, second), derivatives(torch, fn, data, second)
    assert ours["node"] == theirs["node"]
    torch.testing.assert_close(ours["value"], theirs["value"])
    for key in ("grads", "seconds"):
        for a, b in zip(ours[key], theirs[key]):
            torch.testing.assert_close(a, b, msg=key)
    if theirs["tangent"] is None:
        assert ours["tangent"] is None
    else:
        torch.testing.assert_close(ours["tangent"], theirs["tangent"], msg="tangent")


# --- each op torch differentiates for complex tensors ---

OPS = [
    ("add", lambda lib, z, w: z + w, Z, W), ("sub", lambda lib, z, w: lib.sub(z, w), Z, W),
    ("mul", lambda lib, z, w: z * w, Z, W), ("mul_self", lambda lib, z: z * z, Z),
    ("div", lambda lib, z, w: z / w, Z, W), ("neg", lambda lib, z: -z, Z),
    ("mul_real", lambda lib, z, x: z * x, Z, X), ("div_real", lambda lib, x, z: x / z, X, Z),
    ("mul_number", lambda lib, z: z * (2 - 3j), Z), ("real_times_number", lambda lib, x: x * (1 + 2j), X),
    ("rdiv_number", lambda lib, z: 1 / z, Z), ("add_number", lambda lib, z: z + 1j, Z),
    ("exp", lambda lib, z: lib.exp(z), Z), ("log", lambda lib, z: lib.log(z), Z), ("sqrt", lambda lib, z: z.sqrt(), Z),
    ("pow", lambda lib, z: z ** 3, Z), ("pow_complex_exponent", lambda lib, z: z.pow(1.5 - 0.5j), Z),
    ("pow_tensor", lambda lib, z, w: z ** w, Z, W),
    ("sin", lambda lib, z: lib.sin(z), Z), ("cos", lambda lib, z: z.cos(), Z), ("tanh", lambda lib, z: lib.tanh(z), Z),
    ("sigmoid", lambda lib, z: lib.sigmoid(z), Z), ("reciprocal", lambda lib, z: lib.reciprocal(z), Z),
    ("tan", lambda lib, z: lib.tan(z), Z), ("asin", lambda lib, z: lib.asin(z), Z), ("atan", lambda lib, z: z.atan(), Z),
    ("sinh", lambda lib, z: z.sinh(), Z), ("cosh", lambda lib, z: z.cosh(), Z), ("acosh", lambda lib, z: z.acosh(), Z),
    ("asinh", lambda lib, z: z.asinh(), Z), ("atanh", lambda lib, z: z.atanh(), Z),
    ("log10", lambda lib, z: z.log10(), Z), ("log2", lambda lib, z: z.log2(), Z), ("log1p", lambda lib, z: z.log1p(), Z),
    ("expm1", lambda lib, z: z.expm1(), Z), ("rsqrt", lambda lib, z: z.rsqrt(), Z), ("exp2", lambda lib, z: z.exp2(), Z),
    ("sum", lambda lib, z: lib.sum(z * z), Z), ("mean", lambda lib, z: (z * z).mean(), Z),
    ("sum_dim", lambda lib, z: lib.sum(z.exp(), 1), ZM),
    ("reshape", lambda lib, z: (z * 1).reshape(2, 2).exp(), Z), ("view_t", lambda lib, z: z.view(2, 3).t() * z[0, 0], ZM),
    ("transpose", lambda lib, z: lib.transpose(z, 0, 1).sin(), ZM), ("index", lambda lib, z: z[1:, ::2] * z[0, 1], ZM),
    ("abs", lambda lib, z: lib.abs(z), Z), ("abs_of_product", lambda lib, z, w: (z * w).abs(), Z, W),
    ("sgn", lambda lib, z: lib.sgn(z), Z), ("angle", lambda lib, z: lib.angle(z), Z),
    ("angle_real", lambda lib, x: x.angle(), X),
    ("conj", lambda lib, z, w: z.conj() * w, Z, W), ("conj_function", lambda lib, z: lib.conj(z).exp(), Z),
    ("conj_physical", lambda lib, z: lib.conj_physical(z) * z, Z),
    ("real", lambda lib, z: z.real * z.imag, Z), ("real_function", lambda lib, z: lib.real(z.exp()), Z),
    ("imag_function", lambda lib, z: lib.imag(z * z), Z),
    ("view_as_real", lambda lib, z: lib.view_as_real(z.sin()), Z),
    ("view_as_complex", lambda lib, x: lib.view_as_complex(x.reshape(2, 2)).exp(), X),
    ("polar", lambda lib, r, t: lib.polar(r, t), X.abs() + 0.5, X),
    ("complex", lambda lib, x, y: lib.complex(x, y).exp(), X, X.flip(0)),
    ("mm", lambda lib, a, b: a @ b, ZM, WM), ("mm_function", lambda lib, a, b: lib.mm(a, b).tanh(), ZM, WM),
    ("mv", lambda lib, a, z: a @ z[:3], ZM, Z), ("dot", lambda lib, z, w: z @ w, Z, W),
    ("vdot", lambda lib, z, w: lib.vdot(z, w), Z, W), ("vector_matrix", lambda lib, z, b: z[:3] @ b, Z, WM),
    ("bmm", lambda lib, a, b: a @ b, ZB, WM.expand(2, 3, 2)), ("batch_matrix", lambda lib, a, b: a @ b, ZB, WM),
    ("mH", lambda lib, a: a.mH @ a, ZM), ("addmm", lambda lib, c, a, b: lib.addmm(c, a, b), ZM[:, :2], ZM, WM),
    ("real_matrix_complex_vector", lambda lib, m, z: m.t()[:4, :3].to(C) @ z[:3], XM, Z),
    ("prod", lambda lib, z: z.prod(), Z), ("prod_dim", lambda lib, z: lib.prod(z, 1), ZM),
    ("cumprod", lambda lib, z: lib.cumprod(z, 1), ZM), ("cumsum", lambda lib, z: lib.cumsum(z * z, 0), ZM),
    ("addcmul", lambda lib, z, w: lib.addcmul(z, z, w, value=0.5), Z, W),
    ("addcdiv", lambda lib, z, w: lib.addcdiv(z, z, w), Z, W), ("logsumexp", lambda lib, z: lib.logsumexp(z, 1), ZM),
    ("sinc", lambda lib, z: lib.sinc(z), Z), ("pow_number_base", lambda lib, z: 2 ** z, Z),
    ("einsum", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), ZM, WM),
    ("linear", lambda lib, a, b: lib.nn.functional.linear(a, b.t()), ZM, WM),
    ("cat_stack", lambda lib, z, w: lib.cat([z, w]) * lib.stack([w, z]).flatten(), Z, W),
    ("where", lambda lib, z, w: lib.where(torch.tensor([True, False, True, False]), z, w).exp(), Z, W),
    ("gather", lambda lib, z: lib.gather(z, 1, torch.tensor([[0], [2]])) * z, ZM),
    ("lerp", lambda lib, z, w: lib.lerp(z, w, 0.3), Z, W), ("square", lambda lib, z: lib.square(z), Z),
    ("var", lambda lib, z: z.var(), Z),
    ("flip_roll", lambda lib, z: lib.roll(lib.flip(z, (0,)), 1) * z, Z),
]


@pytest.mark.parametrize("case", OPS, ids=[case[0] for case in OPS])
def test_op_against_torch(case):
    name, fn, *data = case
    second = name not in ("sgn",)   # (sgn's second derivative: torch's and ours agree in value, tested apart)
    assert_complex_twins(fn, *data, second=second)


def test_norm_of_complex_tensors_backward_as_torch_and_its_forward_mode_refused():
    z = _leaf(tg, Z)
    g, = tg.autograd.grad(z.norm(), z)
    zt = _leaf(torch, Z)
    torch.testing.assert_close(_plain(g), torch.autograd.grad(zt.norm(), zt)[0])
    with tg.autograd.forward_ad.dual_level():
        dual = tg.autograd.forward_ad.make_dual(_leaf(tg, Z).detach(), torch.ones(4, dtype=C))
        with pytest.raises(NotImplementedError, match="does not take complex tensors"):
            dual.norm()


def test_sgn_second_derivative_where_torch_has_one():
    def second(lib):
        z = _leaf(lib, Z)
        g, = lib.autograd.grad(lib.sgn(z * 1.5), z, _grad_output_for(lib, Z), create_graph=True)
        return lib.autograd.grad((g * g.conj()).real.sum(), z)[0]
    torch.testing.assert_close(_plain(second(tg)), second(torch))


def _grad_output_for(lib, data):
    v = _grad_output(data)
    return tg.Variable(v) if lib is tg else v


# --- torch.fft ---

FFT = [
    ("fft", lambda lib, z: lib.fft.fft(z), Z), ("fft_real", lambda lib, x: lib.fft.fft(x), X),
    ("fft_padded", lambda lib, z: lib.fft.fft(z, n=6), Z), ("fft_cropped", lambda lib, z: lib.fft.fft(z, n=3), Z),
    ("fft_ortho", lambda lib, z: lib.fft.fft(z, norm="ortho"), Z),
    ("fft_forward_norm", lambda lib, z: lib.fft.fft(z, norm="forward", dim=0), ZM),
    ("ifft", lambda lib, z: lib.fft.ifft(z), Z), ("ifft_real", lambda lib, x: lib.fft.ifft(x), X),
    ("rfft", lambda lib, x: lib.fft.rfft(x), X), ("rfft_odd", lambda lib, x: lib.fft.rfft(x, n=5, norm="ortho"), X),
    ("irfft", lambda lib, z: lib.fft.irfft(z), Z), ("irfft_n", lambda lib, z: lib.fft.irfft(z, n=7), Z),
    ("irfft_long", lambda lib, z: lib.fft.irfft(z, n=12, norm="forward"), Z),
    ("hfft", lambda lib, z: lib.fft.hfft(z), Z), ("hfft_n", lambda lib, z: lib.fft.hfft(z, n=5, norm="ortho"), Z),
    ("ihfft", lambda lib, x: lib.fft.ihfft(x), X),
    ("fft2", lambda lib, z: lib.fft.fft2(z), ZM), ("fft2_real", lambda lib, x: lib.fft.fft2(x), XM),
    ("ifft2", lambda lib, z: lib.fft.ifft2(z, norm="ortho"), ZM), ("fftn", lambda lib, x: lib.fft.fftn(x), XM),
    ("fftn_s", lambda lib, x: lib.fft.fftn(x, s=(2, 7)), XM), ("ifftn_dim", lambda lib, z: lib.fft.ifftn(z, dim=(1,)), ZM),
    ("rfft2", lambda lib, x: lib.fft.rfft2(x), XM), ("rfftn_s", lambda lib, x: lib.fft.rfftn(x, s=(4, 4)), XM),
    ("irfft2", lambda lib, z: lib.fft.irfft2(z), ZM), ("irfftn_s", lambda lib, z: lib.fft.irfftn(z, s=(3, 5)), ZM),
    ("fftshift", lambda lib, z: lib.fft.fftshift(z * 1), ZM),
    ("ifftshift_dim", lambda lib, z: lib.fft.ifftshift(z.exp(), dim=1), ZM),
    ("fftshift_of_fft", lambda lib, x: lib.fft.fftshift(lib.fft.fft(x)), X),
]


@pytest.mark.parametrize("case", FFT, ids=[case[0] for case in FFT])
def test_fft_against_torch(case):
    _, fn, *data = case
    assert_complex_twins(fn, *data)


def _chain(node):
    """The node names down the first input of each node, as torch's graph shows them."""
    names = []
    while node is not None:
        names.append(node.name())
        nexts = [n for n, _ in node.next_functions if n is not None]
        node = nexts[0] if nexts else None
    return names


@pytest.mark.parametrize("case", FFT, ids=[case[0] for case in FFT])
def test_fft_records_torchs_nodes(case):
    """The padding, cropping, dtype copy and conj around each transform, as torch records them."""
    _, fn, *data = case
    assert _chain(fn(tg, *[_leaf(tg, d) for d in data]).grad_fn) == \
        _chain(fn(torch, *[_leaf(torch, d) for d in data]).grad_fn)


def test_fft_frequencies_are_torchs():
    same(lambda lib: (lib.fft.fftfreq(5), lib.fft.rfftfreq(6, d=0.5, dtype=torch.float64),
                      lib.fft.fftfreq(4, requires_grad=True).requires_grad))


@pytest.mark.parametrize("call", [
    lambda lib: lib.fft.fft(lib.tensor([1.0, 2.0]), norm="bad"),
    lambda lib: lib.fft.fft(lib.tensor([1.0, 2.0]), n=0),
    lambda lib: lib.fft.rfft(lib.tensor([1.0j, 2.0])),
    lambda lib: lib.fft.ihfft(lib.tensor([1.0j, 2.0])),
    lambda lib: lib.fft.fft(lib.tensor([1.0, 2.0]), dim=3),
    lambda lib: lib.fft.fftn(lib.tensor([1.0, 2.0]), s=(3, 4)),
    lambda lib: lib.fft.fftn(lib.tensor([[1.0, 2.0]]), dim=(0, 0)),
    lambda lib: lib.fft.fft2(lib.tensor([1.0, 2.0])),
    lambda lib: lib.fft.irfft(lib.tensor([1.0, 2.0]), n=0),
])
def test_fft_errors_are_torchs(call):
    same(call)


# --- gradcheck and gradgradcheck on complex inputs, as torch's ---

CHECKED = [
    lambda lib, z, w: z * w.exp(), lambda lib, z, w: (z / w).abs(), lambda lib, z, w: lib.angle(z) + lib.sgn(w),
    lambda lib, z, w: lib.view_as_real(z.conj() * w.sigmoid()), lambda lib, z, w: lib.fft.fft(z * w, norm="ortho"),
    lambda lib, z, w: lib.fft.irfft(z, n=5) * lib.fft.hfft(w, n=5), lambda lib, z, w: z.reshape(2, 2) @ w.reshape(2, 2),
    lambda lib, z, w: lib.polar(z.abs(), w.real),
]


@pytest.mark.parametrize("k", range(len(CHECKED)))
def test_gradcheck_and_gradgradcheck_on_complex_inputs_agree_with_torchs(k):
    fn = CHECKED[k]
    for lib in (tg, torch):
        z, w = _leaf(lib, Z), _leaf(lib, W)
        assert lib.autograd.gradcheck(lambda z, w: fn(lib, z, w), (z, w), check_forward_ad=True)
        assert lib.autograd.gradcheck(lambda z, w: fn(lib, z, w), (z, w), fast_mode=True)
        assert lib.autograd.gradgradcheck(lambda z, w: fn(lib, z, w), (z, w))


def test_gradcheck_on_real_inputs_of_a_transform():
    for lib in (tg, torch):
        x = _leaf(lib, X)
        assert lib.autograd.gradcheck(lambda x: lib.fft.rfft(x), (x,))
        assert lib.autograd.gradgradcheck(lambda x: lib.fft.ihfft(x) * lib.fft.rfft(x), (x,))


def _function_without_conj(lib):
    class Square(lib.autograd.Function):
        """z²'s derivative written as for real numbers: 2z, where torch's convention asks for 2 conj(z)."""

        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad):
            z, = ctx.saved_tensors
            return grad * 2 * z
    return Square


def test_gradcheck_refuses_a_gradient_without_its_conj_as_torch_does():
    for lib in (tg, torch):
        Square = _function_without_conj(lib)
        assert not lib.autograd.gradcheck(Square.apply, (_leaf(lib, Z),), raise_exception=False)
        module = importlib.import_module(f"{lib.__name__}.autograd.gradcheck")
        with pytest.raises(module.GradcheckError):
            lib.autograd.gradcheck(Square.apply, (_leaf(lib, Z),))


# --- the engine's rules ---

def test_backward_of_a_complex_scalar_is_refused_as_torch_refuses_it():
    same(lambda lib: (_leaf(lib, Z) * 2).sum().backward())
    same(lambda lib: lib.autograd.grad((_leaf(lib, Z) * 2).sum(), _leaf(lib, Z)))
    same(lambda lib: (_leaf(lib, Z) * 2).backward(torch.ones(4)))
    same(lambda lib: (_leaf(lib, X) * 2).backward(torch.ones(4, dtype=C)))


def test_a_complex_scalar_with_a_given_gradient_runs():
    def program(lib):
        z = _leaf(lib, Z)
        (z * z).sum().backward(torch.tensor(1.0 - 2.0j, dtype=C))
        return z.grad
    same(program)


def test_a_real_leaf_gets_the_real_part_of_a_complex_gradient():
    def program(lib):
        x, z = _leaf(lib, X), _leaf(lib, Z)
        loss = (x * z + x.exp() * 1j).abs().sum()
        loss.backward()
        return x.grad, z.grad, x.grad.dtype
    same(program)


def test_a_complex_leaf_given_a_real_gradient_by_a_function_gets_it_as_complex():
    def program(lib):
        class RealPart(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                return z.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad.real
        z = _leaf(lib, Z)
        RealPart.apply(z).abs().sum().backward()
        return z.grad
    same(program)


def test_a_function_returning_a_complex_gradient_for_a_real_input_is_refused():
    def program(lib):
        class Twisted(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad * (1 + 2j)
        x = _leaf(lib, X)
        Twisted.apply(x).sum().backward()
    same(program)


def test_complex_tensors_may_require_grad_and_integers_may_not():
    same(lambda lib: lib.tensor([1 + 2j], requires_grad=True).requires_grad)
    same(lambda lib: lib.tensor([1, 2]).requires_grad_())
    same(lambda lib: lib.tensor([1.0, 2.0]).imag)
    same(lambda lib: (lib.tensor([1.0]).conj() is None, lib.tensor([1.0 + 1j]).conj().is_conj()))


def test_the_gradient_of_a_real_loss_steps_downhill():
    """torch's convention at work: z - lr * z.grad lowers |z - target|², for teachgrad as for torch."""
    target = torch.tensor([1.0 + 1.0j, -2.0 + 0.5j], dtype=C)

    def descend(lib):
        z = lib.tensor([0.0j, 0.0j], dtype=C, requires_grad=True)
        for _ in range(50):
            loss = ((z - target).abs() ** 2).sum()
            loss.backward()
            with lib.no_grad():
                z -= 0.1 * z.grad
                z.grad.zero_()
        return z
    torch.testing.assert_close(_plain(descend(tg)), descend(torch).detach())
    torch.testing.assert_close(descend(torch).detach(), target, atol=1e-4, rtol=0)


# --- views: real, imag, view_as_real, view_as_complex, conj ---

def test_views_of_a_complex_tensor_are_torchs_views():
    def program(lib):
        z = _leaf(lib, Z)
        y = z * 1
        views = [y.real, y.imag, lib.view_as_real(y), y.conj()]
        return ([v._base is y for v in views], [v.grad_fn.name() for v in views],
                [[n.name() for n, _ in v.grad_fn.next_functions] for v in views], y.real.dtype,
                lib.view_as_complex(lib.view_as_real(y))._base is y)
    same(program)


def test_writing_through_the_real_and_imaginary_parts_rebases_the_graph_as_torch_does():
    def program(lib):
        z = _leaf(lib, Z)
        y = z * 1
        r = y.real
        version = y._version
        r.mul_(2)
        after_real = (y.grad_fn.name(), r.grad_fn.name(), [n.name() for n, _ in r.grad_fn.next_functions],
                      y._version - version)
        w = lib.view_as_real(y)
        w[:, 1].add_(1.5)
        after_pairs = (y.grad_fn.name(), w.grad_fn.name(), y._version - version)
        i = y.imag
        i.copy_(i * 3)
        (y.abs() ** 2).sum().backward()
        return after_real, after_pairs, z.grad
    same(program)


def test_writing_into_a_view_of_a_leaf_is_refused():
    def program(lib):
        z = _leaf(lib, Z)
        z.real.mul_(2)
    same(program)


def test_real_and_imag_can_be_assigned():
    def program(lib):
        z = _leaf(lib, Z)
        y = z * 1
        y.imag = torch.zeros(4, dtype=torch.float64)
        y.abs().sum().backward()
        return y, z.grad
    same(program)


# --- whole programs a learner writes ---

def test_parseval_loss_of_an_fft():
    """sum |fft(x)|² = n sum |x|²: its gradient is 2 n x."""
    def program(lib):
        x = _leaf(lib, X)
        loss = (lib.fft.fft(x).abs() ** 2).sum()
        loss.backward()
        return loss, x.grad
    same_close(program)
    loss, grad = program(tg)
    torch.testing.assert_close(_plain(grad), 2 * 4 * X)


def test_a_complex_linear_layer_fitted_by_gradient_descent():
    torch.manual_seed(0)
    inputs = torch.randn(16, 3, dtype=C)
    true_weight = torch.randn(3, 2, dtype=C)
    targets = inputs @ true_weight

    def fit(lib):
        weight = lib.zeros(3, 2, dtype=C, requires_grad=True)
        bias = lib.zeros(2, dtype=C, requires_grad=True)
        losses = []
        for _ in range(60):
            out = lib.tensor(inputs.tolist(), dtype=C) @ weight + bias
            loss = ((out - targets).abs() ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in (weight, bias):
                    p -= 0.2 * p.grad
                    p.grad.zero_()
            losses.append(loss.item())
        return weight, bias, losses
    ours, theirs = fit(tg), fit(torch)
    for a, b in zip(ours[:2], theirs[:2]):
        torch.testing.assert_close(_plain(a), b.detach())
    assert ours[2] == pytest.approx(theirs[2], rel=1e-9)
    assert theirs[2][-1] < 1e-3 * theirs[2][0]


def test_a_phase_retrieval_loss():
    """Fit a signal whose Fourier magnitudes are known (the phase lost): ||fft(x)| - m|², by descent."""
    torch.manual_seed(1)
    signal = torch.randn(8, dtype=C)
    magnitudes = torch.fft.fft(signal).abs()
    start = signal + 0.3 * torch.randn(8, dtype=C)

    def retrieve(lib):
        x = lib.tensor(start.tolist(), dtype=C, requires_grad=True)
        for _ in range(30):
            loss = ((lib.fft.fft(x).abs() - magnitudes) ** 2).sum() + 0.1 * lib.angle(x).pow(2).sum()
            grad, = lib.autograd.grad(loss, x)
            with lib.no_grad():
                x -= 0.01 * grad
        return x, loss
    ours, theirs = retrieve(tg), retrieve(torch)
    torch.testing.assert_close(_plain(ours[0]), theirs[0].detach())
    torch.testing.assert_close(_plain(ours[1]), theirs[1].detach())


def test_abs_angle_conj_exp_matmul_view_as_real_polar_complex_sigmoid_together():
    def program(lib):
        x, y = _leaf(lib, X), _leaf(lib, X.flip(0) * 0.5)
        z = lib.complex(x, y)
        w = lib.polar(z.abs(), z.angle() + 0.3)
        m = (w.reshape(2, 2) @ z.conj().exp().reshape(2, 2)).sigmoid()
        loss = lib.view_as_real(m).pow(2).sum()
        loss.backward()
        return loss, x.grad, y.grad, m.grad_fn.name()
    same_close(program)


def same_close(program):
    """program under both libraries: equal node names and dtypes, values within round-off."""
    ours, theirs = program(tg), program(torch)
    for a, b in zip(ours, theirs):
        if isinstance(b, torch.Tensor):
            torch.testing.assert_close(_plain(a), b.detach())
        else:
            assert a == b
