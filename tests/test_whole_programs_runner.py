"""scripts/whole_programs.py, the whole-program runner, on tiny programs these tests write themselves.

The real programs it runs are other people's and are read from fetched snapshots, so they are not here; these
tests check its own logic offline: how programs are cut into cells, how the two runs are compared, and a run end
to end with a stand-in twin ("fakegrad": torch with `ones` made wrong and `cumsum` refused) so that every verdict
is reached whatever teachgrad covers today.
"""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "whole_programs.py"
spec = importlib.util.spec_from_file_location("whole_programs", SCRIPT)
wp = importlib.util.module_from_spec(spec)
sys.modules["whole_programs"] = wp   # dataclasses look their module up there
spec.loader.exec_module(wp)


# --- cutting programs into cells ---------------------------------------------------------------------------------

def test_notebook_cells_are_code_cells_with_magics_made_pass():
    nb = {"cells": [{"cell_type": "markdown", "source": ["# title"]},
                    {"cell_type": "code", "source": ["%matplotlib inline\n", "a = 1"]},
                    {"cell_type": "code", "source": "  !ls\nb = a + 1"}]}
    cells = wp.notebook_cells(json.dumps(nb))
    assert [c.code for c in cells] == ["pass\na = 1", "  pass\nb = a + 1"]
    assert [c.where for c in cells] == ["code cell 1", "code cell 2"]


def test_gallery_script_splits_at_percent_and_hash_rules_and_drops_prose():
    script = '"""Title\n=====\n"""\nimport math\n# %%\n# Some prose only\n\n' + "#" * 30 + "\nx = math.pi\nx\n"
    cells = wp.gallery_cells(script)
    assert [c.code.strip() for c in cells] == ['"""Title\n=====\n"""\nimport math', "x = math.pi\nx"]
    assert cells[1].where == "line 9"


def test_d2l_takes_the_pytorch_tab_only():
    chapter = textwrap.dedent("""\
        ```{.python .input}
        %load_ext d2lbook.tab
        ```
        ```{.python .input}
        %%tab mxnet
        m = 1
        ```
        ```{.python .input  n=3}
        %%tab pytorch
        p = 2
        ```
        ```{.python .input}
        %%tab mxnet, pytorch
        both = 3
        ```
        """)
    assert [c.code.strip() for c in wp.d2l_cells(chapter)] == ["p = 2", "both = 3"]


def test_rst_code_blocks_are_dedented():
    page = "Intro\n\n.. code-block:: python\n\n    a = 1\n    if a:\n        b = 2\n\nText after.\n"
    (cell,) = wp.rst_cells(page)
    assert cell.code.strip() == "a = 1\nif a:\n    b = 2"


def test_pytest_file_runs_its_body_then_each_test():
    cells = wp.pytest_cells("import math\ndef helper(): pass\ndef test_one():\n    pass\ndef test_two(x):\n    pass\n")
    assert [c.code for c in cells[1:]] == ["test_one()"]   # a test taking fixtures is not called
    assert cells[0].where == "module body"


def test_docstring_examples_leave_out_what_needs_a_resource():
    doc = ">>> a = 1\n>>> b = 2  # xdoctest: +REQUIRES(module:foo)\n\n>>> a + 1  # xdoctest: +SKIP\n2\n"
    cells, why = wp.docstring_cells(doc)
    assert [c.code for c in cells] == ["a + 1  # xdoctest: +SKIP"] and why is None
    cells, why = wp.docstring_cells(">>> # xdoctest: +REQUIRES(env:TORCH_DOCTEST_CUDA)\n>>> x = 1\n")
    assert cells == [] and "REQUIRES" in why


def test_docstring_parts_are_runs_of_prompt_lines_as_torch_writes_them():
    doc = textwrap.dedent("""\
        Example::

            >>> class Twice:
            >>>     def __call__(self, x):
            ...         return 2 * x
            >>> Twice()(3)
            6
            >>> y = 1
            >>> y
        """)
    cells, _ = wp.docstring_cells(doc)
    assert [c.code for c in cells] == [
        "class Twice:\n    def __call__(self, x):\n        return 2 * x\nTwice()(3)", "y = 1\ny"]
    assert [c.where for c in cells] == ["part 1", "part 2"]


