"""Draw autograd graphs, of teachgrad Variables and of torch tensors alike.

    import teachgrad as tg
    p = tg.tensor(3.0, requires_grad=True); q = tg.tensor(5.0, requires_grad=True)
    s = tg.tensor(2.0, requires_grad=True)
    r = p + q; t = r * s
    tg.viz.draw(t, names=locals())          # shows inline in JupyterLab
    steps = tg.viz.backward_steps(t, names=locals())   # runs t.backward(), one drawing per node
    steps            # in JupyterLab: a slider with prev/play/next; on a web page: steps.html()

The drawing is the backward graph, walked as the engine walks it: from the output's
`grad_fn` along each node's `next_functions` down to the `AccumulateGrad` nodes, whose
`.variable` is a leaf. Arrows point the way gradients flow. Drawn again after a backward
it shows the grads filled in and the saved tensors freed (unless retain_graph=True).

Looks: green box = output, yellow box = a named intermediate tensor, blue box = leaf,
grey oval = backward node, orange box = saved tensor (dashed and grey once freed).
With `wrapped=True` a teachgrad `CopySlices` node also shows the node it wraps (a dashed oval).
In a step of `backward_steps` each backward node carries its id (`n3 MulBackward0`), the id the
captions and the table use; the node running is gold, the nodes already run are green. A step is
drawn narrow (the chain of backward nodes kept straight, no text under 10 pt) and shrinks to its column.
An arrow from a node is labelled with its position in `next_functions`
(and with the `input_nr` at its head when that is not 0).
The DOT source is the same in every process: node ids count up in the order of the walk.
"""
import base64
import collections.abc
import functools
import html
import math
import re
from collections import deque

import graphviz
import torch

from .core.engine import Step, record_backward
from .utils.checkpoint import _Placeholder
from .core.variable import Variable
from .rules import tangents
from .rules import grad_mode

__all__ = ["draw", "backward_steps", "Drawing", "Steps", "Step", "GraphvizNotFound"]

INSTALL_HINT = (
    "Graphviz's `dot` program was not found on PATH, so the graph cannot be drawn as an image "
    "(its DOT text is still in `.source`). Install Graphviz, then run the cell again:\n"
    "    apt-get install graphviz              (Debian, Ubuntu)\n"
    "    brew install graphviz                 (macOS)\n"
    "    conda install -c conda-forge graphviz (conda)")

NODE_ATTR = {"shape": "box", "style": "rounded,filled", "fontname": "Helvetica", "fontsize": "10"}
LOOKS = {
    "output": {"fillcolor": "darkolivegreen1"},
    "intermediate": {"fillcolor": "lightyellow"},
    "leaf": {"fillcolor": "lightblue"},
    "op": {"shape": "ellipse", "style": "filled", "fillcolor": "lightgrey"},
    "saved": {"fillcolor": "orange"},
    "freed": {"style": "rounded,dashed", "color": "grey50", "fontcolor": "grey50"},
    "recomputed": {"style": "rounded,dashed,filled", "fillcolor": "moccasin"},
    "wrapped": {"shape": "ellipse", "style": "dashed,filled", "fillcolor": "white"},
}
LEGEND = {"output": "output", "intermediate": "intermediate", "leaf": "leaf",
          "op": "backward node", "saved": "saved tensor", "freed": "freed saved tensor"}
EDGE_LOOKS = {"next": {}, "grad_fn": {"style": "dotted"}, "variable": {"style": "dotted"},
              "saved": {"style": "dashed", "dir": "back"}, "wraps": {"style": "dashed", "arrowhead": "none"}}
LABEL_ROW_SEP = ",\\n "
# A step frame is read in a notebook's or a page's column (about 970 px in JupyterLab, 600-790 px in the book),
# so it is laid out narrow: its `next` arrows are heavy, which keeps the chain of backward nodes straight (else
# each named intermediate pulls the chain one step sideways, a staircase as wide as the graph is deep); nodes sit
# closer; and the arrows' labels are as big as the nodes', so that no text is smaller than 10 pt.
STEP_GRAPH_ATTR = {"nodesep": "0.1"}
STEP_EDGE_ATTR = {"fontsize": "10"}
STEP_EDGE_LOOKS = {"next": {"weight": "10"}}
RUNNING = {"fillcolor": "gold", "penwidth": "2"}
DONE = {"fillcolor": "palegreen"}
STEP_LEGEND = ((RUNNING["fillcolor"], "backward node running"), (DONE["fillcolor"], "backward node already run"))


