"""The ops of attention: torch's fused attention kernel on the CPU, and the softmax its math path uses.

`F.scaled_dot_product_attention(q, k, v)` computes softmax(q kᵀ · scale + mask) v. On the CPU torch runs it one
of two ways (teachgrad/nn/functional.py chooses as torch does):

- a fused kernel, `_scaled_dot_product_flash_attention_for_cpu`: one node,
  ScaledDotProductFlashAttentionForCpuBackward0, whose backward is torch's fused backward kernel (below). torch
  has no derivative of that backward: a second derivative meets a node named NotImplemented that raises, as here;
- its math path, made of ordinary ops (matmul, add, `_safe_softmax`, dropout, matmul); `_safe_softmax` is the
  one op of it teachgrad had not: a softmax whose rows that are all -inf give 0, not nan (SafeSoftmax below).

`nn.MultiheadAttention`, asked for its attention weights, computes the scores itself with `baddbmm` (the mask
plus the batched product: teachgrad/ops/products.py).

Guarded by tests/test_attention.py (values, gradients, node names and errors against torch's).
"""
import torch

from ..core.function import Function
from .activation import Softmax
from . import aten


class ScaledDotProductFlashAttentionForCpu(Function, node="ScaledDotProductFlashAttentionForCpuBackward0",
                                           saves=("query", "key", "value", "attn_mask", "output", "logsumexp"),
                                           nondifferentiable_args=(3,)):
    """softmax(q kᵀ · scale + attn_mask) v, computed block by block (a running max and sum, never the whole
    (L, S) matrix of weights) by torch's kernel; it also returns each row's logsumexp, which backward uses.

    Backward (derivatives.yaml: `_scaled_dot_product_flash_attention_for_cpu_backward`), with P the weights
    rebuilt from the logsumexp, P = exp(q kᵀ · scale + mask - logsumexp):
        dv = Pᵀ dO,  dP = dO vᵀ,  dS = P ⊙ (dP - rowsum(dO ⊙ O)),  dq = dS k · scale,  dk = dSᵀ q · scale.
    torch computes it in its fused backward kernel, as here (so the gradients are torch's to the bit).
    """

    @staticmethod
    def forward(ctx, query, key, value, attn_mask, dropout_p, is_causal, scale):
        output, logsumexp = aten._scaled_dot_product_flash_attention_for_cpu(
            query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale)
        ctx.dropout_p, ctx.is_causal, ctx.scale = dropout_p, is_causal, scale
        ctx.save_for_backward(query, key, value, attn_mask, output, logsumexp)
        return output

    @staticmethod
    def backward(ctx, grad):
        query, key, value, attn_mask, output, logsumexp = ctx.saved_tensors
        plain = [_data(t) for t in (grad, query, key, value, attn_mask, output, logsumexp)]
        grads = aten._scaled_dot_product_flash_attention_for_cpu_backward(
            plain[0], *plain[1:4], plain[5], plain[6], ctx.dropout_p, ctx.is_causal, attn_mask=plain[4],
            scale=ctx.scale)
        if isinstance(grad, torch.Tensor):   # first order: the gradients themselves
            return (*grads, None, None, None, None)
        # create_graph: the gradients hang off a node that refuses to be differentiated, as torch's do
        grads = DerivativeNotImplemented.apply("_scaled_dot_product_flash_attention_for_cpu_backward", 3, *grads,
                                               grad, query, key, value)
        return (*grads, None, None, None, None)

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError(
            "Trying to use forward AD with _scaled_dot_product_flash_attention_for_cpu that does not support it "
            "because it has not been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
            "its implementation or submit a PR adding the implementation to derivatives.yaml")


class DerivativeNotImplemented(Function, node="NotImplemented", qualified_name="torch::autograd::NotImplemented"):
    """Where the gradients of an op whose backward kernel torch cannot differentiate hang under create_graph=True
    (the fused attention here, ctc_loss in teachgrad/ops/losses.py): differentiating them again raises torch's
    error, naming the kernel. Its inputs are what the gradients were computed from (the incoming gradient, the op's
    inputs), so a second derivative with respect to any of them reaches it: never a silent None."""

    @staticmethod
    def forward(ctx, kernel, n_grads, *grads_then_inputs):
        ctx.kernel = kernel
        grads = grads_then_inputs[:n_grads]
        return grads if n_grads > 1 else grads[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.kernel} is not implemented")


class SafeSoftmax(Softmax, node="SafeSoftmaxBackward0", saves=("result",), batching=("along", 1)):
    """torch's `_safe_softmax`: softmax along dim, except that a row whose inputs are all -inf (every key masked
    out) gives zeros rather than nan. Backward and jvp are softmax's (derivatives.yaml: the same
    `_softmax_backward_data`): where the result is 0 its gradient is 0."""

    @staticmethod
    def forward(ctx, input, dim):
        result = aten._safe_softmax(input, dim)
        ctx.dim = dim
        ctx.save_for_backward(result)
        return result


def _data(x):
    return getattr(x, "data", x) if x is not None else None
