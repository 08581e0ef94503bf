"""torch.linalg's ops: determinants, inverses and solves, the factorizations (Cholesky, QR, SVD, eigh), matrix_exp,
least squares and the pseudo-inverse, cross products. Each backward is torch's formula (tools/autograd/
derivatives.yaml, torch/csrc/autograd/FunctionsManual.cpp), derived from differentials: write dY in terms of dA
(that is the jvp), then read the gradient off  <gY, dY> = <gA, dA>  (with <X, Y> = sum(X * Y) = tr(Xᵀ Y)).

Real matrices only: the transposes below are torch's conjugate transposes (mH) on real numbers. Every op works on
the last two dims and takes any batch of matrices in front (batching="matrices").

The formulas call torch.linalg's functions (`torch.linalg.solve(A, B)`): on the tensors of a first-order backward
that is torch's kernel; on the Variables of a create_graph backward, torch hands the call to teachgrad's function of
the same name (teachgrad/api/interop.py), which records it, so the same line gives second derivatives.

Guarded by tests/test_linalg.py (each op and the learners' programs against torch: values, gradients, second
derivatives, tangents, node names, batches, errors).
"""
import torch

from ..core.function import Function


def _t(x):
    """The transpose of the last two dims (torch's mH, on real numbers)."""
    return x.transpose(-2, -1)


def _trace(x):
    return x.diagonal(0, -2, -1).sum(-1)


def _diag(values):
    """A batch of diagonal matrices with these values on the diagonal (torch's diag_embed)."""
    return values.unsqueeze(-1) * torch.eye(values.shape[-1], dtype=values.dtype, device=values.device)


def _expand_scalar(x):
    """A batch of numbers as a batch of 1×1 matrices, to multiply a batch of matrices."""
    return x.unsqueeze(-1).unsqueeze(-1)


# --- the determinant ---------------------------------------------------------------------------------------------

def _cofactor(A):
    """The cofactor matrix of A, even where A is singular (torch's det_backward for such A): with A = U S Vᵀ,
    cof(A) = det(U) det(V) U diag(prod of the other singular values) Vᵀ."""
    U, S, Vh = torch.linalg.svd(A)
    others = torch.stack([torch.cat([S[..., :i], S[..., i + 1:]], -1).prod(-1) for i in range(S.shape[-1])], -1)
    sign = torch.linalg.det(U) * torch.linalg.det(Vh)
    return _expand_scalar(sign) * (U * others.unsqueeze(-2)).matmul(Vh)


class LinalgDet(Function, node="LinalgDetBackward0", saves=("A", "result"), batching="matrices",
                function="det", method="det", out_variant=False):
    """det(A). d det = det · tr(A⁻¹ dA) (Jacobi's formula), so gA = g · det · A⁻ᵀ: the cofactor matrix times g.
    Where A is singular (det 0) the cofactor matrix is read from the SVD instead, as torch does."""

    @staticmethod
    def forward(ctx, A):
        result = torch.linalg.det(A)
        ctx.save_for_backward(A, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, det = ctx.saved_tensors
        if (det.data.abs() < 100 * torch.finfo(det.dtype).eps).any():
            return _expand_scalar(grad) * _cofactor(A)
        return _expand_scalar(grad * det) * _t(torch.linalg.inv(A))

    @staticmethod
    def jvp(ctx, tA):
        A, det = ctx._primals[0], ctx._result
        return det * _trace(torch.linalg.solve(A, tA))


class LinalgSlogdet(Function, node="LinalgSlogdetBackward0", saves=("A",), batching="matrices"):
    """(sign, log|det A|). d log|det| = tr(A⁻¹ dA), so gA = g · A⁻ᵀ; the sign is flat (its gradient is dropped)."""

    @staticmethod
    def forward(ctx, A):
        sign, logabsdet = torch.linalg.slogdet(A)
        ctx.save_for_backward(A)
        ctx.set_materialize_grads(False)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad_logabsdet):
        if grad_logabsdet is None:
            return None
        A, = ctx.saved_tensors
        return _expand_scalar(grad_logabsdet) * _t(torch.linalg.inv(A))

    @staticmethod
    def jvp(ctx, tA):
        A, (sign, _) = ctx._primals[0], ctx._result
        return torch.zeros_like(sign), _trace(torch.linalg.solve(A, tA))


# --- inverses and solves -----------------------------------------------------------------------------------------

class LinalgInv(Function, node="LinalgInvExBackward0", saves=("inverse",), batching="matrices"):
    """(A⁻¹, info) as torch.linalg.inv_ex (info > 0: A is singular; linalg.inv then raises torch's error).
    d(A⁻¹) = -A⁻¹ dA A⁻¹, so gA = -A⁻ᵀ g A⁻ᵀ."""

    @staticmethod
    def forward(ctx, A):
        inverse, info = torch.linalg.inv_ex(A)
        ctx.mark_non_differentiable(info)
        ctx.save_for_backward(inverse)
        return inverse, info

    @staticmethod
    def backward(ctx, grad, _grad_info):
        inverse, = ctx.saved_tensors
        return -_t(inverse).matmul(grad.matmul(_t(inverse)))

    @staticmethod
    def jvp(ctx, tA):
        inverse = ctx._result[0]
        return -inverse.matmul(tA).matmul(inverse), None


