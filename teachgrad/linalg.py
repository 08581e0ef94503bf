"""`tg.linalg` mirrors `torch.linalg`: determinants, inverses and solves, the factorizations, matrix functions,
least squares, norms, each recorded with torch's node and differentiated with torch's formula.

The functions are written in teachgrad/api/linalg.py, the ops in teachgrad/ops/linalg_decompositions.py; here they
stand at torch's path. Guarded by tests/test_linalg.py.
"""
from .api.linalg import (cholesky, cholesky_ex, cond, cross, det, diagonal, eig, eigh, eigvals, eigvalsh,
                         householder_product, inv, inv_ex, ldl_factor, ldl_factor_ex, ldl_solve, lstsq, lu, lu_factor,
                         lu_factor_ex, lu_solve, matrix_exp, matrix_norm, matrix_power, matrix_rank, multi_dot, norm,
                         pinv, qr, slogdet, solve, solve_ex, solve_triangular, svd, svdvals, tensorinv, tensorsolve,
                         vander, vecdot, vector_norm)
from .api.torch_functions import matmul

from torch.linalg import LinAlgError   # torch's own exception: what teachgrad's ops raise is torch's

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]