# --- comparing ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ours, theirs, same", [
    ("loss 2.3456", "loss 2.3457", True),              # the last printed digit may differ
    ("loss 2.3456", "loss 2.3470", False),
    ("Variable([1., 2.],\n         requires_grad=True)", "tensor([1., 2.],\n       requires_grad=True)", True),
    ("<Foo object at 0x7f00aa>", "<Foo object at 0x7f11bb>", True),
    ("1.0e-05", "1.1e-05", True),
    ("1.0e-05", "1.3e-05", False),
    ("a b", "a c", False),
    ("27 names", "28 names", False),                   # integers must be equal
    ("tensor(1.)", "tensor(2.)", False),
    ("[1, 2]", "[1, 2, 3]", False),
])
def test_same_text(ours, theirs, same):
    assert wp.same_text(ours, theirs, rtol=1e-6) is same


def _tensor(values, **fields):
    summary = {"kind": "tensor", "dtype": "float32", "shape": [len(values)], "requires_grad": False, "is_leaf": True,
               "grad_fn": None, "device": "cpu", "plain": False, "values": values, "grad": None}
    summary.update(fields)
    return summary


def test_tensor_difference_names_what_differs():
    assert wp.tensor_difference(_tensor([1.0, 2.0]), _tensor([1.0, 2.0 + 1e-9]), 1e-6, 1e-8) is None
    assert "values differ" in wp.tensor_difference(_tensor([1.0, 2.0]), _tensor([1.0, 2.1]), 1e-6, 1e-8)
    assert "grad_fn" in wp.tensor_difference(_tensor([1.0], grad_fn="MulBackward0"), _tensor([1.0], grad_fn="MmBackward0"), 0, 0)
    ours, theirs = _tensor([1.0], grad=_tensor([3.0])), _tensor([1.0], grad=_tensor([4.0]))
    assert wp.tensor_difference(ours, theirs, 0, 0).startswith(".grad: values differ")
    assert "None" in wp.tensor_difference(_tensor([1.0]), theirs, 0, 0)
    assert wp.tensor_difference({"kind": "number", "value": 3}, {"kind": "number", "value": 3.0}, 0, 0)


def _record(where, error=None, stdout=""):
    return {"where": where, "stdout": stdout, "display": None, "namespace": {},
            "error": None if error is None else {"type": "TypeError", "message": error, "at": where}}


def _program(n):
    return wp.Program(name="p", kind="gallery", source="s", cells=[wp.Cell("pass", f"cell {i}") for i in range(n)])


def test_a_difference_does_not_hide_a_later_failure():
    ours = wp.Run([_record("cell 0", stdout="1"), _record("cell 1"), _record("cell 2", error="no such op")], False, None, 1)
    theirs = wp.Run([_record("cell 0", stdout="2"), _record("cell 1"), _record("cell 2")], False, None, 1)
    verdict = wp.compare(_program(4), ours, theirs)
    assert verdict.result == "FAIL" and verdict.cells_agreeing == 1
    assert verdict.detail.startswith("cell 2: TypeError: no such op")
    assert "first difference before it: cell 0: printed '1' where torch printed '2'" in verdict.detail


def test_a_failure_in_a_cell_torch_did_not_finish_in_time_is_a_fail():
    ours = wp.Run([_record("cell 0"), _record("cell 1", error="no such op")], False, None, 1)
    theirs = wp.Run([_record("cell 0")], True, None, 400)
    verdict = wp.compare(_program(3), ours, theirs)
    assert verdict.result == "FAIL" and "torch's run of that cell did not end: passed the time limit" in verdict.detail


def test_a_pass_says_how_many_cells_raised_the_same_error_under_both():
    ours = wp.Run([_record("cell 0"), _record("cell 1", error="bad")], False, None, 1)
    theirs = wp.Run([_record("cell 0"), _record("cell 1", error="bad")], False, None, 1)
    program = _program(2)
    program.stop_on_error = False          # as for docstring examples
    verdict = wp.compare(program, ours, theirs)
    assert (verdict.result, verdict.detail) == ("PASS", "2 cells, 1 of them raising the same error under both")


def test_a_difference_the_config_expects_is_said_in_a_pass_and_an_unexpected_one_is_still_a_diff():
    ours = wp.Run([_record("cell 0", stdout="0.1.0"), _record("cell 1", stdout="a")], False, None, 1)
    theirs = wp.Run([_record("cell 0", stdout="2.13.0"), _record("cell 1", stdout="a")], False, None, 1)
    program = _program(2)
    program.expected = {"cell 0": "prints the library's version"}
    verdict = wp.compare(program, ours, theirs)
    assert verdict.result == "PASS" and verdict.cells_agreeing == 2
    assert verdict.detail == "2 cells; differing by design, as the config says: cell 0: prints the library's version"
    program.expected = {"cell 1": "prints the library's version"}
    assert wp.compare(program, ours, theirs).result == "DIFF"


