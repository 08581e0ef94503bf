"""Resampling layers, as torch's docs group them under "Vision functions": upsampling (nearest, nearest-exact,
linear, bilinear, bicubic, trilinear, antialiased bilinear and bicubic), grid sampling and the affine grid,
pixel shuffle / unshuffle, and unfold / fold (im2col / col2im). Also the 3-D adaptive average pool that
interpolate's mode='area' calls on 5-D input.

Forward calls torch's kernel, so values are torch's to the bit. Each op but grid sampling is linear in its input:
its gradient is a linear map of the incoming gradient (torch's backward kernel on plain tensors), and under
create_graph that map is recorded as the node torch records (`UpsampleBilinear2DBackwardBackward0`, or for
pixel shuffle and im2col the other op of the pair: the gradient of a shuffle is an unshuffle, of an unfold a fold).
Formulas from torch's tools/autograd/derivatives.yaml.

Guarded by tests/test_nn_functional_more.py (each op against torch) and tests/test_op_db.py (torch's own samples).
"""
import torch

from ..core.function import Function
from ..rules import variable_class
from .layers import NoDoubleBackward, _data
from .padding_pooling import _Kernels

aten = torch.ops.aten


def _scales(scale_factors, n):
    """The per-dim scales the `.vec` kernels hand their backward: scale_factors[i], or None for each dim."""
    return list(scale_factors) if scale_factors is not None else [None] * n


# --- upsampling: function(a, output_size, [align_corners,] scale_factors) -------------------------------------
# Given the output size, torch's kernel with it and the scales (None, or the ones the size came from); given only
# scales, the `.vec` overload, which computes the size from them. The backward kernel takes the output size (the
# gradient's last dims) and the input's size.

def _nearest(name, n):
    kernel = getattr(aten, name)
    backward = getattr(aten, name + "_backward").default

    def forward(a, size, scale_factors):
        if size is None:
            return kernel.vec(a, None, scale_factors)
        return kernel.default(a, size, *_scales(scale_factors, n))
    return (staticmethod(forward),
            staticmethod(lambda grad, a, size, scale_factors: backward(grad, list(grad.shape[2:]), list(a.shape),
                                                                      *_scales(scale_factors, n))))


def _interpolating(name, n):
    kernel = getattr(aten, name)
    backward = getattr(aten, name + "_backward").default

    def forward(a, size, align_corners, scale_factors):
        if size is None:
            return kernel.vec(a, None, align_corners, scale_factors)
        return kernel.default(a, size, align_corners, *_scales(scale_factors, n))
    return (staticmethod(forward),
            staticmethod(lambda grad, a, size, align_corners, scale_factors: backward(
                grad, list(grad.shape[2:]), list(a.shape), align_corners, *_scales(scale_factors, n))))


class _Upsample(_Kernels):
    """An upsampling kernel: its backward takes the input's size, not the input (its second derivative in the
    input is None, as torch's)."""
    kernel_takes_input = False


class UpsampleNearest1d(_Upsample, node="UpsampleNearest1DBackward0"):
    """Each output element is the input element at floor(i * in / out): its gradient is summed back there."""
    function, kernel = _nearest("upsample_nearest1d", 1)


class UpsampleNearest2d(_Upsample, node="UpsampleNearest2DBackward0"):
    function, kernel = _nearest("upsample_nearest2d", 2)


class UpsampleNearest3d(_Upsample, node="UpsampleNearest3DBackward0"):
    function, kernel = _nearest("upsample_nearest3d", 3)


class UpsampleNearestExact1d(_Upsample, node="UpsampleNearestExact1DBackward0"):
    """Nearest with the pixel centres aligned: the input element at floor((i + 1/2) * in / out)."""
    function, kernel = _nearest("_upsample_nearest_exact1d", 1)


class UpsampleNearestExact2d(_Upsample, node="UpsampleNearestExact2DBackward0"):
    function, kernel = _nearest("_upsample_nearest_exact2d", 2)


class UpsampleNearestExact3d(_Upsample, node="UpsampleNearestExact3DBackward0"):
    function, kernel = _nearest("_upsample_nearest_exact3d", 3)


class UpsampleLinear1d(_Upsample, node="UpsampleLinear1DBackward0"):
    """Each output element a weighted mean of its two nearest input elements (weights 1 - t and t): the gradient
    goes back to both with the same weights."""
    function, kernel = _interpolating("upsample_linear1d", 1)


class UpsampleBilinear2d(_Upsample, node="UpsampleBilinear2DBackward0"):
    """Linear interpolation along each of the last two dims (four input elements per output element)."""
    function, kernel = _interpolating("upsample_bilinear2d", 2)


class UpsampleTrilinear3d(_Upsample, node="UpsampleTrilinear3DBackward0"):
    function, kernel = _interpolating("upsample_trilinear3d", 3)


