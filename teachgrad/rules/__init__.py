"""torch's rules beside `apply` and the engine: what torch does around the story, each rule in its own module
(saved tensors and their versions, views and in-place writes through them, hooks in torch's order, the checks of
a gradient, which nodes run for `grad(inputs=...)`, torch tensors as leaves, tangents while forward mode is on).

Each module names in its docstring the tests that prove it against torch. Nothing here imports
teachgrad/core/variable.py: the Variable class is handed over once, in variable_class.py.
"""