def test_a_values_difference_names_the_first_element_beyond_the_tolerance():
    ours, theirs = _tensor([1.0, 2.0, 3.0, 4.0]), _tensor([1.0 + 1e-9, 2.5, 3.0, 4.5])
    assert wp.tensor_difference(ours, theirs, 1e-6, 1e-8).endswith("[1] 2.0 vs torch's 2.5 (2 of 4 beyond)")


def test_differences_are_counted():
    ours = wp.Run([_record("cell 0", stdout="1"), _record("cell 1", stdout="a")], False, None, 1)
    theirs = wp.Run([_record("cell 0", stdout="2"), _record("cell 1", stdout="b")], False, None, 1)
    verdict = wp.compare(_program(2), ours, theirs)
    assert verdict.result == "DIFF" and verdict.detail.startswith("2 of 2 cells differ; the first, cell 0:")


# --- end to end, with a stand-in twin --------------------------------------------------------------------------------

FAKEGRAD = '''\
import torch as _torch

def __getattr__(name):                 # everything else is torch's
    return getattr(_torch, name)

def ones(*size, **kwargs):              # a silently wrong number: what the runner must catch
    return _torch.zeros(*size, **kwargs)

def cumsum(*args, **kwargs):
    raise TypeError("fakegrad has no cumsum")
'''

PROGRAMS = {
    "agrees.ipynb": json.dumps({"cells": [
        {"cell_type": "code", "source": "%matplotlib inline\nimport torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)"},
        {"cell_type": "code", "source": "y = (x * x).sum()\ny.backward()\nprint('y is', y.item())\nx.grad"},
        {"cell_type": "code", "source": "import torch.nn.functional as F\nw = torch.randn(3)\nrows = open('data.txt').read().split()"}]}),
    "wrong.py": "import torch\n# %%\na = torch.ones(2)\nprint(a.sum())\n",
    "refused.py": "import torch\nt = torch.arange(4.0)\n# %%\nc = torch.cumsum(t, 0)\n",
    "slow.py": "import time\nfor _ in range(100):\n    time.sleep(0.5)\n",
}


@pytest.fixture(scope="module")
def end_to_end(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runner")
    (tmp / "fakegrad").mkdir()
    (tmp / "fakegrad" / "__init__.py").write_text(FAKEGRAD)
    # one snapshot as a plain folder, one as a git repository with its commit pinned
    folder = tmp / "mirror" / "someone+lessons"
    folder.mkdir(parents=True)
    for name, text in PROGRAMS.items():
        (folder / name).write_text(text)
    (folder / "data.txt").write_text("emma olivia")
    work = tmp / "gitwork"
    work.mkdir()
    (work / "nb").mkdir()
    (work / "nb" / "copy.ipynb").write_text(PROGRAMS["agrees.ipynb"])
    (work / "nb" / "data.txt").write_text("ava")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(git + ["-C", str(work), "add", "."], check=True)
    subprocess.run(git + ["-C", str(work), "commit", "-qm", "one"], check=True)
    commit = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    (tmp / "mirror" / "someone+gitlessons").mkdir()
    (work / ".git").rename(tmp / "mirror" / "someone+gitlessons" / "repo")
    config = textwrap.dedent(f"""\
        [defaults]
        timeout = 60
        [[program]]
        name = "agrees"
        repo = "someone/lessons"
        commit = "unused-for-a-folder"
        path = "agrees.ipynb"
        kind = "notebook"
        files = [{{ path = "data.txt" }}]
        [[program]]
        name = "agrees, from git"
        repo = "someone/gitlessons"
        commit = "{commit}"
        path = "nb/copy.ipynb"
        kind = "notebook"
        [[program]]
        name = "wrong"
        repo = "someone/lessons"
        commit = "x"
        path = "wrong.py"
        kind = "gallery"
        [[program]]
        name = "refused"
        repo = "someone/lessons"
        commit = "x"
        path = "refused.py"
        kind = "gallery"
        [[program]]
        name = "slow"
        repo = "someone/lessons"
        commit = "x"
        path = "slow.py"
        kind = "gallery"
        timeout = 12
        [[program]]
        name = "needs a gpu"
        repo = "someone/lessons"
        commit = "x"
        path = "wrong.py"
        kind = "gallery"
        skip = "needs a GPU"
        [[program]]
        name = "not fetched"
        repo = "someone/elsewhere"
        commit = "x"
        path = "a.py"
        kind = "gallery"
        """)
    (tmp / "programs.toml").write_text(config)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--config", str(tmp / "programs.toml"), "--mirror", str(tmp / "mirror"),
         "--twin", "fakegrad", "--json", str(tmp / "results.json"), "--table", str(tmp / "table.md")],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(tmp), "OMP_NUM_THREADS": "1"}, cwd=tmp)
    assert out.returncode == 0, out.stderr
    results = {r["name"]: r for r in json.loads((tmp / "results.json").read_text())}
    return results, out.stdout, (tmp / "table.md").read_text()