class GraphvizNotFound(graphviz.ExecutableNotFound):
    """Raised when an image is asked for but Graphviz's `dot` is not installed."""

    def __init__(self):
        RuntimeError.__init__(self, INSTALL_HINT)


class Drawing(graphviz.Digraph):
    """A `graphviz.Digraph` that shows as SVG in Jupyter, with its DOT source as plain text.

    Without `dot`, Jupyter still shows the DOT source and how to install Graphviz;
    `pipe`, `render` and `view` raise `GraphvizNotFound`.
    """

    node_count = 0

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The SVG; the same SVG as an <img> in HTML (which JupyterLab shows in a stored notebook
        before it is run, where it would show a bare SVG only as text); the DOT source as text."""
        bundle = {"text/plain": self.source}
        try:
            bundle.update(super()._repr_mimebundle_(include, exclude, **kwargs))
        except GraphvizNotFound as error:
            bundle["text/html"] = _no_dot_html(error, self.source)
            return bundle
        svg = bundle.get("image/svg+xml")
        if svg:
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            bundle["text/html"] = f'<img src="data:image/svg+xml;base64,{data}" alt="computation graph">'
        return bundle

    def pipe(self, *args, **kwargs):
        return _needs_dot(super().pipe, *args, **kwargs)

    def render(self, *args, **kwargs):
        return _needs_dot(super().render, *args, **kwargs)

    def view(self, *args, **kwargs):
        return _needs_dot(super().view, *args, **kwargs)

    def __repr__(self):
        return f"<teachgrad.viz.Drawing with {self.node_count} nodes>"


def _needs_dot(method, *args, **kwargs):
    try:
        return method(*args, **kwargs)
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFound() from None


def _no_dot_html(error, source):
    return f"<pre>{html.escape(str(error))}</pre><pre>{html.escape(source)}</pre>"


# --- tensors: teachgrad Variables and torch tensors look alike from here on ---

def _is_tensor(x):
    return isinstance(x, (torch.Tensor, Variable))


def _is_node(x):
    return not _is_tensor(x) and hasattr(x, "next_functions")


def _as_torch(x):
    """The plain torch tensor holding x's values."""
    return x.data if isinstance(x, Variable) else x.detach()


def _values(t, max_values, row_sep=", "):
    """`3`, `[1, 2.5]` or `[[1, 0], [0, 1]]`; only the shape when there are many values.

    row_sep separates the rows of a matrix: a label puts each row on its own line.
    """
    if t.numel() > max_values or t.is_meta:   # a meta tensor has a shape but no values
        return "shape " + _shape(t)
    return _nested(t.tolist(), row_sep)


def _nested(v, row_sep=", "):
    if not isinstance(v, list):
        return format(v, ".4g")
    sep = row_sep if v and isinstance(v[0], list) else ", "
    return "[" + sep.join(_nested(x, row_sep) for x in v) + "]"


def _shape(t):
    return str(tuple(t.shape))


def _data_key(t):
    """What makes two tensor objects the same values in memory (a saved tensor and its source)."""
    t = _as_torch(t)
    if t.layout != torch.strided or t.is_meta:   # meta tensors have no memory: every data_ptr is 0
        return id(t)
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device)


def _shows_grad(x):
    """Whether x.grad means something (and reading it does not make torch warn)."""
    return x.is_leaf or getattr(x, "retains_grad", False)


class _Names:
    """Names for tensors: from a dict such as `locals()`, else a Variable's own `.name`."""

    def __init__(self, names):
        self.by_id, self.by_data, self.by_grad_fn = {}, {}, {}
        for name, x in (names or {}).items():
            if name.startswith("_") or not _is_tensor(x):
                continue
            self.by_id.setdefault(id(x), name)
            self.by_data.setdefault(_data_key(x), name)
            if x.grad_fn is not None:
                self.by_grad_fn.setdefault(id(x.grad_fn), []).append((name, x))

    def __call__(self, x):
        name = self.by_id.get(id(x)) or (self.by_data and self.by_data.get(_data_key(x)))
        own = getattr(x, "name", None)
        return name or (own if isinstance(own, str) else "")


