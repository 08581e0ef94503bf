"""teachgrad.viz: exact DOT for small graphs, the same drawing for teachgrad and torch,
states over time (grads, freed saved tensors, zero_), the step-by-step view, no `dot`."""
import base64
import configparser
import html
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import graphviz
import pytest
import torch

import teachgrad as tg
from teachgrad import viz

LIBS = pytest.mark.parametrize("lib", [tg, torch], ids=["teachgrad", "torch"])
HAS_DOT = shutil.which("dot") is not None
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEAD = """\
digraph {
\tgraph [fontname=Helvetica fontsize=10 ordering=out]
\tnode [fontname=Helvetica fontsize=10 shape=box style="rounded,filled"]
\tedge [fontname=Helvetica fontsize=9]
"""
OP = "shape=ellipse style=filled fillcolor=lightgrey"
FREED = 'style="rounded,dashed" color=grey50 fontcolor=grey50'


def rqs(lib):
    """The running example: t = (p + q) * s with p=3, q=5, s=2."""
    p = lib.tensor(3.0, requires_grad=True)
    q = lib.tensor(5.0, requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True)
    r = p + q
    t = r * s
    return locals()


def diamond(lib):
    """h is used twice: y = exp(h) + log(h), h = x * x."""
    x = lib.tensor(2.0, requires_grad=True)
    h = x * x
    u = h.exp()
    v = h.log()
    y = u + v
    return locals()


def dot_lines(body):
    """HEAD, then body's lines tab-indented, with OP and FREED spelled out."""
    lines = textwrap.dedent(body).replace("OP", OP).replace("FREED", FREED).splitlines()
    return HEAD + "".join(f"\t{line}\n" for line in lines) + "}\n"


RQS_DOT = dot_lines("""\
    n0 [label="t\\ndata 16" fillcolor=darkolivegreen1]
    n1 [label=MulBackward0 OP]
    n2 [label=AddBackward0 OP]
    n3 [label=AccumulateGrad OP]
    n4 [label="_saved_other = s\\ndata 2" fillcolor=orange]
    n5 [label="_saved_self = r\\ndata 8" fillcolor=orange]
    n6 [label=AccumulateGrad OP]
    n7 [label=AccumulateGrad OP]
    n8 [label="r\\ndata 8" fillcolor=lightyellow]
    n9 [label="s\\ndata 2\\ngrad None" fillcolor=lightblue]
    n10 [label="p\\ndata 3\\ngrad None" fillcolor=lightblue]
    n11 [label="q\\ndata 5\\ngrad None" fillcolor=lightblue]
    n0 -> n1 [label=grad_fn style=dotted]
    n1 -> n2 [label=0]
    n1 -> n3 [label=1]
    n1 -> n4 [style=dashed dir=back]
    n1 -> n5 [style=dashed dir=back]
    n2 -> n6 [label=0]
    n2 -> n7 [label=1]
    n8 -> n2 [label=grad_fn style=dotted]
    n3 -> n9 [label=variable style=dotted]
    n6 -> n10 [label=variable style=dotted]
    n7 -> n11 [label=variable style=dotted]
""")


@LIBS
def test_rqs_graph_exact_dot(lib):
    env = rqs(lib)
    assert viz.draw(env["t"], names=env).source == RQS_DOT


@LIBS
def test_diamond_exact_dot(lib):
    env = diamond(lib)
    assert viz.draw(env["y"], names=env).source == dot_lines("""\
        n0 [label="y\\ndata 55.98" fillcolor=darkolivegreen1]
        n1 [label=AddBackward0 OP]
        n2 [label=ExpBackward0 OP]
        n3 [label=LogBackward0 OP]
        n4 [label=MulBackward0 OP]
        n5 [label="_saved_result = u\\ndata 54.6" fillcolor=orange]
        n6 [label="u\\ndata 54.6" fillcolor=lightyellow]
        n7 [label="_saved_self = h\\ndata 4" fillcolor=orange]
        n8 [label="v\\ndata 1.386" fillcolor=lightyellow]
        n9 [label=AccumulateGrad OP]
        n10 [label="_saved_other = x\\ndata 2" fillcolor=orange]
        n11 [label="_saved_self = x\\ndata 2" fillcolor=orange]
        n12 [label="h\\ndata 4" fillcolor=lightyellow]
        n13 [label="x\\ndata 2\\ngrad None" fillcolor=lightblue]
        n0 -> n1 [label=grad_fn style=dotted]
        n1 -> n2 [label=0]
        n1 -> n3 [label=1]
        n2 -> n4 [label=0]
        n2 -> n5 [style=dashed dir=back]
        n6 -> n2 [label=grad_fn style=dotted]
        n3 -> n4 [label=0]
        n3 -> n7 [style=dashed dir=back]
        n8 -> n3 [label=grad_fn style=dotted]
        n4 -> n9 [label=0]
        n4 -> n9 [label=1]
        n4 -> n10 [style=dashed dir=back]
        n4 -> n11 [style=dashed dir=back]
        n12 -> n4 [label=grad_fn style=dotted]
        n9 -> n13 [label=variable style=dotted]
    """)