def _is_vector_rhs(A, B):
    """Whether torch.linalg.solve reads B as a (batch of) vector(s): B is 1-D, or A's batch of vectors."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])


class LinalgSolve(Function, node="LinalgSolveExBackward0", saves=("A", "result"), batching="matrices"):
    """(X, info) as torch.linalg.solve_ex: X = A⁻¹ B (left) or X = B A⁻¹ (left=False).

    left:  A X = B, so A dX = dB - dA X:   gB = A⁻ᵀ gX,  gA = -gB Xᵀ.
    right: X A = B, so dX A = dB - X dA:   gB = gX A⁻ᵀ,  gA = -Xᵀ gB.
    A vector B is a one-column matrix throughout."""

    @staticmethod
    def forward(ctx, A, B, left):
        X, info = torch.linalg.solve_ex(A, B, left=left)
        ctx.left, ctx.vector = left, _is_vector_rhs(A, B)
        ctx.mark_non_differentiable(info)
        ctx.save_for_backward(A, X)
        return X, info

    @staticmethod
    def backward(ctx, grad, _grad_info):
        A, X = ctx.saved_tensors
        if ctx.vector:
            grad, X = grad.unsqueeze(-1), X.unsqueeze(-1)
        gB = torch.linalg.solve(_t(A), grad, left=ctx.left)
        gA = -gB.matmul(_t(X)) if ctx.left else -_t(X).matmul(gB)
        if ctx.vector:
            gB = gB.squeeze(-1)
        return (gA if ctx.needs_input_grad[0] else None), (gB if ctx.needs_input_grad[1] else None), None

    @staticmethod
    def jvp(ctx, tA, tB, _left):
        A, X = ctx._primals[0], ctx._result[0]
        if ctx.vector:
            tB, X = tB.unsqueeze(-1), X.unsqueeze(-1)
        tX = torch.linalg.solve(A, tB - tA.matmul(X)) if ctx.left else \
            torch.linalg.solve(A, tB - X.matmul(tA), left=False)
        return (tX.squeeze(-1) if ctx.vector else tX), None


def _triangle(x, upper, unitriangular):
    """The part of x a triangular matrix has (without its diagonal when that is all ones)."""
    return x.triu(int(unitriangular)) if upper else x.tril(-int(unitriangular))


class LinalgSolveTriangular(Function, node="LinalgSolveTriangularBackward0", saves=("self", "result"),
                            batching="matrices"):
    """X = A⁻¹ B (or B A⁻¹) for a triangular A: solve's formulas, and A's gradient keeps only A's triangle (the
    other entries were never read)."""

    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        X = torch.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
        ctx.upper, ctx.left, ctx.unitriangular = upper, left, unitriangular
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        gB = torch.linalg.solve_triangular(_t(A), grad, upper=not ctx.upper, left=ctx.left,
                                           unitriangular=ctx.unitriangular)
        gA = -gB.matmul(_t(X)) if ctx.left else -_t(X).matmul(gB)
        gA = _triangle(gA, ctx.upper, ctx.unitriangular)
        return (gA if ctx.needs_input_grad[0] else None), (gB if ctx.needs_input_grad[1] else None), None, None, None

    @staticmethod
    def jvp(ctx, tA, tB, *_):
        A, X = ctx._primals[0], ctx._result
        tA = _triangle(tA, ctx.upper, ctx.unitriangular)
        rhs = tB - tA.matmul(X) if ctx.left else tB - X.matmul(tA)
        return torch.linalg.solve_triangular(A, rhs, upper=ctx.upper, left=ctx.left, unitriangular=ctx.unitriangular)


# --- Cholesky ----------------------------------------------------------------------------------------------------

def _phi(x):
    """The lower triangle of x with its diagonal halved: what dL = L Φ(L⁻¹ dA L⁻ᵀ) keeps."""
    return x.tril() - 0.5 * _diag(x.diagonal(0, -2, -1))


class LinalgCholesky(Function, node="LinalgCholeskyExBackward0", saves=("L",), batching="matrices"):
    """(L, info) as torch.linalg.cholesky_ex: L with A = L Lᵀ (or U = Lᵀ with upper=True).

    dA = dL Lᵀ + L dLᵀ, so L⁻¹ dA L⁻ᵀ = L⁻¹dL + (L⁻¹dL)ᵀ with L⁻¹dL lower triangular: dL = L Φ(L⁻¹ dA L⁻ᵀ).
    Its adjoint (Iain Murray, arXiv 1602.07527): gA = L⁻ᵀ sym(tril(Lᵀ gL)) L⁻¹, where sym(X) = ½ (X + Xᵀ) for a
    lower-triangular X (its diagonal then halved once)."""

    @staticmethod
    def forward(ctx, A, upper):
        L, info = torch.linalg.cholesky_ex(A, upper=upper)   # info > 0: not positive-definite
        ctx.upper = upper
        ctx.mark_non_differentiable(info)
        ctx.save_for_backward(L)
        return L, info

    @staticmethod
    def backward(ctx, grad, _grad_info=None):
        L, = ctx.saved_tensors
        if ctx.upper:
            L, grad = _t(L), _t(grad)
        gA = _t(L).matmul(grad).tril()
        gA = 0.5 * (gA + _t(gA.tril(-1)))
        gA = torch.linalg.solve_triangular(_t(L), gA, upper=True, left=True)
        return torch.linalg.solve_triangular(L, gA, upper=False, left=False), None

    @staticmethod
    def jvp(ctx, tA, _upper):
        L = _t(ctx._result[0]) if ctx.upper else ctx._result[0]
        inner = torch.linalg.solve_triangular(L, tA, upper=False, left=True)
        inner = torch.linalg.solve_triangular(_t(L), inner, upper=True, left=False)
        tL = L.matmul(_phi(inner))
        return (_t(tL) if ctx.upper else tL), None


class Cholesky(LinalgCholesky, node="CholeskyBackward0", saves=("result",), batching="matrices"):
    """torch.cholesky (the older name, deprecated in torch): the same factor and formula, under its own node, and
    one output."""

    @staticmethod
    def forward(ctx, A, upper):
        L = torch.cholesky(A, upper=upper)
        ctx.upper = upper
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def jvp(ctx, tA, _upper):
        raise NotImplementedError("Trying to use forward AD with cholesky that does not support it because it has "
                                  "not been implemented yet (in torch either: use linalg.cholesky, which has it).")


class CholeskySolve(Function, node="CholeskySolveBackward0", saves=("self", "input2", "result"),
                    batching="matrices"):
    """X = (L Lᵀ)⁻¹ B from the Cholesky factor L (torch.cholesky_solve(B, L); Uᵀ U with upper=True).

    With A = L Lᵀ: gB = A⁻¹ gX, and gA = -gB Xᵀ, which reaches L through dA = dL Lᵀ + L dLᵀ:
    gL = -(gB Xᵀ + X gBᵀ) L  (upper: gU = -U (gB Xᵀ + X gBᵀ))."""

    @staticmethod
    def forward(ctx, B, L, upper):
        X = torch.cholesky_solve(B, L, upper=upper)
        ctx.upper = upper
        ctx.save_for_backward(B, L, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        B, L, X = ctx.saved_tensors
        gB = torch.cholesky_solve(grad, L, upper=ctx.upper)
        if not ctx.needs_input_grad[1]:
            return gB, None, None
        common = gB.matmul(_t(X))
        common = common + _t(common)
        gL = -L.matmul(common) if ctx.upper else -common.matmul(L)
        return (gB if ctx.needs_input_grad[0] else None), gL, None

    @staticmethod
    def jvp(ctx, tB, tL, _upper):
        L, X = ctx._primals[1], ctx._result
        tA = _t(tL).matmul(L) + _t(L).matmul(tL) if ctx.upper else tL.matmul(_t(L)) + L.matmul(_t(tL))
        return torch.cholesky_solve(tB - tA.matmul(X), L, upper=ctx.upper)


class CholeskyInverse(Function, node="CholeskyInverseBackward0", saves=("self", "result"), batching="matrices"):
    """(L Lᵀ)⁻¹ from the Cholesky factor L (torch.cholesky_inverse; (Uᵀ U)⁻¹ with upper=True).

    With X = (L Lᵀ)⁻¹: dX = -X (dL Lᵀ + L dLᵀ) X, so gL = -X (g + gᵀ) X L  (upper: gU = -U X (g + gᵀ) X)."""

    @staticmethod
    def forward(ctx, L, upper):
        X = torch.cholesky_inverse(L, upper=upper)
        ctx.upper = upper
        ctx.save_for_backward(L, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        L, X = ctx.saved_tensors
        common = X.matmul(grad + _t(grad)).matmul(X)
        return (-L.matmul(common) if ctx.upper else -common.matmul(L)), None

    @staticmethod
    def jvp(ctx, tL, _upper):
        """torch's cholesky_inverse_jvp, kept for torch's values: with K = -X dL X Lᵀ (upper: -X dUᵀ X U),
        dX = K + Kᵀ. It is not the derivative -X (dL Lᵀ + L dLᵀ) X (finite differences disagree with it, even for
        a triangular dL: tests/test_linalg.py shows it); teachgrad gives torch's numbers and says so here."""
        L, X = ctx._primals[0], ctx._result
        K = -X.matmul(_t(tL)).matmul(X).matmul(L) if ctx.upper else -X.matmul(tL).matmul(X).matmul(_t(L))
        return K + _t(K)


