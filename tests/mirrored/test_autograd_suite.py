"""The behaviours torch's own autograd test suite checks (on what teachgrad covers), twin against torch.

Mirrors (behaviour, not text): pytorch/pytorch test/test_autograd.py, class TestAutograd. Each scenario below is
named after the test whose behaviour it checks (test_function -> custom_function_with_a_number_argument, ...) and
written in our own code; numbers and shapes carry over where they matter. Where the original asserted a value
against a formula, the scenario returns both, so torch's and teachgrad's are compared (the formula included);
where it asserted an error, `caught` returns the error's type and message, compared with torch's.
"""
import math

import pytest

from .harness import caught, check, snippets


def describe_graph(node):
    """'Name(child, child)' for a node and everything below it (None for a missing branch)."""
    if node is None:
        return "None"
    children = ", ".join(describe_graph(child) for child, _ in node.next_functions)
    return f"{type(node).__name__}({children})"


# --- custom Functions ----------------------------------------------------------------------------------------------

def _mix(torch, decorate, seen):
    class Mix(torch.autograd.Function):
        """out = a + k * b + a * b for tensors a, b and a number k."""

        @staticmethod
        def forward(ctx, a, k, b):
            ctx.k = k
            ctx.save_for_backward(a, b)
            return a + k * b + a * b

        @staticmethod
        @decorate
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            seen.append((torch.is_grad_enabled(), isinstance(a, torch.Tensor), isinstance(grad, torch.Tensor)))
            return grad + grad * b, None, grad * ctx.k + grad * a

    a = torch.randn(5, 5, requires_grad=True)
    b = torch.randn(5, 5, requires_grad=True)
    Mix.apply(a, 2, b).sum().backward(torch.ones((), requires_grad=True), create_graph=True)
    return ((a.grad, b + 1), (b.grad, a + 2), a.grad.grad_fn is not None,
            describe_graph(a.grad.grad_fn), describe_graph(b.grad.grad_fn), seen)


def custom_function_with_a_number_argument(torch):          # test_function
    return _mix(torch, lambda f: f, [])


def custom_function_once_differentiable(torch):             # test_once_differentiable
    return _mix(torch, torch.autograd.function.once_differentiable, [])


def custom_function_returning_its_input(torch):             # test_function_returns_input
    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    grads = []
    for shape in ((1,), ()):
        leaf = torch.ones(shape, requires_grad=True)
        Same.apply(leaf).backward()
        grads.append(leaf.grad.clone())
        with torch.no_grad():
            leaf.grad.zero_()
        Same.apply(leaf.clone()).backward()
        grads.append(leaf.grad)
    return grads


def custom_backward_returning_none(torch):                  # test_function_returns_undefined_tensor
    class NoGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    leaf = torch.ones(1, requires_grad=True)
    seen = []
    for make in (lambda: NoGrad.apply(leaf), lambda: NoGrad.apply(leaf ** 2), lambda: NoGrad.apply(leaf).sum()):
        make().backward()
        seen.append(leaf.grad)            # stays None: no zeros are made up
    seen.append(torch.autograd.grad(NoGrad.apply(leaf), leaf, allow_unused=True)[0])
    return seen


def custom_backward_raising(torch):                         # test_custom_function_exception
    class Broken(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad):
            raise Exception("backward failed on purpose")

    p, q = torch.rand((3, 3), requires_grad=True), torch.rand((3, 3), requires_grad=True)
    Broken.apply((p + q) * (p + q)).sum().backward()


def custom_backward_wrong_shape(torch):                     # test_invalid_gradients
    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            return torch.randn(10, dtype=torch.float)

    WrongShape.apply(torch.randn(5, 5, requires_grad=True)).sum().backward()


