"""`tg.utils` mirrors `torch.utils`: `tg.utils.checkpoint`."""
from . import checkpoint

__all__ = ["checkpoint"]
