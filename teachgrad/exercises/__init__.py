"""The checks behind the notebooks' exercises: `check_w_grad(w_grad_by_hand)` answers "✓ correct" or "not yet".

Every check
- recomputes what it compares with, with teachgrad *and* torch (it never reads a notebook's variables);
- never raises: a learner's exception becomes a "not yet" naming it, with a hint;
- accepts reasonable forms of an answer: numbers, lists, tuples, torch tensors of any float dtype,
  teachgrad Variables;
- gives a hint that nudges (`hint=1`, the default) or names the method (`hint=2`), never the answer;
- gives the same verdict however often it runs.

A check returns a `Verdict`: it prints as its message and is true only when the answer is right.

One module per notebook, named after it: `nb04_build_your_own_engine.py` holds the checks notebook
04_build_your_own_engine.ipynb calls. `_verdicts.py` holds what every check shares (`Verdict`, the "✓ correct" and
"not yet" messages, reading an answer); `_graphs.py` the graphs notebook 04's checks run a learner's engine on.
A notebook imports its checks from here: `from teachgrad.exercises import check_dg`. Every name imported below
can be imported so, the constants and problem makers outside `__all__` too.
"""
from ._graphs import DEEP, deep_chain, diamond_chain, random_graph
from ._verdicts import Verdict
from .nb00_why_autograd import check_dg
from .nb01_forward_and_backward import check_grads
from .nb02_variables_and_functions import check_predictions
from .nb03_graph_and_engine import check_count_and_sum
from .nb04_build_your_own_engine import check_my_grad, check_topo_grad
from .nb05_gradient_accumulation import check_scale
from .nb06_retain_graph import SECOND_BACKWARD_LOSSES, check_second_backward
from .nb07_no_grad_and_detach import check_frozen_loss
from .nb08_inplace_and_views import VIEW_WRITE_W, check_normalize_rows, check_view_write, view_write
from .nb09_anomaly_and_inference_mode import check_safe_sqrt
from .nb10_single_layer_network import check_w_grad
from .nb11_custom_functions import check_xsinx
from .nb12_training import check_momentum
from .nb13_higher_order import check_third_derivative
from .nb14_forward_mode import check_jacobian_by_columns
from .nb15_memory import check_half_hooks
from .nb16_devices import check_meta_grads
from .nb17_backprop_by_hand import (BACKPROP_NAMES, ROUND_OFF, backprop_problem, backprop_reference, check_backprop,
                                    compare_table)
from .nb18_function_transforms import check_mm_batch_rule, check_vjp_from_jvps
from .nb19_attention_and_a_small_gpt import check_attention_backward, check_softmax_backward
from .nb23_data_parallel import check_bucketed_reducer

__all__ = ["Verdict", "check_dg", "check_grads", "check_predictions", "check_count_and_sum", "check_my_grad",
           "check_scale", "check_second_backward", "check_frozen_loss", "check_w_grad", "check_xsinx",
           "check_momentum", "check_third_derivative", "check_meta_grads", "check_backprop", "check_safe_sqrt",
           "random_graph", "diamond_chain", "compare_table", "check_normalize_rows", "check_half_hooks",
           "check_jacobian_by_columns", "check_topo_grad", "deep_chain", "check_view_write", "view_write",
           "check_mm_batch_rule", "check_vjp_from_jvps",
           "check_softmax_backward", "check_attention_backward", "check_bucketed_reducer"]
