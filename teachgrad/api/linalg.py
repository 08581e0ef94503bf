"""torch.linalg's functions with torch's signatures, and torch's older top-level names for them (torch.det,
torch.svd, torch.cholesky, ...). The ops are in teachgrad/ops/linalg_decompositions.py; the functions torch composes
from other ops (logdet, the matrix norms, multi_dot, matrix_power) are composed here the same way, so their nodes
are torch's. Results with several parts are torch's named tuples (`torch.return_types.linalg_svd(U, S, Vh)`).

teachgrad/linalg.py shows these at torch's path, `tg.linalg.<name>`.

Guarded by tests/test_linalg.py.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeAlias

import torch

from .. import ops
from ..rules import grad_mode, variable_class
from .torch_functions import cat

if TYPE_CHECKING:   # names the hints use, never imported at run time
    Variable = variable_class.Variable
    TensorLike: TypeAlias = Variable | torch.Tensor

_inf = float("inf")


def _variable(x: TensorLike) -> Variable:
    Variable = variable_class.Variable
    return x if isinstance(x, Variable) else Variable(x)


# --- determinants --------------------------------------------------------------------------------------------------

def det(A: TensorLike) -> Variable:
    """det(A), of a matrix or a batch of them (torch.linalg.det, torch.det)."""
    return ops.LinalgDet.apply(A)


def slogdet(A: TensorLike) -> torch.return_types.linalg_slogdet:
    """(sign, logabsdet): det(A) = sign · exp(logabsdet), without overflow."""
    return torch.return_types.linalg_slogdet(ops.LinalgSlogdet.apply(A))


def slogdet_legacy(input: TensorLike) -> torch.return_types.slogdet:
    """torch.slogdet: linalg.slogdet's values under the older named tuple."""
    return torch.return_types.slogdet(ops.LinalgSlogdet.apply(input))


def logdet(input: TensorLike) -> Variable:
    """log det(A): nan for a negative determinant (torch composes it from slogdet: where(sign == -1, nan, ...))."""
    sign, logabsdet = ops.LinalgSlogdet.apply(input)
    return ops.Where.apply(sign.data == -1, math.nan, logabsdet)


# --- inverses and solves -------------------------------------------------------------------------------------------

