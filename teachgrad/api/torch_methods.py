"""torch.Tensor's methods that teachgrad does not write itself, listed by name: each runs torch's own method on the
data, through teachgrad/api/interop.py. Where no gradient is lost (indices, masks, anything under no_grad) that is
torch's result; where a result would need a gradient teachgrad cannot record, it is a TypeError naming the method.

The methods that record a graph are written out in teachgrad/api/tensor_methods.py; `Variable` inherits both.
Methods that touch autograd itself (hooks, grads, backward) are not here: on the data they would do nothing useful.
tests/test_imports.py keeps TORCH_METHODS equal to torch.Tensor's public methods that tensor_methods.py leaves out.

Guarded by tests/test_interop.py (torch's methods and functions called with Variables).
"""
import torch

from . import interop

# `i % n`, `i // n` on index tensors: torch's (refused, by name, where a gradient would be lost)
TORCH_OPERATORS = ("__floordiv__", "__mod__", "__rfloordiv__", "__rmod__")

TORCH_METHODS = (
    "absolute", "absolute_", "acos_", "acosh_", "addbmm_", "addcdiv_", "addcmul_", "addmm_", "addmv_", "addr_",
    "allclose", "apply_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan2_", "arctan_",
    "arctanh_", "argsort", "argwhere", "as_strided", "as_strided_", "as_strided_scatter", "as_subclass", "asin_",
    "asinh_", "atan2_", "atan_", "atanh_", "baddbmm_", "bernoulli", "bernoulli_", "bfloat16", "bincount",
    "bitwise_and", "bitwise_and_", "bitwise_left_shift", "bitwise_left_shift_", "bitwise_not", "bitwise_not_",
    "bitwise_or", "bitwise_or_", "bitwise_right_shift", "bitwise_right_shift_", "bitwise_xor", "bitwise_xor_",
    "byte", "cauchy_", "ccol_indices", "cdouble", "ceil_", "cfloat", "chalf", "char", "cholesky",
    "cholesky_inverse", "cholesky_solve", "clamp_max_", "clamp_min_", "coalesce", "col_indices", 
    "conj_physical_", "const_data_ptr", "copysign_", "corrcoef", "cosh_", "count_nonzero", "cov",
    "cross", "crow_indices", "cumprod_", "cumsum_", "deg2rad_", "dense_dim", "dequantize", "det", "diag",
    "diag_embed", "diagflat", "diagonal_scatter", "digamma_", "dim_order", "dist", "divide", "divide_", "eig",
    "eq_", "erf_", "erfc_", "erfinv_", "exp2_", "expm1_", "exponential_", "fill_diagonal_", "fix_", "float_power_",
    "floor_", "floor_divide", "floor_divide_", "fmod_", "frac_", "frexp", "gcd", "gcd_", "ge_", "geometric_",
    "geqrf", "get_device", "greater", "greater_", "greater_equal", "greater_equal_", "gt_", "hardshrink",
    "hash_tensor", "heaviside", "heaviside_", "histc", "hypot_", "i0", "i0_", "igamma", "igamma_", "igammac",
    "igammac_", "index", "index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_",
    "index_put", "index_reduce", "index_reduce_", "indices", "inner", "int_repr", "inverse", "ipu", "is_coalesced",
    "is_complex", "is_conj", "is_distributed", "is_neg", "is_nonzero", "is_pinned", "is_same_size", "is_set_to",
    "is_shared", "is_signed", "isclose", "isfinite", "isinf", "isneginf", "isposinf", "isreal", "istft", "kron",
    "lcm", "lcm_", "ldexp_", "le_", "lerp_", "less", "less_", "less_equal", "less_equal_", "lgamma_", "log10_",
    "log1p_", "log2_", "log_normal_", "logdet", "logical_and", "logical_and_", "logical_not", "logical_not_",
    "logical_or", "logical_or_", "logical_xor", "logical_xor_", "logit_", "lstsq", "lt_", "lu", "lu_solve", "map2_",
    "map_", "masked_scatter", "masked_scatter_", "matrix_exp", "matrix_power", "module_load", "moveaxis", "mtia",
    "multinomial", "multiply", "multiply_", "mvlgamma", "mvlgamma_", "nan_to_num_", "nanquantile", "narrow_copy",
    "ndimension", "ne_", "negative", "negative_", "nelement", "new", "new_empty", "new_empty_strided", "new_full",
    "new_tensor", "nextafter", "nextafter_", "nonzero", "nonzero_static", "normal_", "not_equal", "not_equal_",
    "orgqr", "ormqr", "pin_memory", "pinverse", "polygamma_", "prelu", "put", "put_", "q_per_channel_axis",
    "q_per_channel_scales", "q_per_channel_zero_points", "q_scale", "q_zero_point", "qr", "qscheme", "quantile",
    "rad2deg_", "random_", "reciprocal_", "record_stream", "reinforce", "remainder_", "renorm", "renorm_", "resize",
    "resize_", "resize_as", "resize_as_", "resize_as_sparse_", "resolve_neg", "round_",
    "row_indices", "rsqrt_", "scatter_", "scatter_add_", "scatter_reduce", "scatter_reduce_", "select_scatter",
    "set_", "sgn_", "share_memory_", "short", "sign_", "signbit", "sinc_", "sinh_", "slice_inverse",
    "slice_scatter", "slogdet", "smm", "solve", "sparse_dim", "sparse_mask", "sparse_resize_",
    "sparse_resize_and_clear_", "square_", "squeeze_", "sspaddmm", "stft", "storage", "storage_type", "subtract",
    "subtract_", "svd", "swapaxes", "swapaxes_", "swapdims", "swapdims_", "symeig", "t_", "take", "tan_",
    "to_dense", "to_mkldnn", "to_padded_tensor", "to_sparse", "to_sparse_bsc", "to_sparse_bsr", "to_sparse_coo",
    "to_sparse_csc", "to_sparse_csr", "transpose_", "triangular_solve", "tril_", "triu_", "true_divide_", "trunc_",
    "type_as", "unfold", "uniform_", "unique", "unique_consecutive", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "unsqueeze_", "untyped_storage", "values", "xlogy_", "xpu"
)


class TorchMethods:
    """The methods of TORCH_OPERATORS and TORCH_METHODS, each torch's own run through interop.handle."""


for _name in TORCH_OPERATORS + TORCH_METHODS:
    setattr(TorchMethods, _name, interop.tensor_method(getattr(torch.Tensor, _name)))