# --- the graph as plain data, walked once ---

class _Graph:
    """Nodes (id -> kind, label lines) and edges, in the order the walk found them."""

    def __init__(self, options):
        self.options = options
        self.nodes = {}
        self.edges = []
        self.op_ids = {}      # id(backward node) -> node id
        self.ops = {}         # node id -> backward node (keeps it alive, so its id() stays unique)
        self.saved_of = {}    # op node id -> [(saved-tensor node id, attribute)]
        self.leaf_of = {}     # AccumulateGrad node id -> (leaf node id, leaf, title)
        self.grad_fn_edges = []  # (edge index, tensor) for tensor -> grad_fn edges

    def add(self, kind, lines):
        node_id = f"n{len(self.nodes)}"
        self.nodes[node_id] = (kind, lines)
        return node_id

    def edge(self, tail, head, kind, index=None, input_nr=0):
        self.edges.append((tail, head, kind, index, input_nr))

    def tensor_lines(self, x, title, with_grad=True):
        """Label lines for a tensor: its name and shape, its values, its grad."""
        o = self.options
        t = _as_torch(x)
        head = " ".join(filter(None, [_label_text(title) if title else "", _shape(t) if t.ndim else ""]))
        lines = [head] if head else []
        if o["values"] and t.numel() <= o["max_values"]:
            lines.append("data " + _values(t, o["max_values"], LABEL_ROW_SEP))
        if o["grads"] and with_grad and _shows_grad(x):
            grad = "None" if x.grad is None else _values(_as_torch(x.grad), o["max_values"], LABEL_ROW_SEP)
            lines.append("grad " + grad)
        tangent = _tangent(x) if o["tangents"] else None
        if tangent is not None:
            lines.append("tangent " + _values(tangent, o["max_values"], LABEL_ROW_SEP))
        return lines


def _tangent(x):
    """x's forward-mode tangent, as a torch tensor (None unless x is dual at the open level)."""
    if isinstance(x, torch.Tensor):
        fw = torch.autograd.forward_ad
        return fw.unpack_dual(x).tangent if fw._current_level >= 0 else None
    return tangents.tangent_of(x) if grad_mode.forward_level >= 0 else None


def _walk(roots, names, options):
    """Build a _Graph breadth-first from the roots, without recursion."""
    g, name_of = _Graph(options), _Names(names)
    queue, root_ids = deque(), {id(r) for r in roots}

    def visit(fn):
        if id(fn) not in g.op_ids:
            g.op_ids[id(fn)] = node_id = g.add("op", [_label_text(type(fn).__name__)])
            g.ops[node_id] = fn
            queue.append((fn, node_id))
        return g.op_ids[id(fn)]

    def attach(kind, x, title):
        node_id = g.add(kind, g.tensor_lines(x, title or (kind if kind == "output" else "")))
        if x.grad_fn is not None:
            g.grad_fn_edges.append((len(g.edges), x))
            g.edge(node_id, visit(x.grad_fn), "grad_fn")

    for root in roots:
        if _is_node(root):
            visit(root)
        elif _is_tensor(root):
            if options["output"]:
                attach("output", root, name_of(root))
            elif root.grad_fn is not None:
                visit(root.grad_fn)
        else:
            raise TypeError(f"draw() takes Variables, torch tensors or graph nodes, not {type(root).__name__}")

    while queue:
        fn, node_id = queue.popleft()
        for index, (next_fn, input_nr) in enumerate(fn.next_functions):
            if next_fn is not None:
                g.edge(node_id, visit(next_fn), "next", index, input_nr)
        if options["saved"]:
            _add_saved(g, fn, node_id, name_of)
        wrapped = getattr(fn, "_wrapped", None) if options["wrapped"] else None
        if wrapped is not None:       # teachgrad's CopySlices: the write's own node, run on the written slice
            g.edge(node_id, g.add("wrapped", [_label_text(type(wrapped).__name__), "wrapped inside"]), "wraps")
        leaf = getattr(fn, "variable", None)
        if leaf is not None and options["leaves"]:
            title = name_of(leaf)
            leaf_id = g.add("leaf", g.tensor_lines(leaf, title))
            g.leaf_of[node_id] = (leaf_id, leaf, title)
            g.edge(node_id, leaf_id, "variable")
        if options["intermediates"]:
            for name, x in name_of.by_grad_fn.get(id(fn), ()):
                if id(x) not in root_ids:
                    attach("intermediate", x, name)
    return g


