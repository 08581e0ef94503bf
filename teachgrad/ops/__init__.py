"""The built-in ops. Each is a `Function` with torch's node name; its backward uses only
operators and methods that torch tensors and Variables share, so the same formula computes
plain gradients (handed tensors) and records a graph for higher-order ones (handed Variables).
"""
from .arithmetic import Add, AddByNumber, Div, DivByNumber, DivRounding, Mul, MulByNumber, Neg, Reciprocal, Rsub, RsubTensor, Sub, SubByNumber
from .power import Pow, PowScalarBase, PowTensor
from .linalg import Addmm, Dot, Mm, Mv, matmul
from .pointwise import Abs, Clamp, ClampMax, ClampMaxTensor, ClampMin, ClampMinTensor, ClampTensor, Cos, Exp, Log, MaskedFill, MaskedFillTensor, Maximum, Minimum, Relu, Sigmoid, Sign, Sin, Sqrt, Tanh, Where, Xlogy, XlogyScalarOther, XlogyScalarSelf
from .reduction import Max, MaxDim, Mean, MeanDim, Min, MinDim, Norm, NormDim, Sum, SumDim
from .shape import Alias, Cat, Clone, CopyGrad, Diagonal, Expand, FwPrimal, Index, Permute, ReshapeAlias, Select, Slice, Split, SplitWithSizes, Squeeze, SqueezeDim, SqueezeDims, Stack, T, ToCopy, ToFreshCopy, Transpose, Unbind, Unsqueeze, UnsafeView, View, getitem, reshape
from .writes import Copy, Fill, FillTensor, IndexPut, Zero
# more reductions, element-wise functions, indexing, scans, layouts, activations, layers
from .activation import Elu, Erf, Gelu, LeakyRelu, LogSigmoid, LogSoftmax, Silu, Softmax, Softplus
from .einsum import Bmm, einsum, movedim
from .indexing import Embedding, Gather, IndexSelect, MaskedSelect, Scatter, ScatterAdd, ScatterValue
from .layers import AvgPool2d, Convolution, ConvolutionTranspose, MaxPool2d, NativeBatchNorm, NativeDropout, NativeLayerNorm
from .layout import ConstantPadNd, Flip, Repeat, Roll, Tril, Triu
from .scan import Cumprod, Cumsum, Logcumsumexp, Sort, SortStable, Topk
from .losses import (BinaryCrossEntropy, BinaryCrossEntropyWithLogits, CtcLoss, HuberLoss, MseLoss, NllLoss, NllLoss2d,
                     SmoothL1Loss, SoftMarginLoss)
from .statistics import Histogram, Logsumexp, Std, Var
from .unary import Expm1, Log10, Log1p, Log2, Rsqrt
from .attention import SafeSoftmax, ScaledDotProductFlashAttentionForCpu
# more element-wise math: trigonometry, the gamma family, rounding, functions of two tensors
from .pointwise_math import (Acos, Acosh, Addcdiv, Addcmul, Asin, Asinh, Atan, Atan2, Atanh, Ceil, Copysign, CopysignScalar, Cosh,
                             Deg2rad, Digamma, Erfc, Erfinv, Exp2, Floor, Fmax, Fmin, Fmod, FmodScalar, Frac, Hypot, Ldexp, Lerp,
                             LerpTensor, Lgamma, Logaddexp, Logaddexp2, Logit, NanToNum, Polygamma, Rad2deg, Remainder,
                             RemainderScalar, Round, RoundDecimals, Sgn, Sinc, Sinh, Tan, Trunc)
from .selection import (Amax, Amin, Aminmax, Cummax, Cummin, Kthvalue, Median, MedianDim, Mode, Nanmedian,
                        NanmedianDim, Nansum, Prod, ProdDim, StdMean, VarMean)
from .products import Addbmm, AddmmScaled, Addmv, Addr, Baddbmm, Rot90, Trace, Vdot
from .activation_more import Glu, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, Prelu, Softshrink, Threshold
from .padding_pooling import (PADS, AdaptiveAvgPool2d, AdaptiveMaxPool2d, ReflectionPad1d, ReflectionPad2d,
                              ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d)