def output_nr_of_outputs_and_saved_outputs(torch):          # test_save_output_nr
    seen = []

    class Halves(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t[:5], t[5:]

        @staticmethod
        def backward(ctx, *grads):
            return torch.cat(grads)

    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            (t,) = ctx.saved_tensors
            seen.append(t.output_nr)

    _, second = Halves.apply(torch.randn(10, requires_grad=True))
    seen.append(second.output_nr)
    Keep.apply(second).sum().backward()
    return seen


def custom_function_under_no_grad(torch):                   # test_no_grad_python_function
    class PlusOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t + 1

        @staticmethod
        def backward(ctx, grad):
            return grad

    with torch.no_grad():
        out = PlusOne.apply(torch.ones(5, 5, requires_grad=True))
    return out.requires_grad, out.grad_fn


def non_differentiable_mask_output(torch):                  # test_mark_non_differentiable
    class Positive(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            mask = t > 0
            ctx.mark_non_differentiable(mask)
            return mask

        @staticmethod
        def backward(ctx, grad):
            return (grad * 0).to(torch.double)

    leaf = torch.randn(5, 5, requires_grad=True)
    mask = Positive.apply(leaf)
    zeroed = leaf.masked_fill(mask, 0)
    zeroed.sum().backward()
    return mask.requires_grad, zeroed, leaf.grad


def non_differentiable_first_of_two_outputs(torch):         # test_mark_non_differentiable_mixed
    seen = []

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            first, second = t + 1, t + 2
            ctx.mark_non_differentiable(first)
            return first, second

        @staticmethod
        def backward(ctx, g_first, g_second):
            seen.append((bool((g_first == 0).all()), bool((g_second == 1).all())))
            return g_second

    leaf = torch.randn(5, 5, requires_grad=True)
    first, second = Two.apply(leaf)
    second.sum().backward()
    return first.requires_grad, second.requires_grad, seen, leaf.grad


def non_differentiable_output_used_later(torch):            # test_mark_non_differentiable_none
    class Frozen(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            out = t.clone()
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            return None

    leaf = torch.randn(5, 5, requires_grad=True)
    (Frozen.apply(leaf * leaf) * leaf).sum().backward()
    return leaf.grad


def same_output_returned_twice(torch):                      # test_return_duplicate
    seen = []

    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            doubled = t * 2
            return doubled, doubled

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2

    def fn(t):
        first, second = Twice.apply(t)
        seen.append(first is second)
        return first + second

    leaf = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    return torch.autograd.gradcheck(fn, [leaf]), torch.autograd.gradgradcheck(fn, [leaf]), seen[0]


def ctx_kept_after_the_graph_is_freed(torch):               # test_naughty_autograd_function_stashing_ctx
    kept = []

    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t

        @staticmethod
        def backward(ctx, grad):
            kept.append(ctx)
            return ctx.saved_tensors

    leaf = torch.zeros(1, requires_grad=True)
    out = Identity.apply(leaf)
    out.backward(retain_graph=True)
    del out
    return caught(lambda: kept[0].saved_tensors), leaf.grad


def saved_output_not_freed_early(torch):                    # test_custom_autograd_no_early_free
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            out = t ** 2
            ctx.save_for_backward(t, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            t, _ = ctx.saved_tensors
            return grad * 2 * t

    class SquareFromOutput(Square):
        @staticmethod
        def backward(ctx, grad):
            t, out = ctx.saved_tensors
            return grad * 2 * out / t

    point = torch.tensor(2).double().requires_grad_()
    seen = []
    for fn in (Square.apply, SquareFromOutput.apply):
        seen += [torch.autograd.gradcheck(fn, point), torch.autograd.gradgradcheck(fn, point)]
        out = fn(point)
        torch.autograd.grad(out, point, create_graph=True)
        seen.append(torch.autograd.grad(out, point))
    return seen


# --- gradients accumulate, reach the right places, come back the right shape ----------------------------------------

def gradient_accumulation_in_and_out_of_place(torch):       # test_accumulate_grad
    def twice(create_graph):
        leaf = torch.randn(5, 5, requires_grad=True)
        shifted = leaf + 2
        shifted.backward(torch.ones(5, 5), retain_graph=True)
        held, value = leaf.grad, leaf.grad.clone()
        shifted.backward(torch.ones(5, 5), create_graph=create_graph)
        return held, value, held is leaf.grad

    return twice(False), twice(True)      # summed into the same tensor; then a new one under create_graph


def grad_assigned_then_accumulated(torch):                  # test_accumulate_grad_tensor_reference
    seen = []
    for create_graph in (False, True):
        leaf = torch.tensor([1.5, 1.5]).requires_grad_()
        leaf.grad = torch.tensor([1.5, 1.5])
        before = leaf.grad
        leaf.backward(torch.tensor([1.5, 1.5]), create_graph=create_graph)
        seen.append((before is leaf.grad, leaf.grad))
    return seen


def broadcast_over_an_empty_dimension(torch):               # test_sum_to_with_empty_dim_grad
    empty, column = torch.rand(4, 0, requires_grad=True), torch.rand(4, 1, requires_grad=True)
    total = empty + column
    total.sum().backward()
    return tuple(total.shape), column.grad, empty.grad


def _quadratic(torch):
    x = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)
    return x, y, x ** 2 + y * x + y ** 2


def hessian_vector_by_backward(torch):                      # test_hessian_vector
    x, y, q = _quadratic(torch)
    q.backward(torch.ones(2, 2), create_graph=True)
    with torch.no_grad():
        expected = (2 * x + y, x + 2 * y)
    first = (x.grad, y.grad, expected)
    (2 * x.grad + y.grad).backward(torch.ones(2, 2))
    return first, (x.grad, expected[0] + 5), (y.grad, expected[1] + 4)


def hessian_vector_by_grad(torch):                          # test_grad
    x, y, q = _quadratic(torch)
    q.backward(torch.ones(2, 2), create_graph=True)
    combined = 2 * x.grad + y.grad
    hv = torch.autograd.grad(outputs=[combined], grad_outputs=[torch.ones(2, 2)], inputs=[x], create_graph=True)
    mismatch = caught(lambda: torch.autograd.grad(outputs=[combined], grad_outputs=[torch.ones(2)], inputs=[x],
                                                  create_graph=True))
    return (x.grad, 2 * x + y), (y.grad, x + 2 * y), hv, mismatch


def grad_through_a_chain_of_updates(torch):                 # test_grad_nonleaf
    start = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)

    def f(x):
        return x ** 2 + y * x + y ** 2

    x, seen = start, []
    for _ in range(5):
        (gx,) = torch.autograd.grad(f(x), x, grad_outputs=torch.ones(2, 2), create_graph=True)
        seen.append((y.grad, x.grad, gx, 2 * x + y))
        x = x + 0.05 * gx
    seen.append(bool(f(x).sum() > f(start).sum()))
    x.backward(torch.ones(2, 2))
    return seen, y.grad, start.grad


def grad_of_two_chunks_skips_leaf_hooks(torch):             # test_grad_nonleaf_many_outputs
    leaf = torch.randn(4, 2, requires_grad=True)
    top, bottom = leaf.chunk(2)
    called = []
    leaf.register_hook(lambda *grads: called.append(True))
    upstream = torch.randn(2, 2)
    g_top, g_bottom = torch.autograd.grad(top + 2 * bottom, [top, bottom], grad_outputs=upstream, create_graph=True)
    return (g_top, upstream), (g_bottom, upstream * 2), called, leaf.grad


def hook_on_one_unbound_element(torch):                     # test_grad_nonleaf_register_hook
    leaf = torch.randn(5, requires_grad=True)
    elements = leaf.unbind()
    last_seen = [None]
    elements[0].register_hook(lambda g: last_seen.__setitem__(0, g))
    seen = []
    for element in elements:
        element.backward()
        seen.append((last_seen[0], leaf.grad.clone(), element.grad))
    return seen


def hook_object_without_a_name(torch):                      # test_hook_with_no_name
    class CloneGrad:
        def __call__(self, grad):
            return grad.clone()

    middle = torch.randn(5, requires_grad=True).clone()
    middle.register_hook(CloneGrad())
    middle.sum().backward()
    return middle.grad_fn


def gradients_in_shards(torch):                             # test_sharded_grad
    leaves = [torch.zeros(5, 5, requires_grad=True) for _ in range(10)]
    middles = [leaf * i + leaf * leaf for i, leaf in enumerate(leaves)]
    loss = sum(m * i for i, m in enumerate(middles)).sum()
    d_middles = []
    for start in range(0, len(middles), 2):
        d_middles += torch.autograd.grad(loss, middles[start:start + 2])   # nothing saved on the way: no retain
    torch.autograd.backward(middles, d_middles)
    return [(leaf.grad, i * i * (1 + leaf)) for i, leaf in enumerate(leaves)]


def backward_of_a_tensor_without_grad(torch):               # test_backward_badcalls
    torch.ones(1).backward()


def grad_between_tensors_without_grad(torch):               # test_grad_badcalls
    plain = torch.ones(1)
    squared = plain ** 2
    errors = [caught(lambda: torch.autograd.grad(plain, squared)), caught(lambda: torch.autograd.grad(squared, plain))]
    leaf = torch.ones(1, requires_grad=True)
    return errors, torch.autograd.grad(leaf ** 2, leaf)


def node_called_with_wrong_arguments(torch):                # test_grad_fn_badcalls
    leaf = torch.ones(1, requires_grad=True)
    node = (leaf ** 2).grad_fn
    return (caught(lambda: node(leaf.detach(), leaf.detach())), caught(lambda: node()), node(leaf.detach()))


def grad_of_unreachable_inputs(torch):                      # test_grad_unreachable
    x = torch.ones(1, requires_grad=True)
    y = torch.ones(1, requires_grad=True)
    _ = (x * 2, y * 2)                    # both leaves have been used before
    first = torch.autograd.grad(x * 2, [x, y], allow_unused=True)
    fresh = torch.ones(1, requires_grad=True)
    second = torch.autograd.grad(x * 2, [x, fresh], allow_unused=True)
    refused = caught(lambda: torch.autograd.grad(x * 2, [x, y], allow_unused=False))
    return first, second, refused


def hooks_counted_removed_and_replacing(torch):             # test_hooks
    x = torch.ones(5, 5, requires_grad=True)
    y = (torch.ones(5, 5) * 4).requires_grad_(True)
    total = [0]

    def count(step):
        def hook(grad):
            total[0] += step
        return hook

    z = x ** 2 + x * 2 + x * y + y
    x.register_hook(count(0))
    by_one = z.register_hook(count(1))
    counts = []
    z.backward(torch.ones(5, 5), retain_graph=True)
    counts.append(total[0])
    by_two = z.register_hook(count(2))
    z.backward(torch.ones(5, 5), retain_graph=True)
    counts.append(total[0])
    by_two.remove()
    z.backward(torch.ones(5, 5), retain_graph=True)
    counts.append(total[0])
    by_one.remove()
    z.register_hook(lambda g: g.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5), retain_graph=True)
    doubled = (y.grad.clone(), (x + 1) * 2)
    y.register_hook(lambda g: g.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5))
    return counts, doubled, (y.grad, (x + 1) * 4)