def _add_saved(g, fn, node_id, name_of):
    """One node per saved tensor (`_saved_<name>` attributes), never merged with its source."""
    g.saved_of[node_id] = []
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        if _recomputed(fn, attr):
            _add_saved_node(g, node_id, attr, "recomputed", [attr, "recomputed in backward"])
            continue
        try:
            value = getattr(fn, attr)
        except RuntimeError:
            _add_saved_node(g, node_id, attr, "freed", [attr, "freed"])
            continue
        for title, x in _saved_tensors(attr, value):
            name = name_of(x)
            lines = g.tensor_lines(x, f"{title} = {name}" if name else title, with_grad=False)
            _add_saved_node(g, node_id, title, "saved", lines)


def _recomputed(fn, attr):
    """Whether a teachgrad node keeps a checkpoint's placeholder for this saved tensor (reading it
    would run the checkpointed segment again)."""
    names = getattr(getattr(fn, "_forward_cls", None), "saved_names", ())
    saved = getattr(fn, "_saved", ())
    name = attr[len("_saved_"):]
    if name not in names or not saved:
        return False
    entry = saved[names.index(name)]
    return entry is not None and isinstance(entry.packed, _Placeholder)


def _saved_tensors(attr, value):
    """The tensors in a saved attribute: itself, the tensors of a tuple, or none (a number, None)."""
    if _is_tensor(value):
        return [(attr, value)]
    if isinstance(value, (tuple, list)):
        return [(f"{attr}[{i}]", x) for i, x in enumerate(value) if _is_tensor(x)]
    return []


def _add_saved_node(g, op_id, title, kind, lines):
    saved_id = g.add(kind, lines)
    g.saved_of[op_id].append((saved_id, title))
    g.edge(op_id, saved_id, "saved")


# --- from _Graph to Drawing ---

def _render(g, title=None, nodes=None, edge_grads=None, grad_fn_grads=None, legend_rows=(), legend_kinds=None,
            narrow=False):
    """Draw g; a step frame passes per-node overrides, the gradients on edges, its legend rows and the kinds of
    box its legend lists (those of every frame), and narrow=True (STEP_GRAPH_ATTR's layout); otherwise the
    legend lists the kinds this drawing shows."""
    o, nodes = g.options, nodes or {}
    if legend_kinds is None:
        legend_kinds = _kinds_shown(g, nodes)
    d = Drawing(graph_attr={"ordering": "out", "fontname": "Helvetica", "fontsize": "10",
                            **(STEP_GRAPH_ATTR if narrow else {})},
                node_attr=NODE_ATTR,
                edge_attr={"fontname": "Helvetica", "fontsize": "9", **(STEP_EDGE_ATTR if narrow else {})})
    if title:
        d.body.append(f"\tlabel={_quote(_label_text(title))} labelloc=t\n")
    for node_id, (kind, lines) in g.nodes.items():
        kind, lines, extra = nodes.get(node_id, (kind, lines, {}))
        if kind == "op" and not o["ops"]:
            d.body.append(_statement(node_id, {"label": "", "shape": "point", "width": "0.1"}))
        else:
            label = "\\n".join(lines) or LEGEND[kind]
            d.body.append(_statement(node_id, {"label": label, **LOOKS[kind], **extra}))
    for i, (tail, head, kind, index, input_nr) in enumerate(g.edges):
        label, attrs = [], {}
        if o["edge_labels"] and kind == "next":
            label.append(str(index))
        elif o["edge_labels"] and kind in ("grad_fn", "variable", "wraps"):
            label.append(kind)
        grad = (edge_grads or {}).get((tail, index)) if kind == "next" else (grad_fn_grads or {}).get(i)
        if grad is not None:
            label.append("grad " + grad)
        if label:
            attrs["label"] = "\\n".join(label)
        if o["edge_labels"] and input_nr:
            attrs["headlabel"] = str(input_nr)
        d.body.append(_statement(f"{tail} -> {head}", {**attrs, **EDGE_LOOKS[kind],
                                                        **(STEP_EDGE_LOOKS.get(kind, {}) if narrow else {})}))
    if o["legend"]:
        d.body.append(_statement("legend", {"label": _legend_html(legend_kinds, legend_rows), "shape": "plaintext",
                                             "style": ""}))
    d.node_count = len(g.nodes)
    return d


