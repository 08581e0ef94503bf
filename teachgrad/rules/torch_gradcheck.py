"""torch's own `torch.autograd.gradcheck` handed a teachgrad function: refused, with a message that says why.

torch's gradcheck cannot check a function of Variables. It perturbs each input through `.data`, counting on
torch's `.data` having a version counter of its own (a Variable's `.data` is the tensor itself, so the tensors
saved for backward see each perturbation), and it keeps only the gradients that are torch tensors (a Variable's
gradient is a Variable, so every analytical Jacobian would read as zeros). Either way it would report a wrong
verdict; `tg.autograd.gradcheck` checks a teachgrad function as torch's checks a torch one.

Two places notice it, each only on a path torch's gradcheck reaches: a saved tensor found modified
(rules/saved_tensors.py) and torch.autograd.grad handed Variables (api/interop.py).

Guarded by tests/test_torch_autograd_entry_points.py (torch's gradcheck of teachgrad functions).
"""
import sys

MESSAGE = (
    "torch.autograd.gradcheck cannot check a teachgrad function: it perturbs each input through `.data`, which "
    "for a teachgrad Variable is the tensor itself (torch's `.data` has a version counter of its own), and it "
    "reads only gradients that are torch tensors. Use tg.autograd.gradcheck (teachgrad.autograd.gradcheck), "
    "which checks it the same way.")


def refuse_inside_torchs_gradcheck() -> None:
    """Raise the refusal when torch's gradcheck is among the callers (a frame of torch/autograd/gradcheck.py)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.replace("\\", "/").endswith("torch/autograd/gradcheck.py"):
            raise RuntimeError(MESSAGE)
        frame = frame.f_back