class UpsampleBicubic2d(_Upsample, node="UpsampleBicubic2DBackward0"):
    """Cubic convolution (Keys, a = -0.75) over 4 x 4 input elements: still linear in the input."""
    function, kernel = _interpolating("upsample_bicubic2d", 2)


class UpsampleBilinear2dAa(_Upsample, node="UpsampleBilinear2DAaBackward0"):
    """Bilinear with antialiasing: when shrinking, the triangle filter is widened by the scale, so each output
    element averages every input element under it (as PIL resizes)."""
    function, kernel = _interpolating("_upsample_bilinear2d_aa", 2)


class UpsampleBicubic2dAa(_Upsample, node="UpsampleBicubic2DAaBackward0"):
    function, kernel = _interpolating("_upsample_bicubic2d_aa", 2)


class AdaptiveAvgPool3d(_Kernels, node="AdaptiveAvgPool3DBackward0"):
    """The mean of each of output_size boxes that tile the last three dims (interpolate's mode='area' on 5-D)."""
    function = staticmethod(aten._adaptive_avg_pool3d.default)
    kernel = staticmethod(lambda grad, a, output_size: aten._adaptive_avg_pool3d_backward.default(grad, a))


class AvgPool3d(_Kernels, node="AvgPool3DBackward0"):
    """The mean of each kernel_size box over the last three dims (local_response_norm pools with it)."""
    function = staticmethod(aten.avg_pool3d.default)
    kernel = staticmethod(aten.avg_pool3d_backward.default)


# --- pixel shuffle and im2col: pairs of ops, each the other's gradient ------------------------------------------

class _Pair(Function):
    """A linear op whose gradient is another op (`adjoint`, named by `adjoint_name`), torch's kernel forward:
    backward applies the adjoint (recorded under create_graph, so its node is the one torch records)."""

    @classmethod
    def forward(cls, ctx, a, *options):
        ctx.options, ctx.input_size = options, list(a.shape)
        return cls.function(a, *options)

    @classmethod
    def backward(cls, ctx, grad):
        adjoint = cls.adjoint()
        options = cls.adjoint_options(ctx.input_size, *ctx.options)
        if isinstance(grad, torch.Tensor):
            return (adjoint.function(grad, *options),) + (None,) * len(ctx.options)
        return (adjoint.apply(grad, *options),) + (None,) * len(ctx.options)


class PixelShuffle(_Pair, node="PixelShuffleBackward0", linear=True):
    """(*, C r², H, W) -> (*, C, H r, W r): each group of r² channels laid out as an r x r block of pixels.
    d/dinput: pixel_unshuffle(grad, r)."""
    function = staticmethod(aten.pixel_shuffle.default)
    adjoint = staticmethod(lambda: PixelUnshuffle)
    adjoint_options = staticmethod(lambda input_size, r: (r,))


class PixelUnshuffle(_Pair, node="PixelUnshuffleBackward0", linear=True):
    """(*, C, H r, W r) -> (*, C r², H, W), the inverse of pixel_shuffle. d/dinput: pixel_shuffle(grad, r)."""
    function = staticmethod(aten.pixel_unshuffle.default)
    adjoint = staticmethod(lambda: PixelShuffle)
    adjoint_options = staticmethod(lambda input_size, r: (r,))


class Im2Col(_Pair, node="Im2ColBackward0", linear=True):
    """unfold: (N, C, H, W) -> (N, C k_h k_w, L), each column one sliding window's elements.
    d/dinput: col2im(grad, (H, W), ...): each window's gradient added back where it came from."""
    function = staticmethod(aten.im2col.default)
    adjoint = staticmethod(lambda: Col2Im)
    adjoint_options = staticmethod(lambda input_size, kernel_size, dilation, padding, stride:
                                   (input_size[-2:], kernel_size, dilation, padding, stride))


class Col2Im(_Pair, node="Col2ImBackward0", linear=True):
    """fold: (N, C k_h k_w, L) -> (N, C, H, W), each column's elements added into its window (overlaps sum).
    d/dinput: im2col(grad, ...)."""
    function = staticmethod(aten.col2im.default)
    adjoint = staticmethod(lambda: Im2Col)
    adjoint_options = staticmethod(lambda input_size, output_size, kernel_size, dilation, padding, stride:
                                   (kernel_size, dilation, padding, stride))


# --- grid sampling and the affine grid --------------------------------------------------------------------------

