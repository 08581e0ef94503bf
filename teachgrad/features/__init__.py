"""Features the user switches on: a user's own Function (custom_function), ctx.mark_dirty, forward mode's public
API, anomaly mode, saved-tensor hooks, once_differentiable, vmap (vmap, batched_variable, batching_rules). While
one is off it costs at most one test of a mode word on the hot path.
"""