def _kinds_shown(g, nodes=None):
    """The kinds of box a drawing of g shows (a frame's overrides in `nodes`): what its legend lists.
    Backward nodes drawn as points (ops=False) are not boxes to explain."""
    kinds = {(nodes or {}).get(node_id, (kind,))[0] for node_id, (kind, _) in g.nodes.items()}
    return kinds - ({"op"} if not g.options["ops"] else set())


def _statement(target, attrs):
    """One DOT line, `n1 [label=MulBackward0 fillcolor=lightgrey]` (graphviz's node() is slower)."""
    if not attrs:
        return f"\t{target}\n"
    return f"\t{target} [" + " ".join(f"{key}={_quote(value)}" for key, value in attrs.items()) + "]\n"


DOT_ID = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?)")
DOT_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


class _Html(str):
    """A label written in graphviz's HTML-like syntax (the legend's table): given to DOT as <...>."""


def _label_text(text):
    """Any text (a user's name) as DOT label text that shows it as given.

    Backslashes and quotes are escaped, so a trailing backslash or `\\N` stays text; `&` too, as
    graphviz reads entities such as `&amp;` even in plain labels; a newline becomes a line break.
    `<`, `>` and unicode need nothing: the label is quoted, not HTML.
    """
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")


def _quote(value):
    """A DOT attribute value (already escaped with _label_text where it holds text): bare, <html>, or quoted."""
    if isinstance(value, _Html):
        return value
    if DOT_ID.fullmatch(value) and value.lower() not in DOT_KEYWORDS:
        return value
    return '"' + value + '"'


def _legend_html(kinds, extra_rows=()):
    """One node holding a table: a swatch for each kind of node in `kinds` (in LEGEND's order; a legend lists
    only what its drawing shows), then any extra (colour, text) rows."""
    rows = []
    for kind, text in LEGEND.items():
        if kind not in kinds:
            continue
        look = LOOKS[kind]
        rows.append(f'<tr><td bgcolor="{look.get("fillcolor", "white")}">'
                    f'<font color="{look.get("fontcolor", "black")}">{text}</font></td></tr>')
    for colour, text in extra_rows:
        rows.append(f'<tr><td bgcolor="{colour}"><font color="black">{text}</font></td></tr>')
    return _Html(f'<<table border="0" cellborder="1" cellspacing="2">{"".join(rows)}</table>>')


DEFAULTS = dict(ops=True, leaves=True, intermediates=True, output=True, saved=True,
                values=True, grads=True, tangents=True, edge_labels=True, legend=False, wrapped=False, max_values=8)


def draw(*roots, names=None, title=None, **options):
    """Draw the backward graph behind `roots` (Variables, torch tensors or grad_fn nodes).

        draw(t, names=locals())                  # after `t = (p + q) * s`
        draw(t, names=locals(), saved=False, legend=True)

    names: a dict such as `locals()`, mapping variable names to tensors (names starting
    with `_` are skipped); otherwise a Variable's own `.name` labels it.
    Switches, all True unless said: ops (backward nodes; False draws them as dots),
    leaves, intermediates (named non-leaf tensors), output, saved (saved tensors),
    values, grads, tangents (a dual tensor's, inside a forward_ad.dual_level), edge_labels, legend (False),
    wrapped (False: True also draws the node a teachgrad `CopySlices` wraps; torch keeps its own in C++,
    out of Python's reach). Tensors with more than max_values (8) elements show their shape only.
    Returns a `Drawing` (a `graphviz.Digraph`).
    """
    return _render(_walk(roots, names, _options(options)), title)


def _options(options):
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}; the switches are {list(DEFAULTS)}")
    return {**DEFAULTS, **options}


# --- one backward pass, step by step ---

