#!/usr/bin/env python
"""Write the student edition of the series: the notebooks without their solutions.

    python scripts/make_student.py                 # notebooks/*.ipynb -> build/student/*.ipynb
    python scripts/make_student.py SRC_DIR OUT_DIR

Cells tagged `solution` are left out. In every other cell a solution region (nbgrader's markers
`### BEGIN SOLUTION` / `### END SOLUTION`) is replaced as nbgrader replaces it, by
`# YOUR CODE HERE` and `raise NotImplementedError()` at the region's indentation. The solution
cells also carry nbgrader metadata, so an instructor's `nbgrader generate_assignment` works on
notebooks/ as well.
"""
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def clear_regions(source: str) -> str:
    """nbgrader's ClearSolutions on one cell's source (code cells)."""
    lines, out, inside = source.split("\n"), [], False
    for line in lines:
        if line.strip() == BEGIN:
            inside = True
            indent = re.match(r"\s*", line).group(0)
            out += [indent + "# YOUR CODE HERE", indent + "raise NotImplementedError()"]
        elif line.strip() == END:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def student(nb):
    """The notebook without solution cells, solution regions cleared."""
    cells = []
    for cell in nb.cells:
        if "solution" in cell.metadata.get("tags", []):
            continue
        if cell.cell_type == "code" and BEGIN in cell.source:
            cell.source = clear_regions(cell.source)
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    nb.cells = cells
    return nb


def main(source=ROOT / "notebooks", out=ROOT / "build" / "student"):
    source, out = Path(source), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("[0-9][0-9]_*.ipynb")):
        nb = student(nbformat.read(path, as_version=4))
        nbformat.write(nb, out / path.name)
        print(f"{out / path.name}")


if __name__ == "__main__":
    main(*sys.argv[1:])