class TriangularSolve(Function, node="TriangularSolveBackward0", saves=("self", "A", "solution"),
                      batching="matrices"):
    """torch.triangular_solve(B, A) (deprecated in torch): (X, a copy of A) with M X = B, M = A or Aᵀ
    (transpose=True), A triangular. solve_triangular's formulas with M; the copy's gradient goes to A as it is."""

    @staticmethod
    def forward(ctx, B, A, upper, transpose, unitriangular):
        X, copy = torch.triangular_solve(B, A, upper=upper, transpose=transpose, unitriangular=unitriangular)
        ctx.upper, ctx.transpose, ctx.unitriangular = upper, transpose, unitriangular
        ctx.save_for_backward(B, A, X)
        ctx.set_materialize_grads(False)
        return X, copy

    @staticmethod
    def backward(ctx, grad_solution, grad_copy):
        B, A, X = ctx.saved_tensors
        gB = gA = None
        if grad_solution is not None:
            gB = torch.triangular_solve(grad_solution, A, upper=ctx.upper, transpose=not ctx.transpose,
                                        unitriangular=ctx.unitriangular)[0]
            gA = -X.matmul(_t(gB)) if ctx.transpose else -gB.matmul(_t(X))
            gA = _triangle(gA, ctx.upper, ctx.unitriangular)
        if grad_copy is not None:
            gA = grad_copy if gA is None else gA + grad_copy
        return gB, gA, None, None, None

    @staticmethod
    def jvp(ctx, tB, tA, *_):
        """torch's triangular_solve_jvp: solve(dB - dA X), with dA as given: all of it, and not transposed for
        transpose=True (so it is the tangent only for a triangular dA and transpose=False; torch's value is kept)."""
        A, X = ctx._primals[1], ctx._result[0]
        tX = torch.triangular_solve(tB - tA.matmul(X), A, upper=ctx.upper, transpose=ctx.transpose,
                                    unitriangular=ctx.unitriangular)[0]
        return tX, tA


# --- LU ---------------------------------------------------------------------------------------------------------