SAVED_BODY = """\
    n0 [label="c\\ndata 11" fillcolor=darkolivegreen1]
    n1 [label=SumBackward0 OP]
    n2 [label=MulBackward0 OP]
    n3 [label=AccumulateGrad OP]
    n4 [label=AccumulateGrad OP]
    {saved_other}
    {saved_self}
    n7 [label="a (2,)\\ndata [1, 2]\\ngrad {grad_a}" fillcolor=lightblue]
    n8 [label="b (2,)\\ndata [3, 4]\\ngrad {grad_b}" fillcolor=lightblue]
    n0 -> n1 [label=grad_fn style=dotted]
    n1 -> n2 [label=0]
    n2 -> n3 [label=0]
    n2 -> n4 [label=1]
    n2 -> n5 [style=dashed dir=back]
    n2 -> n6 [style=dashed dir=back]
    n3 -> n7 [label=variable style=dotted]
    n4 -> n8 [label=variable style=dotted]
"""
SAVED_LIVE = dict(saved_other='n5 [label="_saved_other = b (2,)\\ndata [3, 4]" fillcolor=orange]',
                  saved_self='n6 [label="_saved_self = a (2,)\\ndata [1, 2]" fillcolor=orange]')
SAVED_FREED = dict(saved_other='n5 [label="_saved_other\\nfreed" FREED]',
                   saved_self='n6 [label="_saved_self\\nfreed" FREED]')


def saved_case(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c = (a * b).sum()
    return a, b, c


@LIBS
def test_saved_tensors_are_their_own_nodes_then_freed(lib):
    a, b, c = saved_case(lib)
    names = {"a": a, "b": b, "c": c}
    before = viz.draw(c, names=names).source
    assert before == dot_lines(SAVED_BODY.format(**SAVED_LIVE, grad_a="None", grad_b="None"))
    c.backward()
    with pytest.raises(RuntimeError):
        c.grad_fn.next_functions[0][0]._saved_self
    after = viz.draw(c, names=names).source
    assert after == dot_lines(SAVED_BODY.format(**SAVED_FREED, grad_a="[3, 4]", grad_b="[1, 2]"))


@LIBS
def test_retain_graph_accumulation_and_zero(lib):
    a, b, c = saved_case(lib)
    names = {"a": a, "b": b, "c": c}
    c.backward(retain_graph=True)
    c.backward(retain_graph=True)
    assert viz.draw(c, names=names).source == dot_lines(
        SAVED_BODY.format(**SAVED_LIVE, grad_a="[6, 8]", grad_b="[2, 4]"))
    with (tg.no_grad() if lib is tg else torch.no_grad()):
        a.grad.zero_()
    assert '"a (2,)\\ndata [1, 2]\\ngrad [0, 0]"' in viz.draw(c, names=names).source


@pytest.mark.parametrize("build", [rqs, diamond])
def test_teachgrad_and_torch_draw_the_same(build):
    ours, theirs = build(tg), build(torch)
    root = "t" if build is rqs else "y"
    assert viz.draw(ours[root], names=ours).source == viz.draw(theirs[root], names=theirs).source


def test_teachgrad_and_torch_draw_the_same_matrix_graph():
    def build(lib):
        x = lib.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], requires_grad=True)
        w = lib.tensor([[1.0, 2.0], [0.0, -1.0], [0.5, 0.5]], requires_grad=True)
        y = (x @ w).relu().sigmoid().mean()
        return y, {"x": x, "w": w, "y": y}
    (ours, ours_names), (theirs, theirs_names) = build(tg), build(torch)
    drawing = viz.draw(ours, names=ours_names).source
    assert drawing == viz.draw(theirs, names=theirs_names).source
    assert '"x (2, 3)\\ndata [[1, -2, 0.5],\\n [0.25, 3, -1]]\\ngrad None"' in drawing
    assert "MmBackward0" in drawing and "SigmoidBackward0" in drawing


def test_teachgrad_and_torch_draw_the_same_with_a_number_operand():
    drawings = []
    for lib in (tg, torch):
        x = lib.tensor(2.0, requires_grad=True)
        drawings.append(viz.draw(x * 3, names={"x": x}).source)
    assert drawings[0] == drawings[1]


# --- names ---

