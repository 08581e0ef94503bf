"""The bench's whole program (benchmarks/char_model.py) computes under teachgrad what it computes under torch:
the final loss, every parameter's gradient and the text it samples under no_grad."""
import sys
from pathlib import Path

import torch

import teachgrad as tg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from char_model import char_model  # noqa: E402


def test_char_model_twins_torch():
    loss, grads, text = char_model(torch)
    our_loss, our_grads, our_text = char_model(tg)
    assert our_text == text
    torch.testing.assert_close(our_loss.data, loss.detach())
    assert len(our_grads) == len(grads)
    for ours, theirs in zip(our_grads, grads):
        torch.testing.assert_close(ours.data if isinstance(ours, tg.Variable) else ours, theirs)