def test_a_program_that_agrees_passes(end_to_end):
    results, _, _ = end_to_end
    assert results["agrees"]["result"] == "PASS", results["agrees"]
    assert results["agrees"]["agreeing"] == 3
    assert results["agrees, from git"]["result"] == "PASS", results["agrees, from git"]


def test_a_silently_different_number_is_a_diff_at_its_cell(end_to_end):
    results, _, _ = end_to_end
    wrong = results["wrong"]
    assert wrong["result"] == "DIFF"
    assert wrong["detail"].startswith("1 of 2 cells differ; the first, line 3: printed 'tensor(0.)' where torch "
                                      "printed 'tensor(2.)'"), wrong


def test_an_error_under_the_twin_only_is_a_fail_with_the_error(end_to_end):
    results, _, _ = end_to_end
    refused = results["refused"]
    assert refused["result"] == "FAIL" and refused["agreeing"] == 1
    assert "line 4: TypeError: fakegrad has no cumsum" in refused["detail"]


def test_timeouts_skips_and_missing_snapshots_are_reported(end_to_end):
    results, stdout, table = end_to_end
    assert results["slow"]["result"] == "TIMEOUT"
    assert results["needs a gpu"] == {**results["needs a gpu"], "result": "SKIP", "detail": "needs a GPU"}
    assert results["not fetched"]["result"] == "SKIP" and "fetch github:someone/elsewhere" in results["not fetched"]["detail"]
    assert "FAIL        refused:" in stdout
    assert table.splitlines()[0].startswith("| program | source (snapshot) | cells | result |")
    assert "| agrees | `someone/lessons@unused-for-a:agrees.ipynb` | 3/3 | PASS |" in table


def test_the_twin_import_hook_gives_the_program_the_twins_modules(tmp_path):
    """`import torch` in the program is the twin; teachgrad's own imports (and the runner's) still get torch."""
    program = wp.Program(name="hook", kind="gallery", source="here", timeout=60, cells=[
        wp.Cell("import torch, sys\nwho = torch.__name__\nimport torch.nn.functional as F\nf = F.__name__", "a"),
        wp.Cell("from torch.autograd import Function\nfn = Function.__module__\nimport torch.no_such_module", "b")])
    run = wp.run_program(program, "teachgrad", None, 0)
    first, second = run.records
    assert first["error"] is None, first
    assert second["error"]["type"] == "ModuleNotFoundError"
    assert second["error"]["message"] == "teachgrad has no module 'teachgrad.no_such_module' (the program imports 'torch.no_such_module')"
    shown = wp.run_program(wp.Program(name="hook", kind="gallery", source="here", timeout=60, cells=[
        wp.Cell("import torch\nimport torch.nn.functional as F\n(torch.__name__, F.__name__, torch.ones(1).__class__.__name__)", "a")]),
        "teachgrad", None, 0).records[0]
    assert shown["display"] == "('teachgrad', 'teachgrad.nn.functional', 'Variable')", shown