def backward_steps(root, *, names=None, gradient=None, retain_graph=None, **options):
    """Run `root.backward(gradient, retain_graph)` and return one drawing per node it ran.

        steps = backward_steps(t, names=locals())
        steps            # step through the drawings (a table as text): each node, what it got and sent
        steps[0]         # the first node running, its outgoing gradients on the arrows
        steps.caption(0) # the same in words
        steps.html()     # the stepper as self-contained HTML, for a page with no kernel

    Works for teachgrad Variables (via `record_backward` of teachgrad/core/engine.py) and for torch
    tensors (via a hook on every node). Takes the same switches as `draw`.
    """
    g = _walk([root], names, _options(options))
    if isinstance(root, torch.Tensor):
        records = _record_torch(root, g, gradient, retain_graph)
    else:
        with record_backward() as records:
            root.backward(gradient, retain_graph=retain_graph)
    return Steps(g, list(records), bool(retain_graph))


def _record_torch(root, g, gradient, retain_graph):
    """torch's engine, recorded as Steps by a hook on each node it may run."""
    records, handles = [], []

    def hook_for(fn):
        def hook(grad_inputs, grad_outputs):
            records.append(Step(fn, _copies(grad_outputs), _copies(grad_inputs)))
        return hook

    try:
        for fn in g.ops.values():
            handles.append(fn.register_hook(hook_for(fn)))
        root.backward(gradient, retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
    return records


def _tuple(strings):
    """('2', '8') as `(2, 8)`, ('1',) as `(1,)`."""
    return "(" + ", ".join(strings) + ("," if len(strings) == 1 else "") + ")"


def _copies(grads):
    return tuple(None if x is None else _as_torch(x).clone() for x in grads)


class Steps(collections.abc.Sequence):
    """The drawings of one backward pass, one per node run, in the order they ran.

    `steps[k]` shows node k running (gold), those already run (green), the gradients
    sent so far on the arrows, leaves' grads once filled in, saved tensors freed as
    their node runs (unless retain_graph). `steps.records` holds the raw `Step`s.
    """

    def __init__(self, graph, records, retain_graph):
        self.graph, self.records, self.retain_graph = graph, records, retain_graph
        self._frames, self._svgs = {}, {}

    def __len__(self):
        return len(self.records)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = range(len(self))[k]
        if k not in self._frames:
            self._frames[k] = self._frame(k)
        return self._frames[k]

    def _frame(self, k):
        """The graph as it stands once node k has run."""
        g, edge_grads, arrived = self.graph, {}, {}
        nodes = {op_id: ("op", self._lines(op_id), {}) for op_id in g.ops}   # every node shows its id
        for i, step in enumerate(self.records[:k + 1]):
            op_id = g.op_ids[id(step.node)]
            nodes[op_id] = ("op", self._lines(op_id), RUNNING if i == k else DONE)
            arrived[id(step.node)] = step.grad_outputs
            for index, grad in enumerate(step.grad_inputs):
                edge_grads[(op_id, index)] = self._fmt(grad)
            if not self.retain_graph:
                for saved_id, title in g.saved_of.get(op_id, ()):
                    nodes[saved_id] = ("freed", [title, "freed"], {})
            if op_id in g.leaf_of:
                leaf_id, leaf, title = g.leaf_of[op_id]
                nodes[leaf_id] = ("leaf", g.tensor_lines(leaf, title), {})
        grad_fn_grads = {i: self._fmt(arrived[id(x.grad_fn)][getattr(x, "output_nr", 0)])
                         for i, x in g.grad_fn_edges if id(x.grad_fn) in arrived}
        title = f"step {k + 1} of {len(self)}: {self._node(self.records[k].node)} runs"
        return _render(g, title, nodes, edge_grads, grad_fn_grads, STEP_LEGEND, self._legend_kinds(), narrow=True)

    def _legend_kinds(self):
        """The kinds of box any frame shows, so that the legend is the same on every frame: the graph's own,
        and the freed saved tensors that backward leaves behind (unless retain_graph)."""
        g = self.graph
        kinds = _kinds_shown(g)
        if not self.retain_graph and any(g.saved_of.get(op_id) for op_id in g.ops):
            kinds |= {"freed"}
        return kinds

    def _lines(self, op_id):
        """A backward node's label in a frame: its id, then its name (`n3 MulBackward0`)."""
        lines = self.graph.nodes[op_id][1]
        return [f"{op_id} {lines[0]}"] + lines[1:]

    def _node(self, node):
        """A node as the frames label it, `n3 MulBackward0`: the id tells twin nodes apart."""
        return f"{self.graph.op_ids[id(node)]} {type(node).__name__}"

    def _fmt(self, grad):
        return "None" if grad is None else _values(_as_torch(grad), self.graph.options["max_values"])

    def __repr__(self):
        lines = [f"backward ran {len(self)} nodes:"]
        for k, step in enumerate(self.records):
            outputs, inputs = (tuple(map(self._fmt, grads)) for grads in (step.grad_outputs, step.grad_inputs))
            lines.append(f"{k + 1:>3}. {self._node(step.node)}: "
                         f"grad_outputs {_tuple(outputs)} -> grad_inputs {_tuple(inputs)}")
        return "\n".join(lines)

    def caption(self, k: int) -> str:
        """What happens at step k: the node that runs, the gradient it gets, where it sends gradients."""
        g, step = self.graph, self.records[k]
        op_id = g.op_ids[id(step.node)]
        head = f"step {k + 1} of {len(self)}: {self._node(step.node)} runs"
        if op_id in g.leaf_of:
            leaf_name = g.leaf_of[op_id][2] or "its leaf"
            return f"{head}: adds {', '.join(map(self._fmt, step.grad_outputs))} into {leaf_name}.grad"
        received = _tuple(tuple(map(self._fmt, step.grad_outputs)))
        heads = {(tail, index): head_id for tail, head_id, kind, index, _ in g.edges if kind == "next"}
        sent = [f"{self._fmt(grad)} to {self._lines(heads[op_id, i])[0]}"
                for i, grad in enumerate(step.grad_inputs) if (op_id, i) in heads]
        return f"{head}: gets grad_outputs {received}, sends " + (", ".join(sent) or "nothing")

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """The live slider in a kernel with ipywidgets; the HTML stepper for pages and stored notebooks;
        the table as text."""
        try:
            return self.slider()._repr_mimebundle_(include, exclude, **kwargs)
        except ImportError:
            return {"text/plain": repr(self), "text/html": self.html()}

    def svg(self, k):
        """Frame k as an SVG string for a web page; without `dot`, its DOT source and the hint."""
        k = range(len(self))[k]
        if k not in self._svgs:
            try:
                svg = self[k].pipe(format="svg", encoding="utf-8")
                self._svgs[k] = svg[svg.index("<svg"):]
            except GraphvizNotFound as error:
                return _no_dot_html(error, self[k].source)
        return self._svgs[k]

    def html(self) -> str:
        """The stepper as one self-contained piece of HTML, for a web page with no kernel.

        The table, then each frame as an SVG image under its caption, and a few lines of plain
        JavaScript that show one frame at a time with a range slider and prev/play/next buttons.
        Where scripts do not run (a stored notebook not yet run), the first frame shows and the
        others fold away under "the other steps".
        """
        figures = [f'<figure class="tg-step" style="margin:0;overflow-x:auto">'
                   f'<figcaption>{html.escape(self.caption(k))}</figcaption>{self._image(k)}</figure>'
                   for k in range(len(self))]
        rest = ""
        if len(figures) > 1:
            rest = (f'<details class="tg-steps-rest"><summary>the other steps (2 to {len(self)})</summary>'
                    + "\n".join(figures[1:]) + "</details>\n")
        script = f"<script>{STEPPER_JS}</script>\n" if figures else ""
        return (f'<div class="tg-steps">\n<pre>{html.escape(repr(self))}</pre>\n'
                + "".join(figures[:1]) + "\n" + rest + script + "</div>")

    def _image(self, k):
        """Frame k as an <img> that shrinks to its column, never wider than its own size (the slider's view
        and the HTML stepper alike); without `dot`, its DOT source and the hint."""
        svg = self.svg(k)
        if not svg.startswith("<svg"):
            return svg
        data = base64.b64encode(svg.encode()).decode()
        return (f'<img alt="{html.escape(self.caption(k))}" src="data:image/svg+xml;base64,{data}" '
                f'style="{FRAME_STYLE}{_smallest_width(svg)}">')

    def slider(self):
        """An ipywidgets stepper: prev/play/next, a slider, the caption of the step, its drawing."""
        import ipywidgets

        last = max(len(self), 1)
        pick = ipywidgets.IntSlider(value=1, min=1, max=last, description="step")
        play = ipywidgets.Play(value=1, min=1, max=last, interval=STEP_MS, description="play")
        prev, next_ = (ipywidgets.Button(description=d, layout=ipywidgets.Layout(width="auto"))
                       for d in ("◀ prev", "next ▶"))
        ipywidgets.jslink((play, "value"), (pick, "value"))
        caption = ipywidgets.HTML(self._caption_html(0))
        view = ipywidgets.HTML(self._image(0) if len(self) else "", layout=ipywidgets.Layout(overflow="auto"))
        view.add_class("tg-step-view")
        table = ipywidgets.HTML(f"<pre>{html.escape(repr(self))}</pre>")

        def show(change):
            caption.value, view.value = self._caption_html(change["new"] - 1), self._image(change["new"] - 1)

        pick.observe(show, names="value")
        prev.on_click(lambda _: setattr(pick, "value", max(pick.value - 1, 1)))
        next_.on_click(lambda _: setattr(pick, "value", min(pick.value + 1, last)))
        controls = ipywidgets.HBox([prev, play, next_, pick])
        return _slider_class()([table, controls, caption, view], steps=self)

    def _caption_html(self, k):
        return f"<b>{html.escape(self.caption(k))}</b>" if len(self) else ""


STEP_MS = 1200   # how long play shows each step
FRAME_STYLE = "max-width:100%;height:auto"   # a frame shrinks to its column, keeping its proportions


def _smallest_width(svg):
    """How far a frame may shrink: until its smallest labels, 10 pt, read 10 px. A 10 pt label is 13.3 px at the
    drawing's own size, so at three quarters of it: a width in px equal to the drawing's width in pt (its viewBox,
    rounded up). A column narrower than that scrolls sideways (the figure's overflow) rather than shrinking the
    labels further."""
    box = re.search(r'<svg[^>]*\bviewBox="[\d.-]+ [\d.-]+ ([\d.]+) ', svg)
    return f";min-width:{math.ceil(float(box.group(1)))}px" if box else ""

# Runs where the page allows scripts (the book, a notebook run in JupyterLab): one frame at a time.
STEPPER_JS = """(function (root) {
  var figs = Array.prototype.slice.call(root.querySelectorAll("figure.tg-step")), timer = null;
  var rest = root.querySelector("details.tg-steps-rest"), bar = document.createElement("div");
  bar.className = "tg-steps-bar";
  bar.innerHTML = '<button type="button" data-go="-1">\u25c0 prev</button> <button type="button" data-go="play">' +
    '\u25b6 play</button> <button type="button" data-go="1">next \u25b6</button> <input type="range" min="1" ' +
    'max="' + figs.length + '" value="1" aria-label="step">';
  var range = bar.querySelector("input"), play = bar.querySelector("[data-go=play]");
  root.insertBefore(bar, figs[0]);
  figs.forEach(function (fig) { root.insertBefore(fig, rest); });
  if (rest) { root.removeChild(rest); }
  function show(k) {
    k = Math.max(1, Math.min(figs.length, k));
    range.value = k;
    figs.forEach(function (fig, i) { fig.hidden = i !== k - 1; });
    return k;
  }
  function stop() { clearInterval(timer); timer = null; play.textContent = "\u25b6 play"; }
  bar.addEventListener("click", function (event) {
    var go = event.target.getAttribute("data-go");
    if (!go) { return; }
    if (go !== "play") { stop(); show(+range.value + +go); return; }
    if (timer) { stop(); return; }
    if (+range.value === figs.length) { show(1); }
    play.textContent = "\u23f8 pause";
    timer = setInterval(function () { if (show(+range.value + 1) === figs.length) { stop(); } }, STEP_MS);
  });
  range.addEventListener("input", function () { stop(); show(+range.value); });
  show(1);
})(document.currentScript.parentNode);""".replace("STEP_MS", str(STEP_MS))


@functools.cache
def _slider_class():
    """A VBox whose text/plain is stable (a plain widget's repr would embed the whole SVG)."""
    import ipywidgets

    class StepsSlider(ipywidgets.VBox):
        """Live in a kernel; a stored notebook and a web page get `steps.html()`, text gets the table."""

        def __init__(self, children, steps):
            super().__init__(children)
            self.steps = steps

        def __repr__(self):
            return f"StepsSlider({len(self.steps)} steps)"

        def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs) or {}
            return {**bundle, "text/plain": repr(self.steps), "text/html": self.steps.html()}

    return StepsSlider
