"""`tg.utils` mirrors `torch.utils`: `tg.utils.checkpoint`, `tg.utils.data`."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
