"""The set-up files agree with each other: environment.yml (conda, Binder) installs what
pyproject.toml declares, torch is pinned the same everywhere, and the README shows the commands."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"graphviz": "python-graphviz"}  # PyPI name -> conda-forge name where they differ


def _name(requirement):
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].strip().lower()


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _environment():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)}
    pip = [p for d in env["dependencies"] if isinstance(d, dict) for p in d["pip"]]
    return conda, pip


def test_environment_has_every_pyproject_dependency():
    project = _pyproject()
    wanted = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted += extra
    conda, pip = _environment()
    pip_names = {_name(p) for p in pip}
    missing = [r for r in wanted if CONDA_NAMES.get(_name(r), _name(r)) not in conda and _name(r) not in pip_names]
    assert not missing, f"environment.yml lacks {missing}"
    assert "-e ." in pip, "environment.yml must install teachgrad itself"
    assert "graphviz" in conda, "environment.yml must bring Graphviz's dot program"


def test_torch_pinned_the_same_everywhere():
    _, pip = _environment()
    pins = {p for p in pip if _name(p) == "torch"}
    constraints = {line.strip() for line in (ROOT / "constraints.txt").read_text().splitlines() if _name(line) == "torch"}
    makefile = set(re.findall(r"torch==[\d.]+", (ROOT / "Makefile").read_text()))
    assert pins == constraints == makefile == {"torch==2.13.0"}


def test_constraints_pin_every_dependency():
    project = _pyproject()
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    pinned = {_name(line) for line in (ROOT / "constraints.txt").read_text().splitlines() if "==" in line}
    assert wanted <= pinned, f"constraints.txt does not pin {sorted(wanted - pinned)}"


def test_readme_shows_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    assert "environment.yml" in readme