def test_names_skip_underscores_and_variable_name_is_used():
    p = tg.tensor(3.0, requires_grad=True)
    q = tg.tensor(5.0, requires_grad=True)
    q.name = "q_own"
    t = p * q
    source = viz.draw(t, names={"_": p, "_t": t, "In": [], "x": 1}).source
    assert '[label="data 3\\ngrad None" fillcolor=lightblue]' in source   # p stays unnamed
    assert '"q_own\\ndata 5\\ngrad None"' in source
    assert '"output\\ndata 15"' in source                                 # unnamed output
    assert '"_saved_other = q_own\\ndata 5"' in source
    assert '"p\\ndata 3\\ngrad None"' in viz.draw(t, names={"p": p}).source
    assert '"mine\\ndata 5' in viz.draw(t, names={"mine": q}).source      # names= wins over .name


def test_input_nr_shown_at_the_arrow_head_and_steps_use_output_nr():
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    a, b = x.unbind()
    y = a * b
    drawing = viz.draw(y, names=locals()).source
    assert "n1 -> n2 [label=0]" in drawing and "n1 -> n2 [label=1 headlabel=1]" in drawing
    steps = viz.backward_steps(y, names={"a": a, "b": b, "y": y})
    last = steps[-1].source
    assert '[label="grad_fn\\ngrad 3" style=dotted]' in last   # dy/da = b = 3
    assert '[label="grad_fn\\ngrad 2" style=dotted]' in last   # dy/db = a = 2
    assert x.grad.tolist() == [3.0, 2.0]


# --- switches ---

@pytest.mark.parametrize("option, absent, present", [
    (dict(saved=False), ["_saved_", "dir=back"], ["MulBackward0"]),
    (dict(values=False), ["data "], ['"p\\ngrad None"']),
    (dict(grads=False), ["grad None"], ['"p\\ndata 3"']),
    (dict(edge_labels=False), ["label=0", "label=grad_fn", "label=variable"], ["\tn1 -> n2\n"]),
    (dict(leaves=False), ["fillcolor=lightblue"], ["AccumulateGrad"]),
    (dict(output=False), ["darkolivegreen1"], ["n0 [label=MulBackward0"]),
    (dict(intermediates=False), ["lightyellow"], ["_saved_self = r"]),
    (dict(ops=False), ["MulBackward0", "AccumulateGrad"], ['[label="" shape=point width=0.1]']),
    (dict(legend=True), [], ['legend [label=<<table', '<td bgcolor="orange">']),
])
def test_switches(option, absent, present):
    env = rqs(tg)
    source = viz.draw(env["t"], names=env, **option).source
    for text in absent:
        assert text not in source
    for text in present:
        assert text in source


def test_big_tensors_show_their_shape_only():
    w = torch.randn(64, 10, requires_grad=True)
    source = viz.draw(w.sum(), names={"w": w}).source
    assert '"w (64, 10)\\ngrad None"' in source
    w.sum().backward()
    assert '"w (64, 10)\\ngrad shape (64, 10)"' in viz.draw(w.sum(), names={"w": w}).source
    assert '"w (64, 10)\\ndata [' in viz.draw(w.sum(), names={"w": w}, max_values=640).source


def test_bad_arguments():
    with pytest.raises(TypeError, match="unexpected keyword argument.*colour"):
        viz.draw(tg.tensor(1.0, requires_grad=True), colour=True)
    with pytest.raises(TypeError, match="unexpected keyword argument.*colour"):
        viz.backward_steps(tg.tensor(1.0, requires_grad=True), colour=True)
    with pytest.raises(TypeError, match="not list"):
        viz.draw([tg.tensor(1.0, requires_grad=True)])


def test_two_roots_share_their_common_graph():
    env = diamond(tg)
    source = viz.draw(env["u"], env["v"], names=env).source
    assert source.count("MulBackward0") == 1 and source.count("AccumulateGrad") == 1
    assert 'n0 [label="u\\ndata 54.6" fillcolor=darkolivegreen1]' in source
    assert 'n2 [label="v\\ndata 1.386" fillcolor=darkolivegreen1]' in source
    assert "n0 -> n1 [label=grad_fn style=dotted]" in source and "n2 -> n3 [label=grad_fn style=dotted]" in source
    assert "n1 -> n4 [label=0]" in source and "n3 -> n4 [label=0]" in source


def test_draw_a_grad_fn_node_or_a_leaf():
    env = rqs(torch)
    assert viz.draw(env["t"].grad_fn).source == viz.draw(env["t"], output=False).source
    assert '"p\\ndata 3\\ngrad None" fillcolor=darkolivegreen1' in viz.draw(env["p"], names=env).source


# --- Jupyter: stable text/plain, SVG with dot, a clear message without ---

def test_text_plain_is_the_dot_source_and_repr_has_no_address():
    env = rqs(tg)
    drawing = viz.draw(env["t"], names=env)
    assert drawing._repr_mimebundle_(include=[])["text/plain"] == RQS_DOT
    assert repr(drawing) == "<teachgrad.viz.Drawing with 12 nodes>"
    assert isinstance(drawing, graphviz.Digraph)


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_svg_when_dot_is_installed():
    env = rqs(tg)
    bundle = viz.draw(env["t"], names=env)._repr_mimebundle_()
    assert bundle["text/plain"] == RQS_DOT
    svg = bundle["image/svg+xml"]
    assert svg.startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    assert "<title>n11</title>" in svg and ">MulBackward0</text>" in svg


