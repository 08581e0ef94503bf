#!/usr/bin/env python
"""What `make lab` prepares before JupyterLab starts (the browser test uses the same two functions).

    python scripts/lab_setup.py WORK_DIR CONFIG_DIR

- WORK_DIR, the learner's working copy: each notebook of notebooks/ that is not there yet is copied
  in; one that is there is left alone, so a learner's answers are never overwritten
  (`make lab-reset` deletes the folder to start again).
- CONFIG_DIR/labconfig/page_config.json turns off JupyterLab's announcements pop-up ("Would you like
  to get notified about official Jupyter news?"), which covers the page on first start.
"""
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISABLED_LAB_EXTENSIONS = ["@jupyterlab/apputils-extension:announcements"]


def make_working_copy(source: Path, work: Path) -> list[Path]:
    """Copy the notebooks of `source` that `work` lacks; return the ones copied."""
    work.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in sorted(Path(source).glob("*.ipynb")):
        target = work / path.name
        if not target.exists():
            shutil.copy2(path, target)
            copied.append(target)
    return copied


def write_lab_config(config: Path, **page_config) -> Path:
    """A Jupyter config folder whose labconfig disables the announcements extension."""
    path = Path(config) / "labconfig" / "page_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"disabledExtensions": {name: True for name in DISABLED_LAB_EXTENSIONS},
                                **page_config}, indent=1))
    return path


def main(work="work", config="build/lab-config"):
    copied = make_working_copy(ROOT / "notebooks", ROOT / work)
    write_lab_config(ROOT / config)
    print(f"{work}/: your working copy of the notebooks"
          + (f" ({len(copied)} copied from notebooks/)" if copied else " (kept as you left it)")
          + "; `make lab-reset` starts it again from notebooks/")


if __name__ == "__main__":
    main(*sys.argv[1:])
