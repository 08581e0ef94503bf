"""einsum, recorded as torch records it, and bmm (the batched product it reduces to).

torch's einsum (aten/src/ATen/native/Linear.cpp) is not one autograd node: it is a sequence of ops
(diagonal and movedim for a repeated label, unsqueeze and permute to line every operand up, sums,
and for each pair of operands a product written as permute, reshape, bmm, view, permute). This
module follows the same steps with teachgrad's ops, so the graph, its node names and the gradients
are torch's. The steps and error messages mirror torch's; the code is ours.
"""
import torch

from ..core.function import Function
from .shape import Diagonal, Permute, Unsqueeze

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS   # the code of "..." among the label codes 0..51


# saves: in the order torch packs them
class Bmm(Function, node="BmmBackward0", saves=("mat2", "self")):
    """Batched matrix product (b, n, m) @ (b, m, p): the gradients are products with the transposes."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b if ctx.needs_input_grad[0] else None, a if ctx.needs_input_grad[1] else None)
        return torch.bmm(a, b)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        grad_a = grad.bmm(b.mH) if ctx.needs_input_grad[0] else None   # (mH: the conjugate transpose)
        grad_b = a.mH.bmm(grad) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        return ta.bmm(b) + a.bmm(tb)


def movedim(a, source, destination):
    """a with dimension `source` moved to `destination` (the others keep their order): a Permute, as in torch."""
    n = a.dim()
    source, destination = source % n, destination % n
    order = [d for d in range(n) if d != source]
    order.insert(destination, source)
    return Permute.apply(a, tuple(order))


def _code(label):
    """A label letter as torch numbers it: A-Z are 0-25, a-z are 26-51."""
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _letter(code):
    return chr(code + ord("A")) if code < _LETTERS else chr(code - _LETTERS + ord("a"))


def _is_label(c):
    return c.isascii() and c.isalpha()


def _parse_inputs(lhs, num_ops):
    """The label codes of each operand (with _ELLIPSIS where "..." stands)."""
    op_labels = [[] for _ in range(num_ops)]
    current, has_ellipsis, i = 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if has_ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part of any ellipsis")
            i += 2
            op_labels[current].append(_ELLIPSIS)
            has_ellipsis = True
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            has_ellipsis = False
        elif c != " ":
            if not _is_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            op_labels[current].append(_code(c))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def einsum(equation, *operands, path=None):
    """Sum of products of the operands' elements, as the equation's labels say ("ij,jk->ik" is a @ b)."""
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_inputs(lhs, num_ops)

    # how often each label appears, and how many dims "..." covers at most
    label_count, ell_num_dim = [0] * _ELLIPSIS, 0
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        ndims, nlabels = operand.dim(), len(labels)
        has_ellipsis = _ELLIPSIS in labels
        if has_ellipsis:
            nlabels -= 1
            ell_num_dim = max(ell_num_dim, ndims - nlabels)
        for label in labels:
            if label != _ELLIPSIS:
                label_count[label] += 1
        if not (nlabels <= ndims if has_ellipsis else nlabels == ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) "
                + ("is more than the number of dimensions (" if has_ellipsis else "does not match the number of dimensions (")
                + f"{ndims}) for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given"))

    # where each label goes in the lined-up shape: the output's dims first, then the ones summed over
    label_index, perm_index, ell_index, ell_in_output = [-1] * _ELLIPSIS, 0, 0, False
    if arrow < 0:   # implicit output: "..." and the labels seen once, in alphabetical order (A-Z, then a-z)
        perm_index, ell_in_output = ell_num_dim, True
        for label in range(_ELLIPSIS):
            if label_count[label] == 1:
                label_index[label] = perm_index
                perm_index += 1
    else:
        rhs, i = equation[arrow + 2:], 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index, perm_index, ell_in_output = perm_index, perm_index + ell_num_dim, True
            elif c != " ":
                if not _is_label(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the equation "
                                       "string, subscripts must be in [a-zA-Z]")
                label = _code(c)
                if not (label_count[label] > 0 and label_index[label] == -1):
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if label_index[label] > -1
                        else " does not appear in the equation for any input operand"))
                label_index[label] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index, perm_index = perm_index, perm_index + ell_num_dim
    for label in range(_ELLIPSIS):
        if label_count[label] > 0 and label_index[label] == -1:
            label_index[label] = perm_index
            perm_index += 1

    # line every operand up: diagonals for repeated labels, size-1 dims for missing ones, one permute
    label_size, ell_sizes, dim_counts, ops = [1] * _ELLIPSIS, [1] * ell_num_dim, [0] * perm_index, []
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        op, permutation, dim = operand, [-1] * perm_index, 0
        for label in labels:
            if label == _ELLIPSIS:
                ndim = operand.dim() - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op.shape[dim] != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == op.shape[dim]):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size {op.shape[dim]} "
                                f"which does not broadcast with previously seen ellipsis with size {ell_sizes[j]} for "
                                "the respective dimension")
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_index[label]] == -1:
                if op.shape[dim] != 1:
                    if not (label_size[label] == 1 or label_size[label] == op.shape[dim]):
                        raise RuntimeError(
                            f"einsum(): subscript {_letter(label)} has size {op.shape[dim]} for operand {i} which does "
                            f"not broadcast with previously seen size {label_size[label]}")
                    label_size[label] = op.shape[dim]
                    dim_counts[label_index[label]] += 1
                permutation[label_index[label]] = dim
                dim += 1
            else:   # a repeated label: its diagonal
                previous = permutation[label_index[label]]
                if op.shape[dim] != op.shape[previous]:
                    raise RuntimeError(f"einsum(): subscript {_letter(label)} is repeated for operand {i} but the sizes "
                                       f"don't match, {op.shape[dim]} != {op.shape[previous]}")
                op = movedim(Diagonal.apply(op, 0, previous, dim), -1, previous)
        for k in range(perm_index):
            if permutation[k] == -1:
                op = Unsqueeze.apply(op, dim)   # (ops, not methods: an operand may be a torch tensor)
                permutation[k] = dim
                dim += 1
        ops.append(Permute.apply(op, tuple(permutation)))

    # contract two operands at a time: left to right, or in the order `path` gives
    steps = iter(path or ())
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = next(steps), next(steps)
            i, j = min(i, j), max(i, j)
            if not (i != j and i >= 0 and j < len(ops)):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j})" + (
                    ") cannot contract an operand with itself" if i == j else ") operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_dims, b_dims = [], [], []
        for dim in range(out_num_dim, perm_index):
            in_a, in_b = a.shape[dim] != 1, b.shape[dim] != 1
            if in_a and in_b:
                if a.shape[dim] != b.shape[dim]:
                    raise RuntimeError("non-broadcast dimensions must match")
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:      # no later operand has it: sum it in this product
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:        # only one of the two has it, and no one else: sum it now
                if in_a:
                    a_dims.append(dim)
                    dim_counts[dim] = 0
                elif in_b:
                    b_dims.append(dim)
                    dim_counts[dim] = 0
        if a_dims:
            a = a.sum(a_dims, keepdim=True)
        if b_dims:
            b = b.sum(b_dims, keepdim=True)
        product = sumproduct_pair(a, b, sum_dims)
        if path is not None:
            ops.append(product)
        else:
            ops.insert(0, product)

    result = ops[0]
    if perm_index - out_num_dim > 0:   # the summed dims: size 1 after a product, still to sum for one operand
        if num_ops > 1:
            return result.view(list(result.shape[:out_num_dim]))
        return result.sum(list(range(out_num_dim, perm_index)))
    return result


def sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) as one bmm: the dims both have as the batch, the summed
    ones as the inner dimension (torch's sumproduct_pair; the operands are lined up already)."""
    if left.dim() != right.dim():
        raise RuntimeError("number of dimensions must match")
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        in_left, in_right = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if in_left and in_right:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif in_left:
                left = left.sum(i, keepdim=True)
            elif in_right:
                right = right.sum(i, keepdim=True)
        elif in_left and in_right:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif in_left:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:   # the right operand's dims come first in the output: swap, as torch
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    out_permutation = [0] * len(out_size)
    for position, d in enumerate(lro + lo + list(sum_dims) + ro):
        out_permutation[d] = position
    left = Permute.apply(left, tuple(lro + lo + list(sum_dims) + ro)).reshape(lro_size, lo_size, sum_size)
    right = Permute.apply(right, tuple(lro + list(sum_dims) + ro + lo)).reshape(lro_size, sum_size, ro_size)
    return Permute.apply(Bmm.apply(left, right).view(out_size), tuple(out_permutation))
