"""`tg.nn.parallel`: data parallel training at torch's path (`torch.nn.parallel`).

- `DistributedDataParallel` (distributed.py): one process per rank, gradients averaged during backward by a
  reducer with torch's design (reducer.py: buckets, a hook per parameter, an asynchronous all-reduce per full
  bucket, a callback at the end of backward);
- `DataParallel` (data_parallel.py): torch's where it only calls the module, refused where it would replicate it.
"""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