def test_missing_plotting_libraries_are_stand_ins_for_the_program_only(tmp_path):
    """A program's `import graphviz` gets a stand-in where graphviz is missing; a missing module of another name
    stays missing, and the stand-in is never given to libraries (only the program's own imports are hooked)."""
    import importlib.util as util
    program = wp.Program(name="plots", kind="gallery", source="here", timeout=60, cells=[
        wp.Cell("from torchviz import make_dot\nmake_dot(1).render('x')\nimport sys\n'torchviz' in sys.modules", "a"),
        wp.Cell("import no_such_plotting_library", "b")])
    first, second = wp.run_program(program, None, None, 0).records
    assert first["error"] is None, first
    if util.find_spec("torchviz") is None:
        assert first["display"] == "False"      # the stand-in is the program's, not registered for everyone
    assert second["error"]["type"] == "ModuleNotFoundError"


def test_docstring_programs_are_counted_together_and_listed_below():
    def doc(name, result, detail):
        program = wp.Program(name=f"torch.autograd.{name}", kind="doctest", source="torch 2.13.0: torch/autograd/x.py",
                             cells=[wp.Cell("pass", "example 1")], group="torch.autograd docstrings")
        return wp.Verdict(program, result, 1 if result == "PASS" else 0, detail)

    table = wp.markdown_table([doc("graph.Node.name", "PASS", "1 cells"), doc("grad_mode.no_grad", "FAIL", "a | b"),
                               doc("graph.save_on_cpu", "SKIP", "needs a GPU")])
    assert "| torch.autograd docstrings | `torch 2.13.0` | 2 programs | 1 of 2 PASS |" in table
    assert "| `grad_mode.no_grad` | 0/1 | FAIL | a \\| b |" in table
    assert "| `graph.save_on_cpu` | - | SKIP | needs a GPU |" in table


def test_docstring_setup_imports_the_module_names_the_examples_use():
    """As torch's doctest runner runs examples in their module's namespace: `vjp` is imported, through `torch`."""
    cells = [wp.Cell("def f(x):\n    return x\nvjp(f, torch.ones(2), torch.ones(2))", "part 1")]
    assert wp.doctest_setup("torch.autograd.functional", cells) == "import torch\nfrom torch.autograd.functional import vjp"


# --- plain scripts (issue 34: ng-video-lecture, makemore.py, minGPT's projects) -------------------------------------

def test_a_script_is_cut_into_its_top_level_statements_with_their_comments():
    script = "import sys\n\n# the settings\nn = 2\nfor i in range(n):\n    print(i)\nif __name__ == '__main__':\n    x = 1\n"
    cells = wp.script_cells(script)
    assert [c.code for c in cells] == ["import sys", "\n# the settings\nn = 2", "for i in range(n):\n    print(i)",
                                       "if __name__ == '__main__':\n    x = 1"]
    assert [c.where for c in cells] == ["line 1", "line 4", "line 5", "line 7"]


def test_a_script_gets_its_command_line_the_same_hash_seed_and_a_tensorboard_stand_in(tmp_path):
    import importlib.util as util
    program = wp.Program(name="cli", kind="script", source="someone/repo@abc:tools/train.py", timeout=60,
                         args=("--steps", "3"), cells=[
        wp.Cell("import sys, os\n(sys.argv, __name__, os.environ['PYTHONHASHSEED'], hash('makemore'))", "line 1"),
        wp.Cell("from torch.utils.tensorboard import SummaryWriter\nw = SummaryWriter(log_dir='out')\n"
                "w.add_scalar('loss', 1.0, 0)\nw.flush()", "line 2")])
    runs = [wp.run_program(program, twin, None, 0).records for twin in (None, "teachgrad")]
    assert runs[0][0]["display"] == runs[1][0]["display"]   # the same hash of a str in both runs
    assert runs[0][0]["display"].startswith("(['train.py', '--steps', '3'], '__main__', '0', ")
    if util.find_spec("tensorboard") is None:
        assert runs[0][1]["error"] is None and runs[1][1]["error"] is None, runs


def test_what_a_program_measures_is_left_out_of_the_comparison_and_nothing_else():
    ours = wp.Run([_record("cell 0", stdout="step 10 | loss 2.5000 | step time 12.30ms")], False, None, 1)
    theirs = wp.Run([_record("cell 0", stdout="step 10 | loss 2.5000 | step time 48.91ms")], False, None, 1)
    program = _program(1)
    assert wp.compare(program, ours, theirs).result == "DIFF"
    program.measured = ("step time [0-9.]+ms",)
    assert wp.compare(program, ours, theirs).result == "PASS"
    theirs.records[0]["stdout"] = "step 10 | loss 2.6000 | step time 48.91ms"
    assert wp.compare(program, ours, theirs).result == "DIFF"
