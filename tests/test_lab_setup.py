"""`make lab` serves a working copy (never overwriting a learner's edits) with the announcements pop-up off."""
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("lab_setup", ROOT / "scripts" / "lab_setup.py")
lab_setup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab_setup)


def test_working_copy_is_made_once_and_keeps_edits(tmp_path):
    source = tmp_path / "notebooks"
    source.mkdir()
    (source / "00_a.ipynb").write_text("original")
    work = tmp_path / "work"
    assert [p.name for p in lab_setup.make_working_copy(source, work)] == ["00_a.ipynb"]
    (work / "00_a.ipynb").write_text("the learner's answer")
    (source / "01_b.ipynb").write_text("new in the series")
    assert [p.name for p in lab_setup.make_working_copy(source, work)] == ["01_b.ipynb"]
    assert (work / "00_a.ipynb").read_text() == "the learner's answer"


def test_lab_config_disables_announcements(tmp_path):
    path = lab_setup.write_lab_config(tmp_path / "config", buildCheck=False)
    page = json.loads(path.read_text())
    assert page["disabledExtensions"] == {"@jupyterlab/apputils-extension:announcements": True}
    assert page["buildCheck"] is False


def test_make_lab_serves_the_working_copy_with_that_config():
    makefile = (ROOT / "Makefile").read_text()
    lab = re.search(r"^lab:.*?(?=^\S)", makefile, re.S | re.M).group(0)
    assert "scripts/lab_setup.py $(WORK) $(LAB_CONFIG)" in lab
    assert "JUPYTER_CONFIG_DIR=$(LAB_CONFIG)" in lab and lab.rstrip().endswith("$(WORK)/")
    assert "\n/work/\n" in "\n" + (ROOT / ".gitignore").read_text(), "work/ must be git-ignored"
    assert re.search(r"^lab-reset:\n\trm -rf \$\(WORK\)", makefile, re.M)
