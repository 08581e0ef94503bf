#!/usr/bin/env python
"""Re-execute notebooks top to bottom on a fresh kernel and store their outputs (what nbval compares).

    python scripts/execute_notebooks.py                   # every notebook in notebooks/
    python scripts/execute_notebooks.py notebooks/01_*.ipynb

Cells tagged `raises-exception` may fail; any other error stops with the notebook's name.
"""
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path):
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    client = NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)   # timestamps: noise in every diff
    nbformat.write(nb, path)
    return time.perf_counter() - started


def main(args):
    paths = [Path(a).resolve() for a in args] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        seconds = execute(path)
        print(f"{path.relative_to(ROOT)}: executed in {seconds:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
