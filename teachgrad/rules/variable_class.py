"""The Variable class, handed to the layers below it once, at start-up.

`Variable` stands on everything else: its methods run ops, its `backward` runs the engine. The layers below
it make and recognise Variables too (`Function.apply` wraps what forward returns; a rule checks whether an
argument is one), but importing teachgrad/core/variable.py from there would tie them into a circle with it.
So, as torch's C++ core is handed the Python `torch.Tensor` class when torch starts, teachgrad/core/variable.py
hands its classes over here when it is first imported, and the layers below read them from here:

    from ..rules import variable_class
    isinstance(x, variable_class.Variable)

Not even for type hints: a hint here would be an import up the layers (tests/test_imports.py counts those too).

Guarded by tests/test_imports.py (nothing below Variable imports it).
"""
Variable: type     # teachgrad/core/variable.py's Variable, set by that module below its class
TorchLeaf: type    # its TorchLeaf: a torch tensor that requires grad, standing inside a teachgrad op


def hand_over(variable: type, torch_leaf: type) -> None:
    """Called once by teachgrad/core/variable.py, with its classes."""
    global Variable, TorchLeaf
    Variable, TorchLeaf = variable, torch_leaf
