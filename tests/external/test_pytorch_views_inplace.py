"""PyTorch's own view + in-place tests, run unchanged under torch and teachgrad.

Source: pytorch/pytorch, test/test_autograd.py, class TestAutogradDeviceType (test_inplace_on_view_*,
test_inplace_multiple_output_view_of_view). The bodies below are verbatim; only the harness is ours:
each test is a method of a class built for one library, whose module is bound to the name `torch`,
and `gradcheck`/`gradgradcheck` are that library's `torch.autograd.gradcheck`/`gradgradcheck`.
Left out: test_inplace_on_view_python (needs ctx.mark_dirty) and test_inplace_on_view_multi_output_unsafe
(unsafe_split and friends), which teachgrad does not have.
"""
import re

import pytest
import torch as real_torch

import teachgrad


def suite_for(torch):
    gradcheck = torch.autograd.gradcheck
    gradgradcheck = getattr(torch.autograd, "gradgradcheck", None)

    class TestAutogradDeviceType(_Asserts):
        def test_inplace_on_view_backprop_base(self, device):
            # modify view and back-prop through base
            root = torch.randn(2, 2, device=device, requires_grad=True)
            x = root.clone()
            v1 = x.narrow(0, 0, 1)
            v1.mul_(2)
            x.sum().backward()
            self.assertEqual(root.grad.tolist(), [[2, 2], [1, 1]])

        def test_inplace_on_view_backprop_view_of_view(self, device):
            # modify view and backprop through view-of-view
            root = torch.randn(2, 2, device=device, requires_grad=True)
            x = root.clone()
            v1 = x.narrow(0, 0, 1)
            v2 = x.narrow(0, 0, 1)
            v1.mul_(2)
            v2.sum().backward()
            self.assertEqual(root.grad.tolist(), [[2, 2], [0, 0]])

        def test_inplace_on_view_of_view(self, device):
            # modify view-of-view and backprop through base
            root = torch.randn(2, 2, device=device, requires_grad=True)
            x = root.clone()
            v1 = x.narrow(0, 0, 1)
            v2 = v1.narrow(1, 1, 1)
            v2.mul_(2)
            x.sum().backward()
            self.assertEqual(root.grad.tolist(), [[1, 2], [1, 1]])

        def test_inplace_on_view_then_no_grad(self, device):
            # Perform an in-place operation on a view of a non-leaf variable.
            a = torch.ones(3, 1, dtype=torch.double, device=device, requires_grad=True)
            b = a * 2
            c = b.view_as(b)
            c[0][0] = 3

            # Force a graph update with grad disabled.
            with torch.no_grad():
                c.grad_fn

            c.sum().backward()

        def test_inplace_on_view_gradcheck(self, device):
            # gradcheck modifications to views
            a = torch.randn(4, 4, dtype=torch.double, device=device, requires_grad=True)
            b = torch.randn(2, 2, dtype=torch.double, device=device, requires_grad=True)

            def func(root, b):
                x = root.clone()
                x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
                x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
                return x

            gradcheck(func, [a, b], raise_exception=True)
            go = torch.randn(a.size(), dtype=torch.double, device=device, requires_grad=True)
            gradgradcheck(func, (a, b), (go,))

        def test_inplace_on_view_multiple_outputs(self, device):
            root = torch.arange(9., dtype=torch.double).reshape(3, 3).requires_grad_()
            x = root.clone()
            v1 = x.unbind()
            with self.assertRaises(RuntimeError):
                v1[0].mul_(2)

        def test_inplace_on_view_of_multiple_output_view(self, device):
            a = torch.rand(10, dtype=torch.double, device=device, requires_grad=True).clone()
            b = a.unbind(0)
            c = b[0].view_as(b[0])
            with self.assertRaises(RuntimeError):
                c.mul_(2)

        def test_inplace_multiple_output_view_of_view(self, device):
            a = torch.rand(10, dtype=torch.double, device=device, requires_grad=True).clone()
            b = a.view_as(a)
            c = b.unbind(0)
            with self.assertRaises(RuntimeError):
                c[0].mul_(2)

        def test_inplace_on_view_makes_base_require_grad(self, device):
            # in-place modification to view makes base require grad
            a = torch.randn(4, 4, dtype=torch.double, device=device, requires_grad=False)
            b = torch.randn(4, 2, dtype=torch.double, device=device, requires_grad=True)

            def func(root, b):
                x = root.clone()
                self.assertFalse(x.requires_grad)
                x.narrow(1, 2, 2).mul_(b)
                self.assertTrue(x.requires_grad)
                return x

            gradcheck(func, [a, b], raise_exception=True)
            go = torch.randn(a.size(), dtype=torch.double, device=device, requires_grad=True)
            gradgradcheck(func, (a, b), (go,))

        def test_inplace_on_view_backprop_view(self, device):
            # modify view and backprop through view
            a = torch.tensor([2., 5.], device=device, requires_grad=False)
            b = torch.tensor([3.], device=device, requires_grad=True)
            res = a.narrow(0, 1, 1).mul_(b)
            res.sum().backward()
            self.assertEqual(b.grad.tolist(), [5])
            self.assertIsNone(a.grad)

        def test_inplace_on_view_modify_base(self, device):
            # Test that an in-place operation on a base that forced it to require
            # grad also forces any previous views to require grad and backprop
            # correctly
            r = torch.ones(1, dtype=torch.double, device=device, requires_grad=True)

            def fn(r):
                x = torch.ones(5, dtype=torch.double, device=device)
                v = x.select(0, 1)
                self.assertFalse(v.requires_grad)
                self.assertIsNone(v.grad_fn)
                x.add_(r)  # v is now dependent on r due to the in-place op on x
                self.assertTrue(v.requires_grad)
                return v

            gradcheck(fn, [r])
            gradgradcheck(fn, [r])

        def test_inplace_on_view_non_contig(self, device):
            root = torch.ones(2, 3, 2, device=device).select(2, 1).t().requires_grad_(True)
            x = root.clone()
            v1 = x.narrow(0, 0, 1)
            v2 = v1.narrow(1, 1, 1)
            v2.mul_(2)
            x.sum().backward()
            self.assertEqual(root.grad.tolist(), [[1, 2], [1, 1], [1, 1]])

        def test_inplace_on_view_multi_output_safe(self, device):
            for f in [lambda t: t.split(1),
                      lambda t: t.split_with_sizes((1, 1, 1)),
                      lambda t: t.chunk(3)]:
                a = torch.randn(3, 3, device=device, requires_grad=True)
                b = a + a
                s1, s2, s3 = f(b)
                error_msg = 'This view is the output of a function that returns multiple views.'
                with self.assertRaisesRegex(RuntimeError, error_msg):
                    s1.mul_(s2)

    return TestAutogradDeviceType


class _Asserts:
    """The few unittest assertions the tests use, for torch tensors and teachgrad Variables alike."""

    def assertEqual(self, a, b):
        assert a == b, (a, b)

    def assertTrue(self, x):
        assert x

    def assertFalse(self, x):
        assert not x

    def assertIsNone(self, x):
        assert x is None

    def assertRaises(self, kind):
        return pytest.raises(kind)

    def assertRaisesRegex(self, kind, pattern):
        return pytest.raises(kind, match=re.escape(pattern) if pattern.endswith(".") else pattern)


NAMES = sorted(n for n in vars(suite_for(real_torch)) if n.startswith("test_"))


@pytest.mark.parametrize("lib", [real_torch, teachgrad], ids=["torch", "teachgrad"])
@pytest.mark.parametrize("name", NAMES)
def test_runs_unchanged(name, lib):
    lib.manual_seed(0)
    getattr(suite_for(lib)(), name)("cpu")