class GridSampler2d(Function, node="GridSampler2DBackward0", saves=("grid", "input")):
    """grid_sample on (N, C, H, W): output[n, :, h, w] is the input read (interpolated) at the point
    grid[n, h, w] = (x, y) in [-1, 1]. Backward: torch's grid_sampler_2d_backward kernel (the input's gradient
    spread back to the pixels each point read; the grid's, the input's slope there). teachgrad computes it once:
    differentiating it again raises (torch records GridSampler2DBackwardBackward0). torch has no forward mode for
    it, and neither does teachgrad (torch's error)."""
    kernel, backward_kernel, name = aten.grid_sampler_2d.default, aten.grid_sampler_2d_backward.default, "grid_sampler_2d"

    @classmethod
    def forward(cls, ctx, input, grid, interpolation_mode, padding_mode, align_corners):
        ctx.options = interpolation_mode, padding_mode, align_corners
        ctx.save_for_backward(grid, input)
        return cls.kernel(input, grid, interpolation_mode, padding_mode, align_corners)

    @classmethod
    def backward(cls, ctx, grad):
        grid, input = ctx.saved_tensors
        mask = [ctx.needs_input_grad[0], ctx.needs_input_grad[1]]
        grads = cls.backward_kernel(_data(grad), _data(input), _data(grid), *ctx.options, mask)
        grads = tuple(g if m else None for g, m in zip(grads, mask))
        if not isinstance(grad, torch.Tensor):   # create_graph: the first derivative, then a node that refuses
            grads = _first_order(f"{cls.name} ({cls.node_name})", grads, grad, input, grid)
        return (*grads, None, None, None)

    @classmethod
    def jvp(cls, ctx, *_):
        raise NotImplementedError(f"Trying to use forward AD with {cls.name} that does not support it because it has "
                                  "not been implemented yet.\nPlease file an issue to PyTorch at "
                                  "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
                                  "we can prioritize its implementation or submit a PR adding the implementation to "
                                  "derivatives.yaml")


class GridSampler3d(GridSampler2d, node="GridSampler3DBackward0", saves=("grid", "input")):
    """grid_sample on (N, C, D, H, W), grid (N, D', H', W', 3): trilinear or nearest."""
    kernel, backward_kernel, name = aten.grid_sampler_3d.default, aten.grid_sampler_3d_backward.default, "grid_sampler_3d"


def _first_order(op, grads, *involved):
    """Gradients computed on plain tensors, as Variables; under create_graph, behind a node that refuses to be
    differentiated (teachgrad/ops/layers.py's NoDoubleBackward)."""
    Variable = variable_class.Variable
    if not any(isinstance(v, Variable) and v.requires_grad for v in involved):
        return tuple(None if g is None else Variable._make(g) for g in grads)
    kept = [g for g in grads if g is not None]
    out = NoDoubleBackward.apply(op, len(kept), *kept, *involved)
    out = iter(out if isinstance(out, tuple) else (out,))
    return tuple(None if g is None else next(out) for g in grads)


def _base_coordinates(steps, align_corners, like):
    """torch's linspace_from_neg_one: `steps` points from -1 to 1 (one point: 0), pulled in by (steps - 1) / steps
    without align_corners (the pixels' centres)."""
    if steps <= 1:
        return torch.zeros(1, dtype=like.dtype, device=like.device)
    points = torch.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return points if align_corners else points * ((steps - 1) / steps)


def base_grid(size, align_corners, like):
    """(N, *spatial, d + 1): each output point's coordinates (x, y[, z]) and a 1, which theta maps to the grid."""
    spatial = list(size[2:])[::-1]   # (W, H) or (W, H, D): x runs along the last dim
    d = len(spatial)
    grid = torch.ones(*size[2:], d + 1, dtype=like.dtype, device=like.device)
    for k, steps in enumerate(spatial):
        shape = [1] * d
        shape[d - 1 - k] = steps
        grid[..., k] = _base_coordinates(steps, align_corners, like).view(shape)
    return grid


class AffineGridGenerator(Function, node="AffineGridGeneratorBackward0", linear=True):
    """affine_grid: grid[n, ...] = theta[n] @ (x, y[, z], 1) at every output point (theta (N, 2, 3) or (N, 3, 4)).
    Linear in theta; d/dtheta = (base_grid^T @ grad)^T per sample, a bmm (recorded so under create_graph, as
    torch's affine_grid_generator_backward records it: ViewBackward0, BmmBackward0, TransposeBackward0)."""

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        ctx.size, ctx.align_corners = list(size), align_corners
        return aten.affine_grid_generator.default(theta, size, align_corners)

    @staticmethod
    def backward(ctx, grad):
        if isinstance(grad, torch.Tensor):
            return aten.affine_grid_generator_backward.default(grad, ctx.size, ctx.align_corners), None, None
        n, d = ctx.size[0], len(ctx.size) - 2
        points = 1
        for s in ctx.size[2:]:
            points *= s
        base = base_grid(ctx.size, ctx.align_corners, _data(grad)).view(1, points, d + 1).expand(n, points, d + 1)
        grad_theta = base.transpose(1, 2).bmm(grad.view(n, points, d))
        return grad_theta.transpose(1, 2), None, None
