"""The built-in ops. Each is a `Function` with torch's node name; its backward uses only
operators and methods that torch tensors and Variables share, so the same formula computes
plain gradients (handed tensors) and records a graph for higher-order ones (handed Variables).

The modules are torch's families (arithmetic, pointwise math, reductions, shapes, products, layers, losses, ...).
Every op class of them is here under its own name (`ops.Mul`, `ops.Tan`): read from the modules, not listed, so an
op is written once, in its module, with what the rest of the package needs declared in its class line.
"""
from ..core.function import Function as _Function
from . import (activation, activation_more, arithmetic, attention, complex, einsum, fft, indexing, layers, layout,
               linalg, linalg_decompositions, losses, padding_pooling, pointwise, pointwise_math, power, products,
               reduction, rnn, sampling_layers, scan, selection, shape, special, statistics, unary, writes)
FAMILIES = (arithmetic, power, linalg, linalg_decompositions, pointwise, reduction, shape, writes, activation, einsum,
            indexing, layers, layout, scan, losses, statistics, unary, attention, pointwise_math, selection, products,
            activation_more, padding_pooling, rnn, special, sampling_layers, complex, fft)

for _family in FAMILIES:   # every public op class, under its name
    for _name, _op in vars(_family).items():
        if isinstance(_op, type) and issubclass(_op, _Function) and _op.__module__ == _family.__name__ \
                and not _name.startswith("_"):
            globals()[_name] = _op

# the ops' functions that are not classes: matmul's dispatch on shapes, indexing, reshape, einsum, the paddings
from .linalg import matmul
from .shape import getitem, reshape
from .einsum import einsum, movedim
from .padding_pooling import PADS