NO_DOT_SCRIPT = """
import graphviz, teachgrad as tg
from IPython.core.formatters import DisplayFormatter
from teachgrad import viz
p = tg.tensor(3.0, requires_grad=True)
t = p * p
d = viz.draw(t, names={"p": p, "t": t})
assert d.source.startswith("digraph {")
bundle = d._repr_mimebundle_()
assert bundle["text/plain"] == d.source and "image/svg+xml" not in bundle
print("HTML", bundle["text/html"])
data, _ = DisplayFormatter().format(d)
assert data["text/plain"] == d.source, data
for ask in (d.pipe, d._repr_image_svg_xml, lambda: d.render("/tmp/teachgrad-no-dot")):
    try:
        ask()
    except graphviz.ExecutableNotFound as error:
        assert isinstance(error, viz.GraphvizNotFound) and error.__cause__ is None
        print("ERROR", error)
    else:
        raise AssertionError("an image without dot")
print("STEPS", viz.backward_steps(t, names={"p": p, "t": t}).svg(0)[:400])
"""


def test_without_dot_the_source_works_and_images_say_how_to_install(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty), "PYTHONPATH": ROOT}
    run = subprocess.run([sys.executable, "-c", NO_DOT_SCRIPT], env=env, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert out.count("ERROR Graphviz's `dot` program was not found") == 3
    for install in ("apt-get install graphviz", "brew install graphviz", "conda install -c conda-forge graphviz"):
        assert out.count(install) == 5   # three errors, the Jupyter HTML, the step view
    assert "HTML <pre>Graphviz&#x27;s `dot` program was not found" in out
    assert "digraph {" in out.split("HTML", 1)[1]


# --- determinism ---

DETERMINISM_SCRIPT = """
import torch, teachgrad as tg
from teachgrad import viz
for lib in (tg, torch):
    p = lib.tensor(3.0, requires_grad=True); q = lib.tensor(5.0, requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True); r = p + q; t = r * s
    print(viz.draw(t, names=locals(), legend=True).source)
    steps = viz.backward_steps(t, names=locals())
    print(steps)
    print(steps[2].source)
"""


def test_same_dot_in_every_process():
    runs = [subprocess.Popen([sys.executable, "-c", DETERMINISM_SCRIPT], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": ROOT})
            for seed in ("0", "1")]
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert RQS_DOT[:-2] in outputs[0]
    assert "0x" not in outputs[0] and " at " not in outputs[0]


# --- one backward pass, step by step ---

RQS_STEPS = """\
backward ran 5 nodes:
  1. n1 MulBackward0: grad_outputs (1,) -> grad_inputs (2, 8)
  2. n3 AccumulateGrad: grad_outputs (8,) -> grad_inputs ()
  3. n2 AddBackward0: grad_outputs (2,) -> grad_inputs (2, 2)
  4. n6 AccumulateGrad: grad_outputs (2,) -> grad_inputs ()
  5. n7 AccumulateGrad: grad_outputs (2,) -> grad_inputs ()"""


@LIBS
def test_backward_steps_of_rqs(lib):
    env = rqs(lib)
    steps = viz.backward_steps(env["t"], names=env)
    assert repr(steps) == RQS_STEPS
    assert steps._repr_mimebundle_()["text/plain"] == RQS_STEPS
    assert [type(s.node).__name__ for s in steps.records] == [
        "MulBackward0", "AccumulateGrad", "AddBackward0", "AccumulateGrad", "AccumulateGrad"]
    assert [env[k].grad.item() for k in "pqs"] == [2.0, 2.0, 8.0]   # dt/dp = dt/dq = s, dt/ds = p + q
    assert len(steps) == 5 and len(steps[1:3]) == 2

    first = steps[0].source
    assert 'label="step 1 of 5: n1 MulBackward0 runs" labelloc=t' in first
    assert 'n1 [label="n1 MulBackward0" shape=ellipse style=filled fillcolor=gold penwidth=2]' in first
    assert 'n2 [label="n2 AddBackward0" shape=ellipse style=filled fillcolor=lightgrey]' in first   # not run yet
    assert 'n0 -> n1 [label="grad_fn\\ngrad 1" style=dotted]' in first
    assert 'n1 -> n2 [label="0\\ngrad 2" weight=10]' in first and 'n1 -> n3 [label="1\\ngrad 8" weight=10]' in first
    assert "n2 -> n6 [label=0 weight=10]" in first             # AddBackward0 has not run yet
    assert 'n4 [label="_saved_other\\nfreed"' in first          # freed once MulBackward0 ran
    assert '"s\\ndata 2\\ngrad None"' in first                  # s.grad is filled by step 2

    second = steps[1].source
    assert '"s\\ndata 2\\ngrad 8"' in second and '"p\\ndata 3\\ngrad None"' in second

    last = steps[-1].source
    assert 'n1 [label="n1 MulBackward0" shape=ellipse style=filled fillcolor=palegreen]' in last
    assert 'n2 -> n6 [label="0\\ngrad 2" weight=10]' in last and 'n2 -> n7 [label="1\\ngrad 2" weight=10]' in last
    assert 'n8 -> n2 [label="grad_fn\\ngrad 2" style=dotted]' in last   # dt/dr = s
    for leaf in ('"s\\ndata 2\\ngrad 8"', '"p\\ndata 3\\ngrad 2"', '"q\\ndata 5\\ngrad 2"'):
        assert leaf in last


def test_backward_steps_of_p_plus_q_times_s_match_torch():
    frames, grads = [], []
    for lib in (tg, torch):
        p, q, s = (lib.tensor(v, requires_grad=True) for v in (3.0, 5.0, 2.0))
        t = p + q * s
        steps = viz.backward_steps(t, names={"p": p, "q": q, "s": s, "t": t})
        frames.append([repr(steps)] + [frame.source for frame in steps])
        grads.append([p.grad.item(), q.grad.item(), s.grad.item()])
    assert frames[0] == frames[1]
    assert grads[0] == grads[1] == [1.0, 2.0, 5.0]


def test_backward_steps_keep_saved_tensors_with_retain_graph_and_take_a_gradient():
    a, b, c = saved_case(tg)
    y = a * b
    steps = viz.backward_steps(y, names={"a": a, "b": b, "y": y}, gradient=tg.tensor([1.0, 10.0]),
                               retain_graph=True)
    assert "freed" not in steps[-1].source
    assert '"_saved_self = a (2,)\\ndata [1, 2]"' in steps[-1].source
    assert '[label="grad_fn\\ngrad [1, 10]" style=dotted]' in steps[0].source
    assert a.grad.tolist() == [3.0, 40.0] and b.grad.tolist() == [1.0, 20.0]
    assert y.grad_fn._saved_self is not None


RQS_CAPTIONS = [
    "step 1 of 5: n1 MulBackward0 runs: gets grad_outputs (1,), sends 2 to n2 AddBackward0, 8 to n3 AccumulateGrad",
    "step 2 of 5: n3 AccumulateGrad runs: adds 8 into s.grad",
    "step 3 of 5: n2 AddBackward0 runs: gets grad_outputs (2,), sends 2 to n6 AccumulateGrad, 2 to n7 AccumulateGrad",
    "step 4 of 5: n6 AccumulateGrad runs: adds 2 into p.grad",
    "step 5 of 5: n7 AccumulateGrad runs: adds 2 into q.grad",
]


@LIBS
def test_each_step_has_a_caption_naming_the_node_and_the_gradients(lib):
    env = rqs(lib)
    steps = viz.backward_steps(env["t"], names=env)
    assert [steps.caption(k) for k in range(len(steps))] == RQS_CAPTIONS


def test_caption_of_a_node_with_a_none_gradient():
    x = tg.tensor(2.0, requires_grad=True)
    y = (x * tg.tensor(3.0)) ** 2
    steps = viz.backward_steps(y, names={"x": x, "y": y})
    assert steps.caption(1) == "step 2 of 3: n2 MulBackward0 runs: gets grad_outputs (12,), sends 36 to n4 AccumulateGrad"


@LIBS
def test_every_node_a_caption_or_the_table_names_is_labelled_so_in_the_frame(lib):
    """Captions and the table name nodes by id (`n6 AccumulateGrad`); the drawing must show those ids,
    so twin nodes (three AccumulateGrad here) can be told apart in the picture."""
    env = rqs(lib)
    steps = viz.backward_steps(env["t"], names=env)
    for k in range(len(steps)):
        source = steps[k].source
        named = re.findall(r"\b(n\d+) (\w+)", steps.caption(k)) + re.findall(r"\b(n\d+) (\w+):", repr(steps))
        assert named
        for node_id, name in named:
            assert re.search(rf'\t{node_id} \[label="{node_id} {name}"', source), (node_id, name)
    accumulate = re.findall(r'label="(n\d+ AccumulateGrad)"', steps[0].source)
    assert len(accumulate) == len(set(accumulate)) == 3


def test_stepper_legend_explains_gold_and_green_and_draw_legend_does_not():
    env = rqs(tg)
    steps = viz.backward_steps(env["t"], names=env, legend=True)
    legend = steps[0].source[steps[0].source.index("legend [label=<"):]
    assert '<td bgcolor="gold"><font color="black">backward node running</font>' in legend
    assert '<td bgcolor="palegreen"><font color="black">backward node already run</font>' in legend
    assert "gold" not in viz.draw(rqs(tg)["t"], legend=True).source
    assert "legend" not in viz.backward_steps(rqs(tg)["t"])[0].source   # no legend unless asked for


def _write_a_row(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    y[0].mul_(3)
    return y, dict(x=x, y=y)


def test_wrapped_shows_the_node_inside_teachgrads_copyslices():
    y, names = _write_a_row(tg)
    y_t, names_t = _write_a_row(torch)
    plain = viz.draw(y, names=names).source
    assert plain == viz.draw(y_t, names=names_t).source and "wrapped" not in plain
    shown = viz.draw(y, names=names, wrapped=True).source
    node = re.search(r'\t(n\d+) \[label="MulBackward0\\nwrapped inside" shape=ellipse style="dashed,filled"', shown)
    copy_slices = re.search(r"\t(n\d+) \[label=CopySlices ", shown)
    assert node and copy_slices
    assert f"{copy_slices.group(1)} -> {node.group(1)} [label=wraps style=dashed arrowhead=none]" in shown
    assert viz.draw(y_t, names=names_t, wrapped=True).source == plain   # torch's wrapped node is out of reach


def test_slider_steps_through_the_frames_with_prev_play_next_and_captions():
    widgets = pytest.importorskip("ipywidgets")
    env = rqs(torch)
    steps = viz.backward_steps(env["t"], names=env)
    box = steps.slider()
    table, controls, caption, view = box.children
    prev, play, next_, pick = controls.children
    assert isinstance(box, widgets.VBox) and isinstance(pick, widgets.IntSlider) and isinstance(play, widgets.Play)
    assert (pick.min, pick.max, pick.value) == (1, 5, 1) and (play.min, play.max) == (1, 5)
    assert table.value == f"<pre>{html.escape(RQS_STEPS)}</pre>"
    assert view.value == steps._image(0) and caption.value == f"<b>{RQS_CAPTIONS[0]}</b>"
    pick.value = 3
    assert view.value == steps._image(2) != steps._image(0) and caption.value == f"<b>{RQS_CAPTIONS[2]}</b>"
    next_.click()
    assert pick.value == 4 and caption.value == f"<b>{RQS_CAPTIONS[3]}</b>"
    next_.click(), next_.click()
    assert pick.value == 5
    for _ in range(6):
        prev.click()
    assert pick.value == 1 and view.value == steps._image(0)
    assert repr(box) == "StepsSlider(5 steps)"
    if HAS_DOT:
        pick.value = 3
        frame = base64.b64decode(re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', view.value).group(1)).decode()
        assert view.value.startswith("<img") and "step 3 of 5: n2 AddBackward0 runs" in frame


def test_steps_display_as_live_slider_stored_html_and_text_table():
    pytest.importorskip("ipywidgets")
    env = rqs(tg)
    steps = viz.backward_steps(env["t"], names=env)
    bundle = steps._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"}
    assert bundle["text/plain"] == RQS_STEPS
    assert bundle["text/html"] == steps.html()
    assert steps.slider()._repr_mimebundle_()["text/html"] == steps.html()


def _html_parts(steps):
    page = steps.html()
    figures = re.findall(r'<figure class="tg-step"[^>]*><figcaption>(.*?)</figcaption>(.*?)</figure>', page, re.S)
    return page, figures


def test_html_stepper_is_self_contained_every_frame_and_a_script():
    env = rqs(tg)
    steps = viz.backward_steps(env["t"], names=env)
    page, figures = _html_parts(steps)
    assert page.startswith('<div class="tg-steps">') and page.endswith("</div>")
    assert f"<pre>{html.escape(RQS_STEPS)}</pre>" in page
    assert [html.unescape(c) for c, _ in figures] == RQS_CAPTIONS
    # Scripts are stripped where the page is not trusted: the first frame shows, the rest fold away.
    assert page.index("</figure>") < page.index("<details") < page.index(RQS_CAPTIONS[1]) < page.index("</details>")
    script = page[page.index("<script>"):page.index("</script>")]
    assert 'type="range"' in script and "prev" in script and "play" in script and "next" in script
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        "http://www.w3.org/1999/xlink", "").replace("http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd", "")
    assert "src=\"" not in script and "<link" not in page   # no external assets
    if HAS_DOT:
        for k, (caption, image) in enumerate(figures):
            data = re.fullmatch(r'<img alt="[^"]*" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" '
                                r'style="max-width:100%;height:auto;min-width:\d+px">', image)
            assert base64.b64decode(data.group(1)).decode() == steps.svg(k)
    else:
        assert all("apt-get install graphviz" in image for _, image in figures)


def test_html_stepper_is_byte_stable_under_the_nbval_sanitizer():
    """Two runs give the same HTML, and what nbval compares holds no SVG (fonts differ by machine)."""
    pages = []
    for _ in range(2):
        env = rqs(torch)
        pages.append(viz.backward_steps(env["t"], names=env).html())
    assert pages[0] == pages[1]
    sanitized = _nbval_sanitize(pages[0])
    assert "base64," not in sanitized.replace("base64,<svg rendered by graphviz>", "")
    assert sanitized.count("<svg rendered by graphviz>") == (5 if HAS_DOT else 0)


def _nbval_sanitize(text):
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "tests", "nbval_sanitize.cfg"))
    for section in config.sections():
        text = re.sub(config[section]["regex"], config[section]["replace"], text)
    return text


def test_html_of_no_steps_and_one_step():
    x = tg.tensor(2.0, requires_grad=True)
    steps = viz.backward_steps(x * 3, names={"x": x})
    page, figures = _html_parts(steps)
    assert len(figures) == 2 and "<details" in page
    one = viz.Steps(steps.graph, steps.records[:1], False)
    assert "<details" not in one.html() and len(_html_parts(one)[1]) == 1
    none = viz.Steps(steps.graph, [], False)
    assert "<script>" not in none.html() and "<figure" not in none.html()


# --- size ---

def _chain(lib, n):
    x = lib.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return y


def _best_of_three(y):
    """The CPU time of this process (not the wall clock: other processes on a busy machine do not count)."""
    elapsed = []
    for _ in range(3):
        start = time.process_time()
        drawing = viz.draw(y)
        drawing.source
        elapsed.append(time.process_time() - start)
    return min(elapsed), drawing


@LIBS
def test_drawing_a_chain_takes_time_in_proportion_to_its_length(lib):
    """A 3000-node chain is drawn whole, in about ten times a 300-node chain's time: no walk that grows with the
    square of the graph. (Compared with the short chain in the same process, so a busy machine slows both
    alike; how fast in seconds is make bench's business, not a test's.)"""
    short, _ = _best_of_three(_chain(lib, 300))
    long, drawing = _best_of_three(_chain(lib, 3000))
    assert drawing.node_count == 6003   # each MulBackward0 saves the number 1.0001 as a tensor
    assert drawing.source.count("MulBackward0") == 3000
    assert long < 30 * short, (short, long)   # linear: about 10x; a quadratic walk: about 100x


def test_the_walk_uses_no_recursion():
    x = tg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(2000):
        y = y * 1.0001
    limit = sys.getrecursionlimit()
    depth = len(__import__("inspect").stack())
    sys.setrecursionlimit(depth + 100)
    try:
        steps_free_source = viz.draw(y).source
    finally:
        sys.setrecursionlimit(limit)
    assert steps_free_source.count("MulBackward0") == 2000


def test_a_100000_node_chain_draws():
    # In a child process that skips teardown: torch 2.13 itself overflows the C stack freeing
    # a graph this deep once Python has touched its nodes (any walk over next_functions does).
    script = textwrap.dedent("""
        import os, torch
        from teachgrad import viz
        y = x = torch.tensor(1.0, requires_grad=True)
        for _ in range(100000):
            y = y * 1.0
        drawing = viz.draw(y, saved=False)
        print(drawing.node_count, drawing.source.count("MulBackward0"), flush=True)
        os._exit(0)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["100003", "100000"]


def test_meta_tensors_draw_with_shapes_and_their_own_names():
    a = tg.randn(4, 3, device="meta", requires_grad=True)
    b = tg.randn(4, 3, device="meta")
    out = (a * b).sum()
    source = viz.draw(out, names={"a": a, "b": b}).source
    assert '"output\\ndata shape ()"' in source
    assert '"_saved_other = b (4, 3)"' in source and "_saved_self" not in source
    out.backward()
    assert "grad shape (4, 3)" in viz.draw(out, names={"a": a, "b": b}).source


def test_a_drawing_also_shows_as_an_html_image_so_stored_notebooks_render_before_running():
    """JupyterLab shows a stored SVG output of an untrusted notebook as text; an <img> in HTML it shows."""
    import base64
    x = tg.tensor(2.0, requires_grad=True)
    bundle = tg.viz.draw(x * 3)._repr_mimebundle_()
    html_img = bundle["text/html"]
    assert html_img.startswith('<img src="data:image/svg+xml;base64,') and "<svg" not in html_img
    encoded = html_img.split("base64,")[1].split('"')[0]
    assert base64.b64decode(encoded).decode("utf-8") == bundle["image/svg+xml"]


# --- the legend lists what the drawing shows (issue 35) ---

def _legend_rows(source):
    legend = source[source.index("legend [label=<"):]
    return re.findall(r"<font color=\"[^\"]*\">([^<]*)</font>", legend)


def test_legend_lists_only_the_kinds_of_box_the_drawing_shows():
    env = rqs(tg)
    # no saved tensors drawn, no intermediate named: the legend lists neither
    rows = _legend_rows(viz.draw(env["t"], names={"p": env["p"], "q": env["q"], "s": env["s"]}, saved=False,
                                 legend=True).source)
    assert rows == ["output", "leaf", "backward node"], rows
    # r named: an intermediate; saved tensors drawn (none freed yet)
    rows = _legend_rows(viz.draw(env["t"], names=env, legend=True).source)
    assert rows == ["output", "intermediate", "leaf", "backward node", "saved tensor"], rows
    # after backward the saved tensors are freed: only the freed kind is drawn
    env["t"].backward()
    rows = _legend_rows(viz.draw(env["t"], names=env, legend=True).source)
    assert "freed saved tensor" in rows and "saved tensor" not in rows, rows
    # without ops the backward nodes are points: no row for them
    rows = _legend_rows(viz.draw(env["t"], names=env, ops=False, legend=True).source)
    assert "backward node" not in rows, rows


def test_stepper_legend_is_the_same_on_every_frame_and_lists_the_freed_tensors_it_will_show():
    env = rqs(tg)
    steps = viz.backward_steps(env["t"], names=env, legend=True)
    legends = {tuple(_legend_rows(steps[k].source)) for k in range(len(steps))}
    assert len(legends) == 1, legends
    rows = legends.pop()
    assert "freed saved tensor" in rows and "saved tensor" in rows and "backward node running" in rows
    env = rqs(tg)
    kept = viz.backward_steps(env["t"], names=env, legend=True, retain_graph=True)
    assert "freed saved tensor" not in _legend_rows(kept[len(kept) - 1].source)


def _attention_head_steps(lib):
    """Notebook 19's causal attention head (4 positions, 3 features), stepped with d_out arriving at out."""
    gen = torch.Generator().manual_seed(0)
    q, k, v, d_out = (torch.randn(4, 3, generator=gen, dtype=torch.float64) for _ in range(4))
    if lib is tg:
        q, k, v = (tg.Variable(t, requires_grad=True) for t in (q, k, v))
        d_out = tg.Variable(d_out)
    else:
        q, k, v = (t.requires_grad_() for t in (q, k, v))
    scores = q @ k.transpose(0, 1) / math.sqrt(3)
    masked = scores.masked_fill(~lib.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))
    P = masked.softmax(dim=-1)
    out = P @ v
    return viz.backward_steps(out, names=dict(q=q, k=k, v=v, scores=scores, masked=masked, P=P, out=out),
                              gradient=d_out, legend=True)


@LIBS
def test_a_step_keeps_the_chain_of_backward_nodes_straight_and_no_text_under_10_pt(lib):
    """Issue 45: notebook 19's frames were a staircase 1155 pt (1540 px) wide, with 9 pt arrow labels, which
    the book shrank to 5-6 px. Each `next` arrow now weighs 10 (graphviz keeps heavy edges straight) and
    every text is 10 pt; draw() is as it was."""
    steps = _attention_head_steps(lib)
    for k in range(len(steps)):
        source = steps[k].source
        assert "edge [fontname=Helvetica fontsize=10]" in source and "nodesep=0.1" in source
        edges = re.findall(r"\t(n\d+ -> n\d+ \[.*\])\n", source)
        assert len(edges) == 22
        for line in edges:   # the next_functions arrows (no style of their own) weigh 10, the others 1
            assert ("weight=10" in line) == ("style=" not in line), line
    plain = viz.draw(steps.records[0].node).source
    assert "weight" not in plain and "nodesep" not in plain and "edge [fontname=Helvetica fontsize=9]" in plain
    if not HAS_DOT:
        return
    for k in range(len(steps)):
        svg = steps.svg(k)
        width_pt = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
        sizes = {float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)}
        assert min(sizes) >= 10, sizes
        # at its own size it fits JupyterLab's output area (968 px at most, 848 px beside the file browser)
        assert width_pt * 4 / 3 <= 848, (k, width_pt)


def test_a_frame_shrinks_to_its_column_in_the_slider_and_the_html_stepper():
    pytest.importorskip("ipywidgets")
    steps = _attention_head_steps(tg)
    if not HAS_DOT:
        pytest.skip("without dot a frame is its DOT text")
    view = steps.slider().children[3]
    # never shrunk below 3/4 of its own size, where its 10 pt labels (13.3 px) read 10 px: its width in pt, as px
    width_pt = float(re.search(r'<svg[^>]*\bviewBox="[\d.-]+ [\d.-]+ ([\d.]+) ', steps.svg(0)).group(1))
    for image in (view.value, _html_parts(steps)[1][0][1]):
        assert re.fullmatch(r'<img alt="step 1 of 9: [^"]*" src="data:image/svg\+xml;base64,[^"]+" '
                            rf'style="max-width:100%;height:auto;min-width:{math.ceil(width_pt)}px">', image), image[:200]
