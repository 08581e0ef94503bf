"""`Variable._execution_engine.queue_callback(fn)`: fn runs once the backward pass running now has run its last
node, as torch's engine runs its final callbacks (teachgrad/rules/graph_task.py). Each case runs under torch and
teachgrad and compares what happened."""
import pytest
import torch

import teachgrad as tg


def _events(lib):
    """A post-accumulate-grad hook on each leaf queues a callback; one callback queues another."""
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    events = []

    def later(name):
        def callback():
            events.append(("callback", name, a.grad.tolist(), b.grad.tolist()))
            if name == "a":
                lib.autograd.Variable._execution_engine.queue_callback(lambda: events.append(("queued by a callback",)))
        return callback

    a.register_post_accumulate_grad_hook(lambda p: (events.append(("hook a",)),
                                                    lib.autograd.Variable._execution_engine.queue_callback(later("a")))
                                         and None)
    b.register_post_accumulate_grad_hook(lambda p: (events.append(("hook b",)),
                                                    lib.autograd.Variable._execution_engine.queue_callback(later("b")))
                                         and None)
    (a * b).sum().backward()
    return events


def test_callbacks_run_after_the_last_node_in_the_order_queued():
    ours, theirs = _events(tg), _events(torch)
    assert ours == theirs
    assert [e[0] for e in ours][-3:] == ["callback", "callback", "queued by a callback"]


def test_callbacks_run_at_the_end_of_grad_too():
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        ran = []
        y = x * 3
        y.register_hook(lambda g: lib.autograd.Variable._execution_engine.queue_callback(lambda: ran.append(1)))
        lib.autograd.grad(y.sum(), x)
        assert ran == [1]


def test_a_callback_queued_in_one_backward_does_not_run_in_the_next():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    ran = []
    handle = x.register_post_accumulate_grad_hook(
        lambda p: tg.autograd.Variable._execution_engine.queue_callback(lambda: ran.append(len(ran))))
    (x * x).sum().backward()
    handle.remove()
    (x * x).sum().backward()
    assert ran == [0]


@pytest.mark.parametrize("lib", [tg, torch], ids=["teachgrad", "torch"])
def test_queue_callback_outside_backward_is_refused_with_torchs_message(lib):
    with pytest.raises(RuntimeError, match="^Final callbacks can only be installed during backward pass.$"):
        lib.autograd.Variable._execution_engine.queue_callback(lambda: None)