def _lu_backward(gL, gU, P, L, U, pivot):
    """gA for A = P L U (L unit lower, m×k; U upper, k×n), torch's linalg_lu_backward. From Pᵀ dA = dL U + L dU,
    L⁻¹ Pᵀ dA U⁻¹ = L⁻¹dL (strictly lower) + dU U⁻¹ (upper), so for a square A
        gA = P L⁻ᵀ (tril(Lᵀ gL, -1) + triu(gU Uᵀ)) U⁻ᵀ;
    a wide A's extra columns of U and a tall A's extra rows of L add their own terms."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        inner = _t(L).matmul(gL).tril(-1) + gU.matmul(_t(U)).triu()
        gA = torch.linalg.solve_triangular(_t(U), inner, upper=False, left=False)
        gA = torch.linalg.solve_triangular(_t(L), gA, upper=True, left=True, unitriangular=True)
    elif m < n:   # wide: U = [U1 | U2]
        U1 = U[..., :k]
        inner = (_t(L).matmul(gL) - gU.triu().matmul(_t(U))).tril(-1)
        gA = torch.linalg.solve_triangular(_t(U1), inner, upper=False, left=False)
        gA = torch.cat([gA + gU[..., :k].triu(), gU[..., k:]], -1)
        gA = torch.linalg.solve_triangular(_t(L), gA, upper=True, left=True, unitriangular=True)
    else:         # tall: L = [L1; L2]
        L1 = L[..., :k, :]
        inner = (gU.matmul(_t(U)) - _t(L).matmul(gL.tril(-1))).triu()
        gA = torch.linalg.solve_triangular(_t(L1), inner, upper=True, left=True, unitriangular=True)
        gA = torch.cat([gA + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
        gA = torch.linalg.solve_triangular(_t(U), gA, upper=False, left=False)
    return P.matmul(gA) if pivot else gA


def _lu_jvp(tA, P, L, U, pivot):
    """(dL, dU) for A = P L U: with dA' = Pᵀ dA and X = L1⁻¹ dA'1 U1⁻¹ (the leading k×k blocks),
    dL1 = L1 tril(X, -1), dU1 = triu(X) U1; a wide A's dU2 = L⁻¹ (dA'2 - dL U2), a tall A's
    dL2 = (dA'2 - L2 dU) U⁻¹."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    tA = _t(P).matmul(tA) if pivot else tA
    L1, U1 = L[..., :k, :k], U[..., :k, :k]
    X = torch.linalg.solve_triangular(L1, tA[..., :k, :k], upper=False, left=True, unitriangular=True)
    X = torch.linalg.solve_triangular(U1, X, upper=True, left=False)
    dL1, dU1 = L1.matmul(X.tril(-1)), X.triu().matmul(U1)
    if m < n:
        dU2 = torch.linalg.solve_triangular(L1, tA[..., k:] - dL1.matmul(U[..., k:]), upper=False, left=True,
                                            unitriangular=True)
        return dL1, torch.cat([dU1, dU2], -1)
    if m > n:
        dL2 = torch.linalg.solve_triangular(U1, tA[..., k:, :] - L[..., k:, :].matmul(dU1), upper=True, left=False)
        return torch.cat([dL1, dL2], -2), dU1
    return dL1, dU1


class LinalgLu(Function, node="LinalgLuBackward0", saves=("P", "L", "U"), batching="matrices"):
    """(P, L, U) with A = P L U: P a permutation (no gradient), L unit lower triangular, U upper triangular."""

    @staticmethod
    def forward(ctx, A, pivot):
        P, L, U = torch.linalg.lu(A, pivot=pivot)
        ctx.pivot = pivot
        ctx.mark_non_differentiable(P)
        ctx.save_for_backward(P, L, U)
        return P, L, U

    @staticmethod
    def backward(ctx, _gP, gL, gU):
        P, L, U = ctx.saved_tensors
        return _lu_backward(gL, gU, P, L, U, ctx.pivot), None

    @staticmethod
    def jvp(ctx, tA, _pivot):
        P, L, U = ctx._result
        return (None, *_lu_jvp(tA, P, L, U, ctx.pivot))


def _unpack(LU, pivots):
    """(P, L, U) from the packed LU: L = its part below the diagonal plus ones on it, U the rest; P from the pivots
    (a permutation: no gradient, so read from the data)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    P = torch.lu_unpack(LU.data, pivots.data, unpack_data=False)[0]
    L = LU[..., :k].tril(-1) + torch.eye(m, k, dtype=LU.dtype, device=LU.device)
    return P, L, LU[..., :k, :].triu()


class LuUnpack(Function, node="LuUnpackBackward0", batching="matrices"):
    """torch.lu_unpack(LU, pivots): (P, L, U) from the packed LU. L and U are parts of LU: gLU = tril(gL, -1) in
    L's place plus triu(gU) in U's."""

    @staticmethod
    def forward(ctx, LU, pivots, unpack_data, unpack_pivots):
        P, L, U = torch.lu_unpack(LU, pivots, unpack_data=unpack_data, unpack_pivots=unpack_pivots)
        ctx.shape = LU.shape
        ctx.mark_non_differentiable(P)
        ctx.set_materialize_grads(False)
        return P, L, U

    @staticmethod
    def backward(ctx, _gP, gL, gU):
        m, n = ctx.shape[-2:]
        k = min(m, n)
        parts = []
        if gL is not None:
            gL = gL.tril(-1)
            parts.append(gL if n <= m else torch.cat([gL, torch.zeros_like(gL[..., :1]).expand(
                *gL.shape[:-1], n - k)], -1))
        if gU is not None:
            gU = gU.triu()
            parts.append(gU if m <= n else torch.cat([gU, torch.zeros_like(gU[..., :1, :]).expand(
                *gU.shape[:-2], m - k, n)], -2))
        return (parts[0] if len(parts) == 1 else parts[0] + parts[1]), None, None, None

    @staticmethod
    def jvp(ctx, tLU, *_):
        k = min(ctx.shape[-2:])
        return None, tLU[..., :k].tril(-1), tLU[..., :k, :].triu()


class LinalgLuFactor(Function, node="LinalgLuFactorExBackward0", saves=("LU", "pivots"), batching="matrices"):
    """(LU, pivots, info) as torch.linalg.lu_factor_ex: L (below the diagonal, its ones left out) and U packed in one
    matrix. Its gradient is LU's, with gL the part below the diagonal and gU the rest."""

    @staticmethod
    def forward(ctx, A, pivot):
        LU, pivots, info = torch.linalg.lu_factor_ex(A, pivot=pivot)
        ctx.pivot = pivot
        ctx.mark_non_differentiable(pivots, info)
        ctx.save_for_backward(LU, pivots)
        return LU, pivots, info

    @staticmethod
    def backward(ctx, grad, _grad_pivots, _grad_info):
        LU, pivots = ctx.saved_tensors
        P, L, U = _unpack(LU, pivots)
        k = min(LU.shape[-2:])
        return _lu_backward(grad[..., :k].tril(-1), grad[..., :k, :].triu(), P, L, U, ctx.pivot), None

    @staticmethod
    def jvp(ctx, tA, _pivot):
        LU, pivots, _ = ctx._result
        P, L, U = _unpack(LU, pivots)
        dL, dU = _lu_jvp(tA, P, L, U, ctx.pivot)
        k = min(LU.shape[-2:])
        m, n = LU.shape[-2:]
        if m >= n:
            return dL.tril(-1) + torch.cat([dU, torch.zeros_like(dL[..., k:, :])], -2), None, None
        return torch.cat([dL.tril(-1), torch.zeros_like(dU[..., k:])], -1) + dU, None, None


class LinalgLuSolve(Function, node="LinalgLuSolveBackward0", saves=("LU", "pivots", "result"), batching="matrices"):
    """X from lu_factor's (LU, pivots) of A: A X = B (left), X A = B (left=False), with Aᵀ for adjoint=True.

    B's gradient is a solve with the other side's matrix; A's is solve's (left, A X = B: gA = -gB Xᵀ; and so on),
    which reaches the packed LU through dA = P (dL U + L dU):  gL = tril(Pᵀ gA Uᵀ, -1),  gU = triu(Lᵀ Pᵀ gA)."""

    @staticmethod
    def forward(ctx, LU, pivots, B, left, adjoint):
        X = torch.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
        ctx.left, ctx.adjoint = left, adjoint
        ctx.save_for_backward(LU, pivots, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        LU, pivots, X = ctx.saved_tensors
        left, adjoint = ctx.left, ctx.adjoint
        gB = torch.linalg.lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)
        if not ctx.needs_input_grad[0]:
            return None, None, gB, None, None
        if left:
            gA = -X.matmul(_t(gB)) if adjoint else -gB.matmul(_t(X))
        else:
            gA = -_t(gB).matmul(X) if adjoint else -_t(X).matmul(gB)
        P, L, U = _unpack(LU, pivots)
        PtgA = _t(P).matmul(gA)
        gLU = PtgA.matmul(_t(U)).tril(-1) + _t(L).matmul(PtgA).triu()
        return gLU, None, (gB if ctx.needs_input_grad[2] else None), None, None

    @staticmethod
    def jvp(ctx, tLU, _tpivots, tB, *_):
        LU, pivots, X = ctx._primals[0], ctx._primals[1], ctx._result
        P, L, U = _unpack(LU, pivots)
        tL, tU = tLU.tril(-1), tLU.triu()
        tA = P.matmul(tL.matmul(U) + L.matmul(tU))
        tA = _t(tA) if ctx.adjoint else tA
        rhs = tB - tA.matmul(X) if ctx.left else tB - X.matmul(tA)
        return torch.linalg.lu_solve(LU, pivots, rhs, left=ctx.left, adjoint=ctx.adjoint)


# --- QR ----------------------------------------------------------------------------------------------------------

def _copyltu(M):
    """The symmetric matrix with M's lower triangle: tril(M) + tril(M, -1)ᵀ."""
    return M.tril() + _t(M.tril(-1))


def _qr_square_backward(gQ, gR, Q, R):
    """gA for A = Q R with A at least as tall as wide (Walter and Lehmann's formula, as torch's):
    M = R gRᵀ - gQᵀ Q,  gA = (gQ + Q copyltu(M)) R⁻ᵀ."""
    M = R.matmul(_t(gR)) - _t(gQ).matmul(Q)
    b = gQ + Q.matmul(_copyltu(M))
    return torch.linalg.solve_triangular(_t(R), b, upper=False, left=False)


class LinalgQr(Function, node="LinalgQrBackward0", saves=("Q", "R"), batching="matrices"):
    """(Q, R) with A = Q R. From Q ᵀ dQ skew and dR R⁻¹ upper triangular: with B = Qᵀ dA R⁻¹ and
    Ω = tril(B, -1) - tril(B, -1)ᵀ,  dR = (B - Ω) R  and  dQ = dA R⁻¹ - Q (B - Ω)  (for m ≥ n). A wide A = [X | Y]
    is X's square QR, with R's last columns Qᵀ Y."""

    @staticmethod
    def forward(ctx, A, mode):
        Q, R = torch.linalg.qr(A, mode=mode)
        ctx.mode = mode
        ctx.save_for_backward(Q, R)
        ctx.set_materialize_grads(False)
        return Q, R

    @staticmethod
    def _check(ctx, Q, R):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if ctx.mode == "complete" and Q.shape[-2] > R.shape[-1]:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        LinalgQr._check(ctx, Q, R)
        gQ = torch.zeros_like(Q) if gQ is None else gQ
        gR = torch.zeros_like(R) if gR is None else gR
        m, n = Q.shape[-2], R.shape[-1]
        if m >= n:
            return _qr_square_backward(gQ, gR, Q, R), None
        # A = [X | Y]: R = [U | Qᵀ Y], so Y's gradient is Q gV and X's is a square QR's with gQ + Y gVᵀ
        U, gU, gV = R[..., :m], gR[..., :m], gR[..., m:]
        Y = Q.matmul(R[..., m:])
        gX = _qr_square_backward(gQ + Y.matmul(_t(gV)), gU, Q, U)
        return torch.cat([gX, Q.matmul(gV)], -1), None

    @staticmethod
    def jvp(ctx, tA, _mode):
        Q, R = ctx._result
        LinalgQr._check(ctx, Q, R)
        m, n = Q.shape[-2], R.shape[-1]
        U = R if m >= n else R[..., :m]
        tX = tA if m >= n else tA[..., :m]
        B = _t(Q).matmul(torch.linalg.solve_triangular(U, tX, upper=True, left=False))   # Qᵀ dX U⁻¹
        omega = B.tril(-1) - _t(B.tril(-1))
        tR = (B - omega).matmul(U)
        tQ = tX.matmul(torch.linalg.inv(U)) - Q.matmul(B - omega)
        if m < n:   # R's last columns are Qᵀ Y, Y = Q R[:, m:]
            tR = torch.cat([tR, _t(tQ).matmul(Q.matmul(R[..., m:])) + _t(Q).matmul(tA[..., m:])], -1)
        return tQ, tR


# --- the SVD -----------------------------------------------------------------------------------------------------

def _gaps(values):
    """E[i, j] = values[j] - values[i], with ones on the diagonal (the diagonal is never divided)."""
    E = values.unsqueeze(-2) - values.unsqueeze(-1)
    eye = torch.eye(values.shape[-1], dtype=torch.bool, device=values.device)
    return torch.where(eye, torch.ones_like(E), E)


def _svd_backward(gU, gS, gVh, U, S, Vh):
    """gA for A = U diag(S) Vh (the thin SVD), as torch's svd_backward: with skew(X) = X - Xᵀ and
    E[i, j] = S[j]² - S[i]²,
        gA = U [ (skew(Uᵀ gU) S + S skew(Vh gVhᵀ)) / E + diag(gS) ] Vh
    plus, for a tall A, (I - U Uᵀ) gU S⁻¹ Vh, and for a wide A, U S⁻¹ gVh (I - Vhᵀ Vh). Equal singular values make
    E zero where a vector's gradient is divided by it: inf or nan, as torch."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return U.matmul(gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)).matmul(Vh)
    E = _gaps(S * S)
    inner = 0
    if gU is not None:
        UtgU = _t(U).matmul(gU)
        inner = (UtgU - _t(UtgU)) * S.unsqueeze(-2)
    if gVh is not None:
        VhgV = Vh.matmul(_t(gVh))
        inner = inner + S.unsqueeze(-1) * (VhgV - _t(VhgV))
    inner = inner / E
    if gS is not None:
        inner = inner + _diag(gS)
    if m > n and gU is not None:
        gUSinv = gU / S.unsqueeze(-2)
        gA = U.matmul(inner) + gUSinv - U.matmul(_t(U).matmul(gUSinv))
        return gA.matmul(Vh)
    if m < n and gVh is not None:
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = inner.matmul(Vh) + SinvgVh - SinvgVh.matmul(_t(Vh)).matmul(Vh)
        return U.matmul(gA)
    return U.matmul(inner).matmul(Vh)


def _svd_jvp(tA, U, S, Vh):
    """(dU, dS, dVh) of the thin SVD: with dP = Uᵀ dA V and F[i, j] = 1 / (S[j]² - S[i]²) (0 on the diagonal),
    dS = diag(dP), dU = U F∘(dP S + S dPᵀ) (+ (I - U Uᵀ) dA V S⁻¹ for a tall A),
    dV = V F∘(S dP + dPᵀ S) (+ (I - V Vᵀ) dAᵀ U S⁻¹ for a wide A)."""
    m, n = U.shape[-2], Vh.shape[-1]
    V = _t(Vh)
    dP = _t(U).matmul(tA).matmul(V)
    dS = dP.diagonal(0, -2, -1)
    E = _gaps(S * S)
    off = 1 - torch.eye(S.shape[-1], dtype=S.dtype, device=S.device)
    dU = U.matmul(off * (dP * S.unsqueeze(-2) + S.unsqueeze(-1) * _t(dP)) / E)
    dV = V.matmul(off * (S.unsqueeze(-1) * dP + _t(dP) * S.unsqueeze(-2)) / E)
    if m > n:
        dU = dU + (tA.matmul(V) - U.matmul(dP)) / S.unsqueeze(-2)
    if m < n:
        dV = dV + (_t(tA).matmul(U) - V.matmul(_t(dP))) / S.unsqueeze(-2)
    return dU, dS, _t(dV)


class LinalgSvd(Function, node="LinalgSvdBackward0", saves=("U", "S", "Vh"), batching="matrices"):
    """(U, S, Vh) with A = U diag(S) Vh. With full_matrices=True only the first min(m, n) columns of U (rows of Vh)
    are determined by A: the gradient reads those (torch's derivatives.yaml narrows them too)."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = torch.linalg.svd(A, full_matrices=full_matrices)
        ctx.full_matrices = full_matrices
        ctx.save_for_backward(U, S, Vh)
        ctx.set_materialize_grads(False)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if ctx.full_matrices:
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = None if gU is None else gU[..., :k]
            gVh = None if gVh is None else gVh[..., :k, :]
        return _svd_backward(gU, gS, gVh, U, S, Vh), None

    @staticmethod
    def jvp(ctx, tA, _full_matrices):
        U, S, Vh = ctx._result
        k = S.shape[-1]
        dU, dS, dVh = _svd_jvp(tA, U[..., :k], S, Vh[..., :k, :])
        if ctx.full_matrices:   # the columns A does not determine: a zero tangent, as torch's
            dU = torch.cat([dU, torch.zeros_like(U[..., k:])], -1)
            dVh = torch.cat([dVh, torch.zeros_like(Vh[..., k:, :])], -2)
        return dU, dS, dVh


class LinalgSvdvals(Function, node="LinalgSvdBackward0", saves=("A",), batching="matrices"):
    """The singular values S alone: dS = diag(Uᵀ dA V), so gA = U diag(gS) Vh. The vectors are computed again
    from A in backward (so that, under create_graph, their own dependence on A is recorded: torch keeps them as
    outputs of its node for the same reason)."""

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return torch.linalg.svdvals(A)

    @staticmethod
    def backward(ctx, grad):
        A, = ctx.saved_tensors
        U, S, Vh = torch.linalg.svd(A, full_matrices=False)
        return _svd_backward(None, grad, None, U, S, Vh)

    @staticmethod
    def jvp(ctx, tA):
        U, _, Vh = torch.linalg.svd(ctx._primals[0], full_matrices=False)
        return (_t(U).matmul(tA) * Vh).sum(-1)   # diag(Uᵀ dA V): row i of Uᵀ dA times row i of Vh


# --- eigh: the symmetric eigendecomposition ------------------------------------------------------------------------

class LinalgEigh(Function, node="LinalgEighBackward0", saves=("eigenvalues", "eigenvectors"), batching="matrices"):
    """(L, V) with A = V diag(L) Vᵀ for a symmetric A (read from its lower triangle, or upper with UPLO='U').

    dL = diag(Vᵀ dA V) and dV = V ((Vᵀ dA V) / E) with E[i, j] = L[j] - L[i] (0 on the diagonal); so
    gA = V (diag(gL) + skew(Vᵀ gV) / 2 / E) Vᵀ  (torch's linalg_eig_backward, its Hermitian case). Repeated
    eigenvalues make E zero: inf or nan where a vector's gradient is divided by it, as torch."""

    @staticmethod
    def forward(ctx, A, UPLO):
        L, V = torch.linalg.eigh(A, UPLO=UPLO)
        ctx.save_for_backward(L, V)
        ctx.set_materialize_grads(False)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        return _eigh_backward(gL, gV, L, V), None

    @staticmethod
    def jvp(ctx, tA, _UPLO):
        L, V = ctx._result
        dP = _t(V).matmul(tA).matmul(V)
        off = 1 - torch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        return dP.diagonal(0, -2, -1), V.matmul(off * dP / _gaps(L))


def _eigh_backward(gL, gV, L, V):
    if gV is None:
        return V.matmul(gL.unsqueeze(-1) * _t(V))
    VtgV = _t(V).matmul(gV)
    inner = 0.5 * (VtgV - _t(VtgV)) / _gaps(L)
    inner = inner - _diag(inner.diagonal(0, -2, -1))
    if gL is not None:
        inner = inner + _diag(gL)
    return V.matmul(inner).matmul(_t(V))


class LinalgEigvalsh(Function, node="LinalgEighBackward0", saves=("A",), batching="matrices"):
    """The eigenvalues of a symmetric A alone: dL = diag(Vᵀ dA V), so gA = V diag(gL) Vᵀ (V computed again from A
    in backward, as svdvals' vectors are)."""

    @staticmethod
    def forward(ctx, A, UPLO):
        ctx.UPLO = UPLO
        ctx.save_for_backward(A)
        return torch.linalg.eigvalsh(A, UPLO=UPLO)

    @staticmethod
    def backward(ctx, grad):
        A, = ctx.saved_tensors
        L, V = torch.linalg.eigh(A, UPLO=ctx.UPLO)
        return _eigh_backward(grad, None, L, V), None

    @staticmethod
    def jvp(ctx, tA, _UPLO):
        _, V = torch.linalg.eigh(ctx._primals[0], UPLO=ctx.UPLO)
        return (_t(V).matmul(tA) * _t(V)).sum(-1)   # diag(Vᵀ dA V)


# --- matrix_exp ----------------------------------------------------------------------------------------------------

def _exp_of_blocks(top_left, top_right):
    """The top-right block of exp([[X, D], [0, X]]): the derivative of exp at X in the direction D (Mathias, 1996)."""
    n = top_left.shape[-1]
    zeros = torch.zeros_like(top_left)
    blocks = torch.cat([torch.cat([top_left, top_right], -1), torch.cat([zeros, top_left], -1)], -2)
    return torch.linalg.matrix_exp(blocks)[..., :n, n:]


class LinalgMatrixExp(Function, node="LinalgMatrixExpBackward0", saves=("self",), batching="matrices",
                      function="matrix_exp", method="matrix_exp", out_variant=False):
    """exp(A) = Σ Aᵏ / k!. Its differential in the direction dA is the top-right block of exp([[A, dA], [0, A]]);
    the adjoint of that map is the same block built from Aᵀ: gA = exp([[Aᵀ, g], [0, Aᵀ]])[top right]."""

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return torch.linalg.matrix_exp(A)

    @staticmethod
    def backward(ctx, grad):
        A, = ctx.saved_tensors
        return _exp_of_blocks(_t(A), grad)

    @staticmethod
    def jvp(ctx, tA):
        return _exp_of_blocks(ctx._primals[0], tA)


# --- least squares and the pseudo-inverse --------------------------------------------------------------------------

def _pinv_backward(grad, P, A):
    """gA for P = A⁺ (Golub and Pereyra): from dP = -P dA P + P Pᵀ dAᵀ (I - A P) + (I - P A) dAᵀ Pᵀ P,
    gA = -Pᵀ g Pᵀ + (I - A P) gᵀ P Pᵀ + Pᵀ P gᵀ (I - P A)."""
    gT = _t(grad)
    PPt = P.matmul(_t(P))
    PtP = _t(P).matmul(P)
    return (-_t(P).matmul(grad).matmul(_t(P)) + (gT - A.matmul(P.matmul(gT))).matmul(PPt)
            + PtP.matmul(gT - gT.matmul(P.matmul(A))))


def _pinv_jvp(tA, P, A):
    tAT = _t(tA)
    return (-P.matmul(tA).matmul(P) + P.matmul(_t(P)).matmul(tAT - tAT.matmul(A).matmul(P))
            + (tAT - P.matmul(A.matmul(tAT))).matmul(_t(P)).matmul(P))


class LinalgPinv(Function, node="LinalgPinvBackward0", saves=("self", "result"), batching="matrices"):
    """A⁺, the Moore-Penrose pseudo-inverse (singular values below the tolerance count as zero)."""

    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        P = torch.linalg.pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, grad):
        A, P = ctx.saved_tensors
        return _pinv_backward(grad, P, A), None, None, None

    @staticmethod
    def jvp(ctx, tA, *_):
        return _pinv_jvp(tA, ctx._result, ctx._primals[0])


class LinalgLstsq(Function, node="LinalgLstsqBackward0", saves=("self", "b"), batching="matrices"):
    """(solution, residuals, rank, singular_values) of min ‖A X - B‖. The solution is A⁺ B: gB = A⁺ᵀ gX and A's
    gradient is the pseudo-inverse's for the gradient gX Bᵀ. The residuals ‖A X - B‖² (where the driver gives
    them) are at a minimum in X, so only their explicit dependence counts: gA = 2 (A X - B) Xᵀ g, gB = -2 (A X - B) g.
    rank and singular_values have no gradient."""

    @staticmethod
    def forward(ctx, A, B, rcond, driver):
        solution, residuals, rank, singular_values = torch.linalg.lstsq(A, B, rcond=rcond, driver=driver)
        ctx.vector = B.dim() == A.dim() - 1
        ctx.save_for_backward(A, B)
        ctx.solution = solution
        ctx.mark_non_differentiable(rank, singular_values)
        ctx.set_materialize_grads(False)
        return solution, residuals, rank, singular_values

    @staticmethod
    def backward(ctx, g_solution, g_residuals, _g_rank, _g_singular_values):
        A, B = ctx.saved_tensors
        if ctx.vector:
            B = B.unsqueeze(-1)
            g_solution = None if g_solution is None else g_solution.unsqueeze(-1)
        P = torch.linalg.pinv(A)
        gA = gB = 0
        if g_solution is not None:
            gA = _pinv_backward(g_solution.matmul(_t(B)), P, A)
            gB = _t(P).matmul(g_solution)
        if g_residuals is not None and g_residuals.numel():
            X = P.matmul(B)
            error = A.matmul(X) - B
            weight = g_residuals.unsqueeze(-2)
            gA = gA + 2 * (error * weight).matmul(_t(X))
            gB = gB - 2 * error * weight
        if ctx.vector and not isinstance(gB, int):
            gB = gB.squeeze(-1)
        return (gA if ctx.needs_input_grad[0] else None), (gB if ctx.needs_input_grad[1] else None), None, None

    @staticmethod
    def jvp(ctx, tA, tB, *_):
        A, B = ctx._primals[0], ctx._primals[1]
        if ctx.vector:
            B, tB = B.unsqueeze(-1), tB.unsqueeze(-1)
        P = torch.linalg.pinv(A)
        tX = _pinv_jvp(tA, P, A).matmul(B) + P.matmul(tB)
        X = P.matmul(B)
        residuals = ctx._result[1]
        t_residuals = None
        if residuals.numel():
            t_residuals = 2 * ((A.matmul(X) - B) * (tA.matmul(X) - tB)).sum(-2)
        return (tX.squeeze(-1) if ctx.vector else tX), t_residuals, None, None


# --- the cross product ---------------------------------------------------------------------------------------------

class LinalgCross(Function, node="LinalgCrossBackward0", saves=("self", "other"), batching=("along", 2)):
    """a × b along `dim` (of size 3). It is bilinear and (a × b)·g = (b × g)·a = (g × a)·b, so
    ga = b × g, gb = g × a."""

    @staticmethod
    def forward(ctx, a, b, dim):
        ctx.dim = dim
        ctx.save_for_backward(a, b)
        return torch.linalg.cross(a, b, dim=dim)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = torch.linalg.cross(b, grad, dim=ctx.dim) if ctx.needs_input_grad[0] else None
        gb = torch.linalg.cross(grad, a, dim=ctx.dim) if ctx.needs_input_grad[1] else None
        return ga, gb, None

    @staticmethod
    def jvp(ctx, ta, tb, _dim):
        a, b = ctx._primals[0], ctx._primals[1]
        return torch.linalg.cross(ta, b, dim=ctx.dim) + torch.linalg.cross(a, tb, dim=ctx.dim)


def _no_forward_ad(name):
    return NotImplementedError(f"Trying to use forward AD with {name} that does not support it because it has not "
                               "been implemented yet (in torch either).")


# --- Householder reflectors ------------------------------------------------------------------------------------

def _reflectors(A, tau):
    """The Householder matrices H_i = I - tau_i v_i v_iᵀ, where v_i is column i of A below the diagonal, with a 1 on
    the diagonal and 0 above it (how geqrf stores them)."""
    m, k = A.shape[-2], tau.shape[-1]
    eye = torch.eye(m, dtype=A.dtype, device=A.device)
    below = A[..., :, :k].tril(-1) + eye[..., :k]
    vectors = [below[..., :, i] for i in range(k)]
    return [eye - _expand_scalar(tau[..., i]) * (v.unsqueeze(-1) * v.unsqueeze(-2)) for i, v in enumerate(vectors)], \
        vectors


def _products(H, n):
    """(H_1 ⋯ H_{i-1}, H_{i+1} ⋯ H_k E) for each i, E the first n columns of the identity."""
    k, eye = len(H), torch.eye(H[0].shape[-1], dtype=H[0].dtype, device=H[0].device)
    left, right = [eye], [eye[..., :n]]
    for i in range(k - 1):
        left.append(left[-1].matmul(H[i]))
        right.append(H[k - 1 - i].matmul(right[-1]))
    return left, right[::-1]


def _reflector_grads(grad, A, tau, n):
    """(gA, gtau) for the first n columns of H_1 ⋯ H_k, given their gradient (see LinalgHouseholderProduct)."""
    if tau.shape[-1] == 0:   # no reflectors: the product is the identity, whatever A holds
        return torch.zeros_like(A), torch.zeros_like(tau)
    H, vectors = _reflectors(A, tau)
    left, right = _products(H, n)
    g_columns, g_tau = [], []
    for i, v in enumerate(vectors):
        M = _t(left[i]).matmul(grad).matmul(_t(right[i]))
        Mv = M.matmul(v.unsqueeze(-1)).squeeze(-1)
        g_tau.append(-(v * Mv).sum(-1))
        g_columns.append(-tau[..., i].unsqueeze(-1) * (Mv + _t(M).matmul(v.unsqueeze(-1)).squeeze(-1)))
    zeros = torch.zeros_like(A[..., :, 0])
    gA = torch.stack(g_columns + [zeros] * (A.shape[-1] - len(vectors)), -1).tril(-1)
    return gA, torch.stack(g_tau, -1)


class LinalgHouseholderProduct(Function, node="LinalgHouseholderProductBackward0", saves=("input", "tau", "result"),
                               batching="matrices"):
    """Q = the first n columns of H_1 H_2 ⋯ H_k (torch.linalg.householder_product, LAPACK's orgqr).

    dQ = Σ_i (H_1 ⋯ H_{i-1}) dH_i (H_{i+1} ⋯ H_k E) with dH_i = -dtau_i v vᵀ - tau_i (dv vᵀ + v dvᵀ); so with
    M_i = (H_1 ⋯ H_{i-1})ᵀ gQ (H_{i+1} ⋯ H_k E)ᵀ:  gtau_i = -vᵀ M_i v  and  gv_i = -tau_i (M_i + M_iᵀ) v, of which
    the entries below the diagonal are A's."""

    @staticmethod
    def forward(ctx, A, tau):
        Q = torch.linalg.householder_product(A, tau)
        ctx.save_for_backward(A, tau, Q)
        return Q

    @staticmethod
    def backward(ctx, grad):
        A, tau, _ = ctx.saved_tensors
        return _reflector_grads(grad, A, tau, A.shape[-1])

    @staticmethod
    def jvp(ctx, tA, ttau):
        A, tau = ctx._primals
        if tau.shape[-1] == 0:
            return torch.zeros_like(ctx._result)
        H, vectors = _reflectors(A, tau)
        left, right = _products(H, A.shape[-1])
        tangent = 0
        for i, v in enumerate(vectors):
            dv = tA.tril(-1)[..., :, i]
            outer = v.unsqueeze(-1) * v.unsqueeze(-2)
            d_outer = dv.unsqueeze(-1) * v.unsqueeze(-2) + v.unsqueeze(-1) * dv.unsqueeze(-2)
            dH = -(_expand_scalar(ttau[..., i]) * outer + _expand_scalar(tau[..., i]) * d_outer)
            tangent = tangent + left[i].matmul(dH).matmul(right[i])
        return tangent


class Ormqr(Function, node="OrmqrBackward0", saves=("self", "input2", "input3"), batching="matrices"):
    """torch.ormqr(A, tau, C, left, transpose): C multiplied by the full Q = H_1 ⋯ H_k (m×m) that geqrf's (A, tau)
    stand for: Q C, Qᵀ C, C Q or C Qᵀ. C's gradient is the product with Qᵀ on the same side; Q's (g Cᵀ, or Cᵀ g,
    transposed with transpose=True) reaches A and tau through the reflectors, as householder_product's does. No
    forward mode, as in torch."""

    @staticmethod
    def forward(ctx, A, tau, C, left, transpose):
        ctx.left, ctx.transpose = left, transpose
        ctx.save_for_backward(A, tau, C)
        return torch.ormqr(A, tau, C, left=left, transpose=transpose)

    @staticmethod
    def backward(ctx, grad):
        A, tau, C = ctx.saved_tensors
        left, transpose = ctx.left, ctx.transpose
        gC = torch.ormqr(A, tau, grad, left=left, transpose=not transpose)
        gQ = grad.matmul(_t(C)) if left else _t(C).matmul(grad)   # the gradient of op(Q)
        gA, gtau = _reflector_grads(_t(gQ) if transpose else gQ, A, tau, A.shape[-2])
        return gA, gtau, gC, None, None

    @staticmethod
    def jvp(ctx, *tangents):
        raise _no_forward_ad("ormqr")   # (torch has no forward-mode formula for it)


# --- factorizations torch has no derivative for ----------------------------------------------------------------

class Geqrf(Function, node="GeqrfBackward0", batching="matrices"):
    """torch.geqrf: QR as LAPACK stores it (R and the Householder vectors in one matrix, and tau). torch records it
    but has no derivative for it: backward raises torch's error."""

    @staticmethod
    def forward(ctx, A):
        return torch.geqrf(A)

    @staticmethod
    def backward(ctx, grad_a, grad_tau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")

    @staticmethod
    def jvp(ctx, tA):
        raise _no_forward_ad("geqrf")


class LinalgLdlFactor(Function, node="NotImplemented", qualified_name="torch::autograd::NotImplemented",
                      batching="matrices"):
    """(LD, pivots, info) of the LDLᵀ factorization (torch.linalg.ldl_factor_ex); torch has no derivative for it."""

    @staticmethod
    def forward(ctx, A, hermitian):
        LD, pivots, info = torch.linalg.ldl_factor_ex(A, hermitian=hermitian)
        ctx.mark_non_differentiable(pivots, info)
        return LD, pivots, info

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")

    @staticmethod
    def jvp(ctx, *tangents):
        raise _no_forward_ad("linalg_ldl_factor_ex")


class LinalgLdlSolve(Function, node="NotImplemented", qualified_name="torch::autograd::NotImplemented",
                     batching="matrices"):
    """X from ldl_factor's (LD, pivots): A X = B; torch has no derivative for it."""

    @staticmethod
    def forward(ctx, LD, pivots, B, hermitian):
        return torch.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")

    @staticmethod
    def jvp(ctx, *tangents):
        raise _no_forward_ad("linalg_ldl_solve")