def hooks_on_outputs_of_a_function_passing_none(torch):     # test_hook_none
    class FirstOnly(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            called.append(tuple(ctx.needs_input_grad))      # (True, False)
            return a, b

        @staticmethod
        def backward(ctx, g_a, g_b):
            return g_a, None

    called = []
    a, b = torch.randn(5, 5, requires_grad=True), torch.randn(5, 5)
    out_a, out_b = FirstOnly.apply(a, b)
    for out in (out_a, out_b):
        out.register_hook(lambda g: called.append(g is not None))
    (out_b + out_a).sum().backward()
    return called, a.grad


def retain_grad_repeated_and_on_a_leaf(torch):              # test_retain_grad
    leaf = torch.rand(1, 3, requires_grad=True)
    middle = leaf * 3
    loss = (middle * middle).sum()
    middle.retain_grad()
    middle.retain_grad()
    loss.backward(retain_graph=True)
    first = (middle * 2, middle.grad.clone())
    loss.backward(retain_graph=True)
    second = (middle * 4, middle.grad.clone())
    with torch.no_grad():
        leaf.grad.zero_()
    leaf.retain_grad()
    leaf.retain_grad()
    loss.backward()
    return first, second, (leaf * 18, leaf.grad)


def backward_matches_the_formulas(torch):                   # test_backward
    v = torch.randn(5, 5, requires_grad=True)
    x = torch.randn(5, 5, requires_grad=True)
    y = (torch.rand(5, 5) + 0.1).requires_grad_(True)
    z = torch.randn(5, 5, requires_grad=True)
    upstream = torch.randn(5, 5)
    v.backward(upstream)
    (x + y * z + 4 * z ** 2 * x / y).backward(upstream)
    return ((v.grad, upstream), (x.grad, (4 * z.pow(2) / y + 1) * upstream),
            (y.grad, (z - 4 * x * z.pow(2) / y.pow(2)) * upstream), (z.grad, (8 * x * z / y + y) * upstream))


def backward_of_two_roots(torch):                           # test_multi_backward
    x, y, q, a, b = (torch.randn(5, 5, requires_grad=True) for _ in range(5))
    shared = q * 2
    first, second = x + y + shared, a * b + shared
    g1, g2 = torch.randn(5, 5), torch.randn(5, 5)
    torch.autograd.backward([first, second], [g1, g2])
    return (x.grad, g1), (y.grad, g1), (a.grad, g2 * b), (b.grad, g2 * a), (q.grad, (g1 + g2) * 2)


def backward_of_a_root_without_grad(torch):                 # test_multi_backward_no_grad
    x, y = torch.randn(5, 5, requires_grad=True), torch.randn(5, 5)
    torch.autograd.backward([x + y, y * 2], [torch.ones(5, 5), torch.ones(5, 5)])


def backward_of_dependent_roots(torch):                     # test_dependent_backward
    x = torch.randn(10, requires_grad=True)
    squared = x ** 2
    sixth = squared ** 3
    g_sq, g_six = torch.randn(10), torch.randn(10)
    torch.autograd.backward([squared, sixth], [g_sq, g_six])
    return x.grad, 2 * x * g_sq + 6 * x.pow(5) * g_six


def same_root_twice(torch):                                 # test_duplicate_backward_root
    a, b = torch.randn(5, 5, requires_grad=True), torch.randn(5, 5, requires_grad=True)
    product = a * b
    upstream = torch.randn_like(product)
    torch.autograd.backward([product, product], [upstream, upstream])
    return (a.grad, b * upstream * 2), (b.grad, a * upstream * 2)


def non_scalar_root_without_gradient(torch):                # test_backward_no_grad
    torch.autograd.backward([torch.randn(5, 5, requires_grad=True) + 2], [None])


def second_backward_with_and_without_saved_values(torch):   # test_backward_twice_with/without_saved_values
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    ones = torch.tensor([1, 1, 1], dtype=torch.double)
    scattered = torch.zeros(3, dtype=torch.double)
    scattered[[1, 2]] = b[[1, 1]]
    scattered.backward(ones)
    first = (b.grad.clone(), caught(lambda: scattered.backward(ones)))
    c = torch.randn(3, requires_grad=True, dtype=torch.double)
    shifted = c + 1
    shifted.backward(ones)
    shifted.backward(ones)                # add saves nothing: a second backward is fine
    return first, c.grad


def next_functions_of_sums(torch):                          # test_next_functions
    x, y = torch.randn(5, 5, requires_grad=True), torch.randn(5, 5, requires_grad=True)
    total = x + y
    links = total.grad_fn.next_functions
    shifted = total + 5
    return ([(type(node).__name__, index) for node, index in links],
            len(shifted.grad_fn.next_functions), shifted.grad_fn.next_functions[0][0] is total.grad_fn,
            shifted.grad_fn.next_functions[1][0])


def stack_and_unbind(torch):                                # test_stack, test_unbind
    parts = [torch.randn(10, 10, requires_grad=True) for _ in range(3)]
    upstream = torch.randn(3, 10, 10)
    torch.stack(parts, 0).backward(upstream)
    seen = [[(p.grad, upstream[i]) for i, p in enumerate(parts)]]
    whole = torch.randn(3, 10, 10, requires_grad=True)
    torch.autograd.backward(list(whole.unbind()), upstream.unbind())
    seen.append((whole.grad, upstream))
    for i in range(3):                    # a gradient for one piece only: zeros for the others
        whole = torch.randn(3, 10, 10, requires_grad=True)
        (g,) = torch.autograd.grad(whole.unbind()[i], whole, upstream[i])
        seen.append(g)
    return seen


def unused_chunks(torch):                                   # test_unused_output
    leaf = torch.randn(10, 10, requires_grad=True)
    (leaf.chunk(5)[2] * 4 + 2).sum().backward()
    first = leaf.grad.clone()
    with torch.no_grad():
        leaf.grad.zero_()
    upstream = torch.randn(2, 10)
    leaf.chunk(5)[0].backward(upstream)
    return first, leaf.grad, upstream


def gradchecks_of_select_sum_and_fill(torch):               # test_select_sum, test_fill
    vector = torch.randn(10, dtype=torch.double, requires_grad=True)
    grid = torch.randn(4, 5, dtype=torch.double, requires_grad=True)

    def picked(t):
        return t.select(0, 1).sum()

    def filled(t):
        out = t.clone()
        out.fill_(2)
        return out

    return [(torch.autograd.gradcheck(fn, [arg]), torch.autograd.gradgradcheck(fn, [arg]))
            for fn, arg in ((picked, vector), (filled, grid))]


# --- grad modes -------------------------------------------------------------------------------------------------------

def no_grad_block_and_decorator(torch):                     # test_no_grad
    x, y = torch.ones(5, 5, requires_grad=True), torch.ones(5, 5) * 4
    with torch.no_grad():
        inside = x + y

    @torch.no_grad()
    def add(p, q):
        return p + q

    decorated = add(x, y)
    seen = [(t.requires_grad, t.grad_fn, caught(lambda: t.backward(torch.ones(5, 5)))) for t in (inside, decorated)]
    with torch.no_grad():
        seen.append(torch.is_grad_enabled())
        add(x, y)
        seen.append(torch.is_grad_enabled())   # the decorator restores the mode it found
    return seen


def grad_mode_decorated_generators(torch):                  # test_set_grad_generator_functions
    seen = []

    @torch.no_grad()
    def quiet():
        for i in range(10):
            seen.append(torch.is_grad_enabled())
            yield i

    @torch.enable_grad()
    def loud():
        for i in range(10):
            seen.append(torch.is_grad_enabled())
            yield i

    with torch.enable_grad():
        for _ in quiet():
            seen.append(torch.is_grad_enabled())   # the caller's mode between the generator's steps
    with torch.no_grad():
        for _ in loud():
            seen.append(torch.is_grad_enabled())
    return seen


# --- indexing -------------------------------------------------------------------------------------------------------

def gradients_of_indexing(torch):                           # test_indexing
    values = torch.arange(1.0, 17).view(4, 4)
    leaf = torch.autograd.Variable(values, requires_grad=True)
    seen = []
    for index in (1, (1, 1), slice(1, None), slice(None, 2), (slice(None, 2), 2), (slice(1, 2), 2),
                  (1, slice(2, None)), (slice(None), slice(2, None)), torch.LongTensor([0, 2]),
                  (Ellipsis, slice(2, None)), ([0], [0]), ([1, 2, 3], [0]), ([1, 2], [2, 1])):
        if leaf.grad is not None:
            with torch.no_grad():
                leaf.grad.zero_()
        picked = leaf[index]
        picked.sum().backward()
        seen.append((values[index], picked, leaf.grad.clone()))
    return seen


def indexing_with_repeated_indices(torch):                  # test_indexing_duplicates
    grads = []
    for index in (torch.LongTensor([1, 1, 3, 2, 1, 2]), [[1, 1, 3, 2, 1, 2], [0]]):
        leaf = torch.autograd.Variable(torch.arange(1.0, 17).view(4, 4), requires_grad=True)
        leaf[index].sum().backward()
        grads.append(leaf.grad)           # repeated positions add up
    return grads


def masked_self_assignment_then_backward(torch):            # test_index_backward_does_not_save_tensor
    mask_source = torch.tensor([1.0, 0, 0])
    leaf = torch.zeros(3, requires_grad=True)
    work = leaf + 0
    work[mask_source != 0] = work[mask_source != 0]
    work.backward(torch.zeros_like(work))
    return leaf.grad, work.grad_fn


# --- requires_grad and in-place -------------------------------------------------------------------------------------

def requires_grad_spreads_through_ops(torch):               # test_requires_grad
    plain = torch.randn(5, 5) + torch.randn(5, 5)
    w = torch.randn(5, 5, requires_grad=True)
    total = plain + w
    total.backward(torch.ones(5, 5))
    return plain.requires_grad, total.requires_grad, w.grad


def requires_grad_underscore(torch):                        # test_requires_grad_
    plain, leaf = torch.randn(5, 5), torch.randn(5, 5, requires_grad=True)
    seen = []
    for flag in (None, True):
        for t in (plain, leaf):
            same = (t.requires_grad_() if flag is None else t.requires_grad_(flag)) is t
            seen.append((same, t.requires_grad))
    product = plain * leaf
    seen.append(caught(lambda: product.requires_grad_(False)))     # not on a non-leaf
    seen += [(product.requires_grad_(flag) is product, product.requires_grad) for flag in (True, True)]
    seen += [(t.requires_grad_(False) is t, t.requires_grad) for t in (plain, leaf)]
    return seen


def in_place_add_of_a_tensor_that_requires_grad(torch):     # test_requires_grad_inplace
    seen = []
    for start in (torch.randn(5, 5), torch.randn(5, 5) + 0):
        start += torch.randn(5, 5, requires_grad=True)
        seen.append((start.requires_grad, start.grad_fn))
    return seen


def in_place_before_and_after_requires_grad(torch):         # test_no_requires_grad_inplace
    grads = []
    for through_view in (False, True):
        t = torch.randn(2, 3)
        (t[:] if through_view else t).add_(5)        # fine while nothing requires grad
        t.requires_grad = True
        t.sum().backward()
        grads.append(t.grad)
    leaf = torch.randn(2, 3)
    view = leaf[:]
    leaf.requires_grad = True
    return grads, caught(lambda: leaf.add_(5)), caught(lambda: view.add_(5))


def deleting_grad_and_clearing_data(torch):                 # test_attribute_deletion
    leaf = torch.randn((5, 5), requires_grad=True)
    del leaf.grad
    return leaf.grad, caught(lambda: setattr(leaf, "data", None))


def in_place_changes_and_saved_tensors(torch):              # test_inplace
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.autograd.Variable(torch.ones(5, 5) * 4, requires_grad=True)
    ones = torch.ones(5, 5)
    seen = []

    z = x * y
    summed, product = z + y, z * y
    z.add_(2)
    summed.backward(ones, retain_graph=True)          # add saved nothing: fine
    seen.append(caught(lambda: product.backward(ones)))    # mul saved z: refused

    z = x * y
    product, summed = z * y, z + y
    result = z.add_(y)
    result.backward(ones, retain_graph=True)
    summed.backward(ones, retain_graph=True)
    seen.append(caught(lambda: product.backward(ones)))

    with torch.no_grad():
        x.grad.zero_()
    z = x / 2 + y / 8
    product, summed = z * y, z + y
    version = z._version
    grown = z.exp_()
    seen.append(z._version != version)
    summed.backward(ones, retain_graph=True)
    seen.append(x.grad.clone())
    grown.backward(ones, retain_graph=True)
    seen.append((x.grad.clone(), (1 + math.e) / 2))
    seen.append(caught(lambda: product.backward(ones)))

    leaf = torch.ones(5, 5, requires_grad=True)
    copy = leaf.clone()
    copy.add_(10)
    seen.append(copy)
    (copy + 2).backward(ones)
    seen.append(leaf.grad)
    later = copy * (copy + 2)
    copy.add_(2)
    seen.append(caught(lambda: later.backward(ones)))
    return seen


def no_save_where_backward_needs_none(torch):               # test_no_unnecessary_save
    mu = torch.ones(1, requires_grad=True)
    buffer = torch.empty(1)
    loss = 0
    for i in range(3):
        buffer.detach_()
        buffer.copy_(mu + i)
        loss += (buffer * torch.tensor([float(i)])).sum()   # mul by a constant: the buffer itself is not needed
    loss.backward()
    return loss, mu.grad


def detach_and_detach_(torch):                              # test_detach
    x = torch.randn(10, 10, requires_grad=True)
    cut = (x + 2).detach()
    seen = [cut.requires_grad, (cut * 4 + 2).requires_grad]
    x = torch.randn(10, 10, requires_grad=True)
    cut = (x * 2).detach()
    seen += [cut.requires_grad, cut.grad_fn]
    (x + cut).sum().backward()
    seen.append(x.grad)                   # ones: the detached path gives nothing
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=True)
    doubled = x * 2
    (y + doubled).sum().backward(retain_graph=True)
    doubled.detach_()
    seen.append(doubled.requires_grad)
    (y + doubled).sum().backward()
    seen += [x.grad, y.grad]
    view = x.narrow(0, 1, 4)
    seen.append(caught(lambda: view.detach_()))
    return seen