def _raise_if_failed(info: Variable, torchs: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Where an _ex op's info says the factorization failed, torch's own function on the data raises torch's
    error (torch.linalg.LinAlgError, naming the matrix and the batch element). (`_data`: under vmap, the info of
    every example in the batch.)"""
    if info._data.any():
        torchs(*(_data(a) for a in args), **kwargs)


def inv(A: TensorLike) -> Variable:
    """A⁻¹ (torch.linalg.inv, torch.inverse)."""
    inverse, info = ops.LinalgInv.apply(A)
    _raise_if_failed(info, torch.linalg.inv, A)
    return inverse


def inv_ex(A: TensorLike, *, check_errors: bool = False) -> torch.return_types.linalg_inv_ex:
    """(inverse, info): info > 0 where A is singular, raising only with check_errors."""
    inverse, info = ops.LinalgInv.apply(A)
    if check_errors:
        _raise_if_failed(info, torch.linalg.inv_ex, A, check_errors=True)
    return torch.return_types.linalg_inv_ex((inverse, info))


def solve(A: TensorLike, B: TensorLike, *, left: bool = True) -> Variable:
    """X with A X = B (X A = B with left=False)."""
    X, info = ops.LinalgSolve.apply(A, B, left)
    _raise_if_failed(info, torch.linalg.solve, A, B, left=left)
    return X


def solve_ex(A: TensorLike, B: TensorLike, *, left: bool = True,
             check_errors: bool = False) -> torch.return_types.linalg_solve_ex:
    """(result, info): solve's, with info > 0 where A is singular (raising only with check_errors)."""
    X, info = ops.LinalgSolve.apply(A, B, left)
    if check_errors:
        _raise_if_failed(info, torch.linalg.solve_ex, A, B, left=left, check_errors=True)
    return torch.return_types.linalg_solve_ex((X, info))


def solve_triangular(A: TensorLike, B: TensorLike, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Variable:
    """X with A X = B for a triangular A (only its upper or lower triangle is read; ones on its diagonal with
    unitriangular=True)."""
    return ops.LinalgSolveTriangular.apply(A, B, upper, left, unitriangular)


def cholesky(A: TensorLike, *, upper: bool = False) -> Variable:
    """L with A = L Lᵀ (or U with A = Uᵀ U): torch's LinAlgError if A is not positive-definite."""
    L, info = ops.LinalgCholesky.apply(A, upper)
    _raise_if_failed(info, torch.linalg.cholesky, A, upper=upper)
    return L


def cholesky_ex(A: TensorLike, *, upper: bool = False,
                check_errors: bool = False) -> torch.return_types.linalg_cholesky_ex:
    """(L, info): info > 0 where A is not positive-definite (raising only with check_errors)."""
    L, info = ops.LinalgCholesky.apply(A, upper)
    if check_errors:
        _raise_if_failed(info, torch.linalg.cholesky_ex, A, upper=upper, check_errors=True)
    return torch.return_types.linalg_cholesky_ex((L, info))


def cholesky_legacy(input: TensorLike, upper: bool = False) -> Variable:
    """torch.cholesky (deprecated in torch, with its warning): the same factor, under CholeskyBackward0."""
    return ops.Cholesky.apply(input, upper)


def cholesky_solve(input: TensorLike, input2: TensorLike, upper: bool = False) -> Variable:
    """torch.cholesky_solve(B, L): X with L Lᵀ X = B, from the Cholesky factor L."""
    return ops.CholeskySolve.apply(input, input2, upper)


def cholesky_inverse(input: TensorLike, upper: bool = False) -> Variable:
    """torch.cholesky_inverse(L): (L Lᵀ)⁻¹ from the Cholesky factor L."""
    return ops.CholeskyInverse.apply(input, upper)


def triangular_solve(input: TensorLike, A: TensorLike, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> torch.return_types.triangular_solve:
    """torch.triangular_solve(B, A): (solution, cloned_coefficient), solving A X = B (Aᵀ X = B with transpose)."""
    return torch.return_types.triangular_solve(ops.TriangularSolve.apply(input, A, upper, transpose, unitriangular))


def tensorinv(A: TensorLike, ind: int = 2) -> Variable:
    """The inverse of A read as a matrix of its first `ind` dims by the rest, shaped back: rest + first."""
    A = _variable(A)
    rows, cols = A.shape[:ind], A.shape[ind:]
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    return inv(A.reshape(math.prod(rows), math.prod(cols))).reshape(*cols, *rows)


def tensorsolve(A: TensorLike, B: TensorLike, dims: Sequence[int] | None = None) -> Variable:
    """X with tensordot(A, X, X.ndim) = B: A read as a matrix of B's dims by the rest (`dims` moved last first)."""
    A, B = _variable(A), _variable(B)
    if dims is not None:   # those dims moved to the end
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    rest = A.shape[B.dim():]
    return solve(A.reshape(B.numel(), math.prod(rest)), B.reshape(B.numel())).view(rest)


def vecdot(x: TensorLike, y: TensorLike, *, dim: int = -1) -> Variable:
    """Σ x y along dim (x conjugated for complex numbers): torch's vdot for two vectors, else (x * y).sum(dim)."""
    x = _variable(x)
    if x.dim() == 1 and _variable(y).dim() == 1:
        return x.vdot(y)
    return (x * y).sum(dim)


def diagonal(A: TensorLike, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Variable:
    """torch.diagonal with the last two dims by default (a view)."""
    return _variable(A).diagonal(offset, dim1, dim2)


def matrix_rank(A: TensorLike, *args: Any, **kwargs: Any) -> Variable:
    """The number of singular values above the tolerance: an integer, so no gradient (torch's own, on the data)."""
    return variable_class.Variable(torch.linalg.matrix_rank(_data(A), *args, **{k: _data(v) for k, v in
                                                                              kwargs.items()}))


def cond(A: TensorLike, p: float | str | None = None) -> Variable:
    """The condition number: for p None, 2 or -2 the ratio of the largest to the smallest singular value (or its
    inverse), else matrix_norm(A, p) · matrix_norm(A⁻¹, p)."""
    A = _variable(A)
    if p in (None, 2, -2):
        s = svdvals(A)
        largest, smallest = s.narrow(-1, 0, 1), s.narrow(-1, -1, 1)
        return (smallest / largest if p == -2 else largest / smallest).squeeze(-1)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vander(x: TensorLike, N: int | None = None) -> Variable:
    """The Vandermonde matrix [1, x, x², ..., x^(N-1)] of each element, as torch composes it (a cumprod, then a cat)."""
    x = _variable(x)
    if x.dim() == 0:   # a number is a vector of one
        x = x.unsqueeze(0)
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = variable_class.Variable(torch.ones(*x.shape, 1, dtype=x.dtype, device=x.device))
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    return cat([ones, powers], -1)


def lu(A: TensorLike, *, pivot: bool = True) -> torch.return_types.linalg_lu:
    """(P, L, U) with A = P L U."""
    return torch.return_types.linalg_lu(ops.LinalgLu.apply(A, pivot))


def lu_factor_ex(A: TensorLike, *, pivot: bool = True,
                 check_errors: bool = False) -> torch.return_types.linalg_lu_factor_ex:
    """(LU, pivots, info): L and U packed in one matrix, as LAPACK's getrf."""
    LU, pivots, info = ops.LinalgLuFactor.apply(A, pivot)
    if check_errors:
        _raise_if_failed(info, torch.linalg.lu_factor_ex, A, pivot=pivot, check_errors=True)
    return torch.return_types.linalg_lu_factor_ex((LU, pivots, info))


def lu_factor(A: TensorLike, *, pivot: bool = True) -> torch.return_types.linalg_lu_factor:
    """(LU, pivots); torch's error for a singular A."""
    LU, pivots, info = ops.LinalgLuFactor.apply(A, pivot)
    _raise_if_failed(info, torch.linalg.lu_factor, A, pivot=pivot)
    return torch.return_types.linalg_lu_factor((LU, pivots))


def lu_solve(LU: TensorLike, pivots: TensorLike, B: TensorLike, *, left: bool = True,
             adjoint: bool = False) -> Variable:
    """X with A X = B (X A = B with left=False; Aᵀ with adjoint=True), from lu_factor's (LU, pivots) of A."""
    return ops.LinalgLuSolve.apply(LU, pivots, B, left, adjoint)


def lu_solve_legacy(b: TensorLike, LU_data: TensorLike, LU_pivots: TensorLike) -> Variable:
    """torch.lu_solve(b, LU_data, LU_pivots) (deprecated in torch): linalg.lu_solve(LU_data, LU_pivots, b)."""
    return ops.LinalgLuSolve.apply(LU_data, LU_pivots, b, True, False)


def lu_legacy(A: TensorLike, pivot: bool = True, get_infos: bool = False) -> tuple:
    """torch.lu: (LU, pivots), and infos with get_infos=True (lu_factor_ex's)."""
    LU, pivots, info = ops.LinalgLuFactor.apply(A, pivot)
    if not get_infos:
        _raise_if_failed(info, torch.lu, A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_unpack(LU_data: TensorLike, LU_pivots: TensorLike, unpack_data: bool = True,
              unpack_pivots: bool = True) -> torch.return_types.lu_unpack:
    """torch.lu_unpack: (P, L, U) from lu_factor's packed LU and pivots."""
    return torch.return_types.lu_unpack(ops.LuUnpack.apply(LU_data, LU_pivots, unpack_data, unpack_pivots))


def householder_product(A: TensorLike, tau: TensorLike) -> Variable:
    """The first n columns of the product of the Householder reflectors I - tau_i v_i v_iᵀ stored in A (orgqr)."""
    return ops.LinalgHouseholderProduct.apply(A, tau)


def ormqr(input: TensorLike, input2: TensorLike, input3: TensorLike, left: bool = True,
          transpose: bool = False) -> Variable:
    """torch.ormqr(A, tau, C): C times the Q of geqrf's (A, tau), from the left or right, transposed or not."""
    return ops.Ormqr.apply(input, input2, input3, left, transpose)


def geqrf(input: TensorLike) -> torch.return_types.geqrf:
    """torch.geqrf: (a, tau), LAPACK's QR; no derivative (in torch either)."""
    return torch.return_types.geqrf(ops.Geqrf.apply(input))


def ldl_factor_ex(A: TensorLike, *, hermitian: bool = False,
                  check_errors: bool = False) -> torch.return_types.linalg_ldl_factor_ex:
    """(LD, pivots, info) of A = L D Lᵀ; no derivative (in torch either)."""
    LD, pivots, info = ops.LinalgLdlFactor.apply(A, hermitian)
    if check_errors:
        _raise_if_failed(info, torch.linalg.ldl_factor_ex, A, hermitian=hermitian, check_errors=True)
    return torch.return_types.linalg_ldl_factor_ex((LD, pivots, info))


def ldl_factor(A: TensorLike, *, hermitian: bool = False) -> torch.return_types.linalg_ldl_factor:
    """(LD, pivots) of A = L D Lᵀ; no derivative (in torch either)."""
    LD, pivots, info = ops.LinalgLdlFactor.apply(A, hermitian)
    _raise_if_failed(info, torch.linalg.ldl_factor, A, hermitian=hermitian)
    return torch.return_types.linalg_ldl_factor((LD, pivots))


def ldl_solve(LD: TensorLike, pivots: TensorLike, B: TensorLike, *, hermitian: bool = False) -> Variable:
    """X with A X = B from ldl_factor's (LD, pivots); no derivative (in torch either)."""
    return ops.LinalgLdlSolve.apply(LD, pivots, B, hermitian)


def pinv(A: TensorLike, *, atol: float | TensorLike | None = None, rtol: float | TensorLike | None = None,
         hermitian: bool = False) -> Variable:
    """A⁺, the pseudo-inverse."""
    return ops.LinalgPinv.apply(A, _data(atol), _data(rtol), hermitian)


def pinverse(input: TensorLike, rcond: float = 1e-15) -> Variable:
    """torch.pinverse: linalg.pinv with rtol=rcond."""
    return ops.LinalgPinv.apply(input, None, rcond, False)


def lstsq(A: TensorLike, B: TensorLike, rcond: float | None = None, *,
          driver: str | None = None) -> torch.return_types.linalg_lstsq:
    """(solution, residuals, rank, singular_values) of min ‖A X - B‖; the solution and residuals carry gradients."""
    return torch.return_types.linalg_lstsq(ops.LinalgLstsq.apply(A, B, rcond, driver))


def _data(x):
    return x.data if isinstance(x, variable_class.Variable) else x


# --- factorizations ------------------------------------------------------------------------------------------------

def qr(A: TensorLike, mode: str = "reduced") -> torch.return_types.linalg_qr:
    """(Q, R) with A = Q R; mode 'reduced', 'complete' or 'r' (Q empty: no gradient then, as torch)."""
    return torch.return_types.linalg_qr(ops.LinalgQr.apply(A, mode))


def qr_legacy(input: TensorLike, some: bool = True) -> torch.return_types.qr:
    """torch.qr(input, some): linalg.qr with mode 'reduced' (some) or 'complete'."""
    return torch.return_types.qr(ops.LinalgQr.apply(input, "reduced" if some else "complete"))


def svd(A: TensorLike, full_matrices: bool = True, *, driver: str | None = None) -> torch.return_types.linalg_svd:
    """(U, S, Vh) with A = U diag(S) Vh."""
    if driver is not None:
        torch.linalg.svd(_data(A), full_matrices=full_matrices, driver=driver)   # (torch's error: cuda only)
    return torch.return_types.linalg_svd(ops.LinalgSvd.apply(A, full_matrices))


def svd_legacy(input: TensorLike, some: bool = True, compute_uv: bool = True) -> torch.return_types.svd:
    """torch.svd: (U, S, V) with V, not Vh (V = Vhᵀ, a transpose in the graph); some=True is the thin SVD. Without
    compute_uv, U and V are zeros of the full shapes, as torch's."""
    input = _variable(input)
    if not compute_uv:
        m, n = input.shape[-2:]
        U = variable_class.Variable(torch.zeros(*input.shape[:-2], m, m, dtype=input.dtype, device=input.device))
        V = variable_class.Variable(torch.zeros(*input.shape[:-2], n, n, dtype=input.dtype, device=input.device))
        return torch.return_types.svd((U, svdvals(input), V))
    U, S, Vh = ops.LinalgSvd.apply(input, not some)
    return torch.return_types.svd((U, S, Vh.mT))


def svdvals(A: TensorLike, *, driver: str | None = None) -> Variable:
    """The singular values of A, largest first."""
    return ops.LinalgSvdvals.apply(A)


def eigh(A: TensorLike, UPLO: str = "L") -> torch.return_types.linalg_eigh:
    """(eigenvalues, eigenvectors) of a symmetric A, eigenvalues ascending, read from its lower triangle
    (upper with UPLO='U')."""
    return torch.return_types.linalg_eigh(ops.LinalgEigh.apply(A, UPLO))


def eigvalsh(A: TensorLike, UPLO: str = "L") -> Variable:
    """The eigenvalues of a symmetric A, ascending."""
    return ops.LinalgEigvalsh.apply(A, UPLO)


def _complex_results(name: str, A: TensorLike, torchs: Callable[..., Any]) -> Any:
    """eig and eigvals give complex numbers: torch's values where no gradient is asked for, else refused (teachgrad
    has complex gradients, but not yet linalg_eig_backward's formula)."""
    A = _variable(A)
    if A.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"linalg.{name}: teachgrad does not differentiate eig and eigvals yet (torch's "
                           "linalg_eig_backward). For a symmetric matrix use linalg.eigh, whose results are real")
    result = torchs(A.data)
    Variable = variable_class.Variable
    return type(result)(Variable(r) for r in result) if isinstance(result, tuple) else Variable(result)


def eig(A: TensorLike) -> torch.return_types.linalg_eig:
    """(eigenvalues, eigenvectors), complex: teachgrad does not differentiate them yet (see _complex_results)."""
    return _complex_results("eig", A, torch.linalg.eig)


def eigvals(A: TensorLike) -> Variable:
    """The eigenvalues, complex: teachgrad does not differentiate them (see _complex_results)."""
    return _complex_results("eigvals", A, torch.linalg.eigvals)


# --- functions of a matrix -----------------------------------------------------------------------------------------

def matrix_exp(A: TensorLike) -> Variable:
    """exp(A) = Σ Aᵏ / k! (torch.linalg.matrix_exp, torch.matrix_exp)."""
    return ops.LinalgMatrixExp.apply(A)


def matrix_power(A: TensorLike, n: int) -> Variable:
    """Aⁿ, as torch computes it: the identity (a copy into A's clone) for n = 0, A⁻¹'s power for n < 0, and for
    n ≥ 4 A's squares A, A², A⁴, ... multiplied in where n's binary digits are 1."""
    A = _variable(A)
    if n == 0:
        eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
        return A.clone(memory_format=torch.contiguous_format).copy_(eye)
    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 1:
        return a if a is not A else A.clone(memory_format=torch.contiguous_format)
    if n == 2:
        return a.matmul(a)
    if n == 3:
        return a.matmul(a).matmul(a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else z.matmul(z)
        if bit:
            result = z if result is None else result.matmul(z)
    return result


def multi_dot(tensors: Sequence[TensorLike]) -> Variable:
    """The product of a chain of matrices in the cheapest order (a first or last vector is a row or a column),
    chosen as torch chooses it (the matrix-chain order, cost counted in multiplications), then viewed."""
    tensors = [_variable(t) for t in tensors]
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vector, last_vector = tensors[0].dim() == 1, tensors[-1].dim() == 1
    matrices = list(tensors)
    if first_vector:
        matrices[0] = matrices[0].unsqueeze(0)
    if last_vector:
        matrices[-1] = matrices[-1].unsqueeze(-1)
    shape = [*([] if first_vector else [matrices[0].shape[0]]), *([] if last_vector else [matrices[-1].shape[1]])]
    if len(matrices) == 2:
        return matrices[0].mm(matrices[1]).view(shape)
    sizes = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
    return _chain(matrices, _chain_order(sizes), 0, len(matrices) - 1).view(shape)


def _chain_order(sizes: list[int]) -> list[list[int]]:
    """split[i][j]: where the cheapest product of matrices i..j splits (the classic dynamic programme)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(matrices: list, split: list[list[int]], i: int, j: int) -> Variable:
    if i == j:
        return matrices[i]
    k = split[i][j]
    return _chain(matrices, split, i, k).mm(_chain(matrices, split, k + 1, j))


def cross(input: TensorLike, other: TensorLike, *, dim: int = -1) -> Variable:
    """input × other along dim (of size 3), broadcasting (torch.linalg.cross)."""
    return ops.LinalgCross.apply(input, other, dim)


def cross_legacy(input: TensorLike, other: TensorLike, dim: int | None = None) -> Variable:
    """torch.cross: without dim, the first dim of size 3 (torch warns that this default will change)."""
    if dim is None:
        input = _variable(input)
        dim = next((d for d, size in enumerate(input.shape) if size == 3), -1)
    return ops.LinalgCross.apply(input, other, dim)


# --- norms ---------------------------------------------------------------------------------------------------------

def vector_norm(x: TensorLike, ord: float = 2, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
                dtype: torch.dtype | None = None) -> Variable:
    """(Σ |x|^ord)^(1/ord) over dim (all elements when None); max |x| for inf, min for -inf."""
    x = _variable(x)
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = (dim,)
    return ops.Norm.apply(x, ord, None if dim is None else tuple(dim), keepdim)


def matrix_norm(A: TensorLike, ord: float | str = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,
                dtype: torch.dtype | None = None) -> Variable:
    """The matrix norms, composed as torch composes them: 'fro' the vector 2-norm of the entries, 'nuc' the sum of the
    singular values, 2 / -2 the largest / smallest singular value, inf / -inf the largest / smallest row sum of |A|,
    1 / -1 the largest / smallest column sum."""
    A = _variable(A)
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        order = [d for d in range(A.dim()) if d not in (d0, d1)] + [d0, d1]   # the two dims moved last
        singular = svdvals(A.permute(order))
        result = singular.sum(-1) if ord == "nuc" else singular.amax(-1) if ord == 2 else singular.amin(-1)
        if keepdim:
            back = sorted(range(A.dim()), key=lambda k: order[k])
            result = result.unsqueeze(-1).unsqueeze(-1).permute(back)
        return result
    if ord in (1, -1, _inf, -_inf):
        summed, over = (d0, d1) if ord in (1, -1) else (d1, d0)
        if not keepdim and over > summed:
            over -= 1
        sums = A.abs().sum(summed, keepdim=keepdim)
        return sums.amax(over, keepdim=keepdim) if ord > 0 else sums.amin(over, keepdim=keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: TensorLike, ord: float | str | None = None, dim: int | Sequence[int] | None = None,
         keepdim: bool = False, *, dtype: torch.dtype | None = None) -> Variable:
    """torch.linalg.norm: a vector norm or a matrix norm, read from ord and dim as torch reads them."""
    A = _variable(A)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.dim() == 2:
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else tuple(dim), keepdim,
                           dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, but got {ord}")
    if dim is None and ord is not None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


__all__ = ["cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
           "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
           "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]
