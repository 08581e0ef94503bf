"""vmap's mode word: how many vmap levels are open, read by `Function.apply` before anything else.

While no vmap is open (`vmap_depth == 0`), an op costs one test of this word. While one is, `apply` hands the op
to `run_batched`, which teachgrad/features/vmap.py hands over here when it is first imported (as
teachgrad/core/variable.py hands its class to teachgrad/rules/variable_class.py): the batching rules need the
ops, which stand above this module.

Guarded by tests/test_vmap.py (every op under vmap: its batching rule, or an error naming it) and
tests/test_vmap_random.py (random factories under each randomness).
"""
from __future__ import annotations

from typing import Any, Callable

# How many vmap levels are open; 0 while none is. A batching rule sets it to 0 while it runs the op on the
# physical tensors (the batch dims in front), and back when it returns.
vmap_depth = 0

_run_batched: Callable[[type, tuple], Any] | None = None
_draw_random: Callable[[Callable, tuple, dict], Any] | None = None

# The `randomness=` of each open vmap, innermost last: 'error', 'different' or 'same'.
randomness: list[str] = []

RANDOM = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
          "'different' randomness flags on vmap or perform the randomness operation out of vmap")


BACKWARD = ("backward() called inside a functorch transform. This is not supported, please use functorch.grad or "
            "functorch.vjp instead or call backward() outside of functorch transforms.")


def refuse_engine_call(caller: str, outputs: tuple) -> None:
    """The engine called by the user's code inside a vmap, as torch answers it: `backward()` is refused
    whatever it is called on; `autograd.grad` of a batched output finds no graph at the level it is called
    from (the output's history is the batch's); of an unbatched one it runs. (tg.func's own passes run on the
    physical tensors, with the mode word at 0: they never come here.)"""
    if caller == "backward":
        raise RuntimeError(BACKWARD)
    for i, output in enumerate(outputs):
        if getattr(output, "_levels", None):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def hand_over(run_batched: Callable[[type, tuple], Any], draw: Callable[[Callable, tuple, dict], Any]) -> None:
    """Called once by teachgrad/features/vmap.py with the function that runs an op through its batching rule,
    and the one that draws a random factory's values under vmap."""
    global _run_batched, _draw_random
    _run_batched, _draw_random = run_batched, draw


def run_batched(cls: type, args: tuple) -> Any:
    """Run the op `cls` on `args` inside a vmap (see teachgrad/features/vmap.py)."""
    return _run_batched(cls, args)


def set_depth(depth: int) -> int:
    """Set the mode word; returns what it was."""
    global vmap_depth
    old, vmap_depth = vmap_depth, depth
    return old


def draw_random(torch_fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """A random factory (`tg.randn`, `tg.rand_like`, ...) called inside vmap: torch's error where a level is in
    randomness='error'; else the draw teachgrad/features/vmap.py makes (one per example at the 'different'
    levels, one for all at the 'same' ones), handed over as run_batched is."""
    if "error" in randomness:
        raise RuntimeError(RANDOM)
    return _draw_random(torch_fn, args, kwargs)
