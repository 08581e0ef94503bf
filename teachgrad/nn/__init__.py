"""Neural-network functions (losses, activations, linear), mirroring `torch.nn`."""
from . import functional
