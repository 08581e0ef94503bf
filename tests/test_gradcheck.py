"""gradcheck and gradgradcheck as torch's: the same options, the same verdicts, the same errors.

Each scenario runs under torch.autograd.gradcheck and teachgrad's, with a Function written once for
both (`lib` is torch or teachgrad). Verdicts (True / False / exception type) must agree; messages must
say the same thing (the same first line; teachgrad then lists the entries that differ).
"""
import warnings

import pytest
import torch

import teachgrad as tg


def functions(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x ** 2


    class WrongCube(Cube):
        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 2 * x ** 2

    class Forgetful(Cube):
        """Returns the local derivative without multiplying by grad (right only when grad is ones)."""
        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 3 * x ** 2 + 0 * grad

    class Noisy(Cube):
        """A backward that differs by 1e-12 from run to run: right, but not reentrant."""
        calls = [0]

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            Noisy.calls[0] += 1
            return grad * (3 * x ** 2 + 1e-12 * Noisy.calls[0])

    class WithJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x.cos()

        @staticmethod
        def jvp(ctx, tangent):
            x, = ctx.saved_tensors
            return tangent * x.cos()

    class WrongJvp(WithJvp):
        @staticmethod
        def jvp(ctx, tangent):
            x, = ctx.saved_tensors
            return tangent * x.sin()

    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x ** 2

        @staticmethod
        def backward(ctx, ga, gb):
            x, = ctx.saved_tensors
            return ga * 2 + gb * 2 * x

    return dict(Cube=Cube, WrongCube=WrongCube, Forgetful=Forgetful, Noisy=Noisy, WithJvp=WithJvp,
                WrongJvp=WrongJvp, TwoOutputs=TwoOutputs)


def x64(lib, requires_grad=True):
    return lib.tensor([0.5, -1.2, 2.0], dtype=lib.float64, requires_grad=requires_grad)


SCENARIOS = {
    "right": lambda lib, F: lib.autograd.gradcheck(F["Cube"].apply, (x64(lib),)),
    "wrong": lambda lib, F: lib.autograd.gradcheck(F["WrongCube"].apply, (x64(lib),)),
    "wrong, no exception": lambda lib, F: lib.autograd.gradcheck(F["WrongCube"].apply, (x64(lib),), raise_exception=False),
    "forgetful on a sum": lambda lib, F: lib.autograd.gradcheck(lambda x: F["Forgetful"].apply(x).sum(), (x64(lib),)),
    "not reentrant": lambda lib, F: lib.autograd.gradcheck(F["Noisy"].apply, (x64(lib),)),
    "not reentrant, tolerated": lambda lib, F: lib.autograd.gradcheck(F["Noisy"].apply, (x64(lib),), nondet_tol=1e-9),
    "two outputs": lambda lib, F: lib.autograd.gradcheck(F["TwoOutputs"].apply, (x64(lib),)),
    "fast mode, right": lambda lib, F: lib.autograd.gradcheck(F["Cube"].apply, (x64(lib),), fast_mode=True),
    "fast mode, wrong": lambda lib, F: lib.autograd.gradcheck(F["WrongCube"].apply, (x64(lib),), fast_mode=True),
    "forward AD, right": lambda lib, F: lib.autograd.gradcheck(F["WithJvp"].apply, (x64(lib),), check_forward_ad=True),
    "forward AD, wrong": lambda lib, F: lib.autograd.gradcheck(F["WrongJvp"].apply, (x64(lib),), check_forward_ad=True),
    "forward AD only": lambda lib, F: lib.autograd.gradcheck(F["WithJvp"].apply, (x64(lib),), check_forward_ad=True,
                                                             check_backward_ad=False),
    "neither mode": lambda lib, F: lib.autograd.gradcheck(F["Cube"].apply, (x64(lib),), check_backward_ad=False),
    "no input requires grad": lambda lib, F: lib.autograd.gradcheck(F["Cube"].apply, (x64(lib, False),)),
    "eps given by position": lambda lib, F: lib.autograd.gradcheck(F["Cube"].apply, (x64(lib),), 1e-6),
    "stride-0 input": lambda lib, F: lib.autograd.gradcheck(lambda x: x * 2,
                                                            (lib.ones(1, dtype=lib.float64).expand(3).requires_grad_(),)),
    "gradgradcheck, right": lambda lib, F: lib.autograd.gradgradcheck(lambda x: (x ** 3).sum(), (x64(lib),)),
    "gradgradcheck, non-contiguous grad_outputs": lambda lib, F: lib.autograd.gradgradcheck(
        lambda x: x.reshape(3, 1) * x, (x64(lib),), gen_non_contig_grad_outputs=True),
    "gradgradcheck, fwd over rev": lambda lib, F: lib.autograd.gradgradcheck(lambda x: (x.sin() * x).sum(), (x64(lib),),
                                                                            check_fwd_over_rev=True),
}


def outcome(scenario, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returned", SCENARIOS[scenario](lib, functions(lib)))
        except Exception as error:   # the type's name: torch's and teachgrad's GradcheckError are two classes
            result = ("raised", type(error).__name__, str(error).split("\n")[0].rstrip(",:"))
    return result, [str(w.message) for w in caught if "gradcheck" in str(w.message) or "double precision" in str(w.message)]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_gradcheck_agrees_with_torch(scenario):
    ours, theirs = outcome(scenario, tg), outcome(scenario, torch)
    assert ours == theirs


def test_float32_input_warns_as_torch_and_fails_at_default_tolerances():
    def run(lib):
        return lib.autograd.gradcheck(lambda v: v * 2, (lib.ones(2, requires_grad=True),), raise_exception=False)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        ours = run(tg)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        theirs = run(torch)
    assert ours == theirs


def test_batched_checks_run_under_vmap():
    fn = lambda lib: lambda x, w: ((x @ w).tanh() * x.sum(), (x * 2).sum())   # noqa: E731
    for lib in (tg, torch):
        x = lib.tensor(torch.randn(3, 4, dtype=torch.float64), requires_grad=True)
        w = lib.tensor(torch.randn(4, 2, dtype=torch.float64), requires_grad=True)
        assert lib.autograd.gradcheck(fn(lib), (x, w), check_batched_grad=True, check_forward_ad=True,
                                      check_batched_forward_grad=True)


def test_batched_check_catches_a_batching_rule_that_disagrees_with_the_loop(monkeypatch):
    from teachgrad.features import batching_rules
    from teachgrad import ops
    right = batching_rules.RULES[ops.Sin]
    monkeypatch.setitem(batching_rules.RULES, ops.Sin, lambda op, args, levels: right(ops.Cos, args, levels))
    x = tg.tensor(torch.randn(3, dtype=torch.float64), requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: a.sin(), (x,))                 # the loop's gradients are right
    with pytest.raises(tg.check.GradcheckError, match="(?s)For output 0 and input 0:.*computed under vmap does not"):
        tg.autograd.gradcheck(lambda a: a.sin(), (x,), check_batched_grad=True)
    with pytest.raises(NotImplementedError, match="gradgradcheck does not check batched second derivatives"):
        tg.autograd.gradgradcheck(lambda a: a.sin(), (x,), check_batched_grad=True)


def test_wrong_gradients_are_listed_entry_by_entry():
    F = functions(tg)
    with pytest.raises(tg.check.GradcheckError) as error:
        tg.autograd.gradcheck(F["WrongCube"].apply, (x64(tg),))
    assert "d output[0][0] / d input[0][0]: analytical 0.5, numerical 0.75" in str(error.value)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_leaves_its_inputs_version_as_torchs_does(fast_mode):
    """torch's gradcheck perturbs its inputs through `.data`, whose version counter is its own: afterwards
    the input (and a view of it) is at the version it was, so a view's grad_fn is not made again.
    (The forward-AD tutorial's custom-Function cell showed AsStridedBackward0 where torch has ViewBackward0.)"""
    seen = []
    for lib in (tg, torch):
        x = lib.randn(4, dtype=torch.float64, requires_grad=True)
        view = x.view(2, 2)
        lib.autograd.gradcheck(lambda t: (t * t).sum(), (x,), fast_mode=fast_mode, check_forward_ad=True)
        seen.append((x._version, view.grad_fn.name()))
    assert seen[0] == seen[1] == (0, "ViewBackward0"), seen