ALL = snippets(
    custom_function_with_a_number_argument, custom_function_once_differentiable, custom_function_returning_its_input,
    custom_backward_returning_none, custom_backward_raising, custom_backward_wrong_shape,
    output_nr_of_outputs_and_saved_outputs, custom_function_under_no_grad, non_differentiable_mask_output,
    non_differentiable_first_of_two_outputs, non_differentiable_output_used_later, same_output_returned_twice,
    ctx_kept_after_the_graph_is_freed, saved_output_not_freed_early, gradient_accumulation_in_and_out_of_place,
    grad_assigned_then_accumulated, broadcast_over_an_empty_dimension, hessian_vector_by_backward,
    hessian_vector_by_grad, grad_through_a_chain_of_updates, grad_of_two_chunks_skips_leaf_hooks,
    hook_on_one_unbound_element, hook_object_without_a_name, gradients_in_shards, backward_of_a_tensor_without_grad,
    grad_between_tensors_without_grad, node_called_with_wrong_arguments, grad_of_unreachable_inputs,
    hooks_counted_removed_and_replacing, hooks_on_outputs_of_a_function_passing_none,
    retain_grad_repeated_and_on_a_leaf, backward_matches_the_formulas, backward_of_two_roots,
    backward_of_a_root_without_grad, backward_of_dependent_roots, same_root_twice, non_scalar_root_without_gradient,
    second_backward_with_and_without_saved_values, next_functions_of_sums, stack_and_unbind, unused_chunks,
    gradchecks_of_select_sum_and_fill, no_grad_block_and_decorator, grad_mode_decorated_generators,
    gradients_of_indexing, indexing_with_repeated_indices, masked_self_assignment_then_backward,
    requires_grad_spreads_through_ops, requires_grad_underscore, in_place_add_of_a_tensor_that_requires_grad,
    in_place_before_and_after_requires_grad, deleting_grad_and_clearing_data, in_place_changes_and_saved_tensors,
    no_save_where_backward_needs_none, detach_and_detach_,
)


@pytest.mark.parametrize("scenario", ALL)
def test_scenario(scenario):
    check(scenario)
