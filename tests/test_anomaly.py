"""Anomaly detection as torch's: NaN in backward raises at the node, with the forward line that made it."""
import warnings

import pytest
import torch

import teachgrad as tg

from .twins import same


@pytest.fixture(autouse=True)
def anomaly_off_afterwards():
    yield
    torch.autograd.set_detect_anomaly(False)
    tg.autograd.set_detect_anomaly(False)


def sqrt_at_zero(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()                      # the forward line anomaly mode points at
    (y * 0).sum().backward()          # 0 * inf = nan in SqrtBackward0
    return x.grad


def test_nan_in_backward_passes_silently_by_default():
    same(sqrt_at_zero)


def test_detect_anomaly_raises_torchs_error_at_the_node():
    def snippet(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                return sqrt_at_zero(lib)
    assert same(snippet) == ("raised", (RuntimeError, "Function 'SqrtBackward0' returned nan values in its 0th output."))


def test_the_warning_shows_the_forward_line_that_made_the_node():
    for lib in (torch, tg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="returned nan values"):
                sqrt_at_zero(lib)
        messages = [str(w.message) for w in caught]
        assert messages[0].startswith("Anomaly Detection has been enabled.")
        report = messages[1]
        assert report.startswith("Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n")
        trace = report.split("(Triggered internally")[0].rstrip().splitlines()
        assert trace[-2].strip().startswith(f'File "{__file__}"') and trace[-2].strip().endswith("in sqrt_at_zero")
        assert trace[-1].strip() == "y = x.sqrt()                      # the forward line anomaly mode points at"
        if lib is tg:   # torch's points into torch/autograd/graph.py; ours at the caller of backward()
            assert caught[1].filename == __file__


def test_check_nan_false_lets_nan_through():
    def snippet(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                return sqrt_at_zero(lib), lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()
    same(snippet)


def test_set_detect_anomaly_as_function_and_context():
    def snippet(lib):
        states = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
        lib.autograd.set_detect_anomaly(True, check_nan=False)
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        with lib.autograd.set_detect_anomaly(True):
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            try:
                sqrt_at_zero(lib)
            except RuntimeError as error:
                states.append(str(error))
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.autograd.set_detect_anomaly(False)
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        return states
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(snippet)


def test_detect_anomaly_is_not_a_decorator_in_torch_either():
    def snippet(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")

            @lib.autograd.detect_anomaly()
            def f():
                return 1
    same(snippet)


def modified_saved_tensor(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def test_version_counter_error_ends_with_torchs_hint():
    same(modified_saved_tensor)


def test_version_counter_error_in_anomaly_mode_points_above():
    def snippet(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                modified_saved_tensor(lib)
    same(snippet)


def test_any_error_in_backward_is_reported_with_the_forward_stack():
    for lib in (torch, tg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="modified by an inplace operation"):
                modified_saved_tensor(lib)
        report = str(caught[1].message)
        assert report.startswith("Error detected in ExpBackward0.")
        assert "y = x.exp()" in report
