"""teachgrad: PyTorch's autograd rebuilt small and readable, on top of torch tensors.

    import teachgrad as tg
    p = tg.tensor(3.0, requires_grad=True)
    q = tg.tensor(5.0, requires_grad=True)
    s = tg.tensor(2.0, requires_grad=True)
    t = (p + q) * s          # Variable(16., grad_fn=<MulBackward0>)
    t.backward()             # p.grad, q.grad: 2.   s.grad: 8.

The package is laid out in layers, imports running one way (down): core/ is the story (variable, function,
node, engine), rules/ torch's rules beside it, ops/ the ops, features/ what the user switches on, api/ the API
surface, and at torch's paths autograd/, nn/, optim, utils/, func, functorch, special; check, viz, exercises
and short_errors are the teaching tools. docs/architecture.md is the map; tests/test_imports.py checks it.
"""
from torch import (bfloat16, bool, device, double, dtype, float16, float32, float64, int32, int64, long,
                   manual_seed, Size)
from torch import float as float  # noqa: A001  (torch's name for float32)
# torch's own objects where no gradient flows: random generators and their state, the cuda namespace
from torch import Generator, cuda, default_generator, get_rng_state, initial_seed, seed, set_rng_state
# ... and more of torch's own where no gradient flows: dtypes and layouts, constants, settings, files (a Variable
# is saved and loaded by torch's rules, see Variable.__reduce_ex__)
from torch import cdouble, complex128
from torch import (backends, cfloat, channels_last, complex64, contiguous_format, e, finfo, get_default_dtype,
                   get_default_device, get_num_threads, half, iinfo, inf, int8, int16, load, nan, pi, preserve_format, save,
                   set_default_device, set_default_dtype, set_num_threads, set_printoptions, short, strided, uint8,
                   use_deterministic_algorithms)

from .core.variable import Variable   # first: it stands on every layer below, and hands its class to them
from . import autograd, nn, ops, optim, utils
from .core import engine
from .core.engine import grad
from .api import interop
from .tensor_types import BoolTensor, DoubleTensor, FloatTensor, LongTensor, Tensor
from .api.factories import (arange, empty, eye, from_numpy,
                            full, full_like, linspace, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                            randperm, tensor, zeros, zeros_like)
from .api import op_families as _op_families, torch_functions as _torch_functions, torch_signatures as _torch_signatures
from .api.declared import FUNCTIONS as _DECLARED_FUNCTIONS, public_functions as _public_functions
from .api.sampling import multinomial, normal
from .features.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .features.custom_function import Function
from .features.once_differentiable import once_differentiable
from .nn.functional import conv1d, conv2d, dropout_function as dropout, max_pool2d_function as max_pool2d
from .nn.functional import conv_transpose1d, conv_transpose2d, ctc_loss_function as ctc_loss
from .nn.functional import (adaptive_avg_pool1d, adaptive_max_pool1d, avg_pool1d, conv3d, conv_transpose3d,
                            hardshrink, max_pool1d, prelu)
from .nn.functional import (batch_norm_function as batch_norm, embedding_function as embedding,
                            layer_norm_function as layer_norm)
from .nn.functional import (affine_grid_generator, celu_function as celu, cosine_similarity_function as
                            cosine_similarity, embedding_bag_function as embedding_bag, grid_sampler,
                            grid_sampler_2d, grid_sampler_3d, group_norm_function as group_norm,
                            instance_norm_function as instance_norm, native_group_norm,
                            pairwise_distance, pixel_shuffle, pixel_unshuffle, rrelu_function as rrelu,
                            selu_function as selu)
from .nn.functional import _upsample_bilinear2d_aa  # noqa: F401  (torch._upsample_bilinear2d_aa)
from .nn.rnn import gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell  # torch.lstm, ...
from .rules.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                              set_grad_enabled)
from . import func   # torch.func's transforms, on teachgrad's engine
from . import special   # torch.special's functions
from . import compiler   # tg.compile: the graph captured, partitioned, generated and replayed
from .compiler import compile  # noqa: A001  (torch's name)
from . import linalg   # torch.linalg's functions
# torch's top-level names for them (det and matrix_exp are declared by their ops: see below)
from .api.linalg import (cholesky_inverse, geqrf, cholesky_legacy as cholesky, cholesky_solve, cross_legacy as cross,
                         inv as inverse, logdet, lu_legacy as lu, lu_solve_legacy as lu_solve,
                         lu_unpack, ormqr, pinverse, qr_legacy as qr, slogdet_legacy as slogdet,
                         svd_legacy as svd, triangular_solve)
from .api.linalg import matrix_power
from . import fft    # torch.fft's transforms

# the ops whose class line declares torch's names, under those names: tg.tan, tg.hypot, ... (teachgrad/api/declared.py)
globals().update(_DECLARED_FUNCTIONS)
# the ops whose arguments need reading as torch reads them, written out by family: every public function of these
# modules under its own name (tg.sum, tg.var, tg.addcmul, ...), read from the modules, not listed here
for _module in (_torch_functions, _torch_signatures, _op_families):
    globals().update(_public_functions(_module))
del _module

import sys as _sys  # noqa: E402
_sys.modules[__name__ + ".cuda"] = cuda   # `import teachgrad.cuda` finds torch's, as `teachgrad.cuda` does
_sys.modules[__name__ + ".functorch.compile"] = compiler.aot   # functorch.compile's names (teachgrad/compiler/aot.py)
# Files pickled by earlier versions name the module Variable was rebuilt from then: those names still load.
_sys.modules[__name__ + ".variable"] = _sys.modules[__name__ + ".core.variable"]
_sys.modules[__name__ + ".tensor_methods"] = _sys.modules[__name__ + ".api.tensor_methods"]
# torch.cat(x) -> tg.cat(x), torch.linalg.det(x) -> tg.linalg.det(x), torch.special.i0e(x) -> tg.special.i0e(x):
# see api/interop.py
interop.hand_over_namespaces(_sys.modules[__name__], nn.functional, special, linalg)

__version__ = "0.1.0"

import gc as _gc  # noqa: E402
# What torch and teachgrad made at import (modules, classes, functions: about 170,000 objects) lives as long as the
# process. Python's full collections walk every object they track, and a recorded graph's nodes set one off every
# ~20,000 nodes: moved out of the collector's way once, here, those objects are not walked again (docs/speed.md,
# "The chain and the garbage collector"). Reference counting still frees any of them nothing refers to.
_gc.freeze()


def __getattr__(name):
    if name in ("viz", "check"):  # teaching tools, imported on first use (viz needs the graphviz package)
        import importlib
        return importlib.import_module("." + name, __name__)
    function = interop.module_function(name)   # torch's own ATen function of that name, run as interop says
    if function is not None:
        globals()[name] = function
        return function
    raise AttributeError(f"module 'teachgrad' has no attribute '{name}'")
