"""torch's own test database (op_db) as a test of teachgrad: every op torch tests, on torch's samples in
float64, through teachgrad's op of the same name (tests/opdb.py says how, and what each status means).

Each run checks every op of op_db on every one of its samples (op.sample_inputs: about 19,000, some
20 s on one core) and asserts that no op is silently wrong, crashes, or records another node name than torch,
except the ops of KNOWN, each with the reason. A new difference fails here; so does a KNOWN op that now does
better (take it out of KNOWN, and regenerate docs/op-coverage.md with `make opdb`, which also runs torch's
reference inputs: extremal values, many more samples, minutes). torch's nn modules (module_db: 114
modules, constructed by torch, called with Variables) are checked the same way against KNOWN_MODULES.
"""
from pathlib import Path

import pytest
import torch

import teachgrad as tg

from . import opdb

FAILURES = ("silently wrong", "crashes", "other node")

# op_db key (name.variant_test_name) -> (status, why). What teachgrad does today, found by this harness.
KNOWN: dict[str, tuple[str, str]] = {}   # (none left: squeeze with a tuple of dims and sum_to_size record torch's nodes)


# torch's nn modules (module_db): module name -> (status, why)
KNOWN_MODULES = {
}   # (issue 34: nn.CrossEntropyLoss on K-d input, torch's own MultiheadAttention and Transformer classes now agree)


@pytest.fixture(scope="module")
def module_results():
    return {r.key: r for r in (opdb.check_module(m) for m in opdb.load_module_db())}


def test_module_db_no_module_is_silently_wrong_or_crashes(module_results):
    assert len(module_results) > 100 and sum(r.status == "agrees" for r in module_results.values()) > 20
    new = {key: f"{r.status}: {opdb.clean(r.detail)}" for key, r in module_results.items()
           if r.status in FAILURES and KNOWN_MODULES.get(key, (None,))[0] != r.status}
    assert not new, "modules that differ from torch (fix them, or add them to KNOWN_MODULES with the reason):\n" + \
        "\n".join(f"  {key}: {why}" for key, why in sorted(new.items()))
    changed = {key: f"KNOWN_MODULES says {status}, now {module_results[key].status}"
               for key, (status, _) in KNOWN_MODULES.items() if module_results[key].status != status}
    assert not changed, "update KNOWN_MODULES:\n" + "\n".join(f"  {k}: {w}" for k, w in sorted(changed.items()))


@pytest.fixture(scope="module")
def results():
    ops = opdb.load_op_db()
    return {r.key: r for r in (opdb.check_op(op) for op in ops)}


def test_op_db_is_torchs_whole_database(results):
    assert len(results) > 600, "op_db lost ops: is torch's testing package complete?"
    assert sum(r.kind == "own" for r in results.values()) > 150
    assert sum(r.status == "agrees" for r in results.values()) > 150


def test_no_op_is_silently_wrong_crashes_or_records_another_node(results):
    new = {key: f"{r.status}: {opdb.clean(r.detail)}" for key, r in results.items()
           if r.status in FAILURES and KNOWN.get(key, (None,))[0] != r.status}
    assert not new, "ops that differ from torch (fix them, or add them to KNOWN with the reason):\n" + \
        "\n".join(f"  {key}: {why}" for key, why in sorted(new.items()))


def test_known_ops_still_differ(results):
    """A KNOWN op that now agrees (or differs otherwise) must leave KNOWN: the list says what is true today."""
    changed = {key: f"KNOWN says {status}, now {results[key].status}" for key, (status, _) in KNOWN.items()
               if key not in results or results[key].status != status}
    assert not changed, "update KNOWN (and `make opdb` for docs/op-coverage.md):\n" + \
        "\n".join(f"  {key}: {why}" for key, why in sorted(changed.items()))


def test_refusals_name_the_op(results):
    """An op teachgrad does not record is refused by its name: the error says which function it is."""
    refused = [r for r in results.values() if r.status == "refused by name"]
    assert len(refused) > 100   # (fewer as teachgrad gains ops)
    for r in refused:
        assert "no op of that name" in r.detail or "has no attribute" in r.detail, (r.key, r.detail)
        assert any(f"{part}" in r.detail for part in r.path.split(".")[1:]), (r.key, r.detail)


# ---- torch's reference inputs (inf, nan, zeros, empty tensors, extremes): `make opdb` runs them for every op; here,
# the ops that differed from torch there once (tests/test_op_db_fixes.py has a twin test for each), and the ops that
# still do, each with the reason

REFERENCE_GUARDED = ("__rpow__", "__rsub__", "logsumexp", "nn.functional.relu", "nn.functional.softplus", "pow",
                     "contiguous", "clamp_min", "clamp_max", "xlogy", "atan2", "fmax", "fmin", "true_divide",
                     "nn.functional.prelu", "nn.functional.hardtanh", "nn.functional.hardshrink", "copysign", "fmod",
                     "remainder", "nn.functional.batch_norm", "norm", "nn.functional.elu", "addcdiv", "sinc")
KNOWN_REFERENCE = {}   # op_db key: (status, why), for an op still differing on them (none today)


@pytest.mark.parametrize("key", REFERENCE_GUARDED + tuple(KNOWN_REFERENCE))
def test_reference_inputs(key):
    ops = [op for op in opdb.load_op_db() if opdb.op_key(op) == key or op.name == key]
    assert ops, key
    for op in ops:
        result = opdb.check_op(op, reference=True)
        expected = KNOWN_REFERENCE.get(opdb.op_key(op), (None,))[0]
        if expected is not None:
            assert result.status == expected, f"{result.key}: KNOWN_REFERENCE says {expected}, now {result.status}"
        else:
            assert result.status not in FAILURES, f"{result.key}: {result.status}: {opdb.clean(result.detail)}"


# ---- the harness itself: it sees a wrong value, a wrong gradient, a wrong tangent and another node name ---------

def _op(name):
    return next(op for op in opdb.load_op_db() if opdb.op_key(op) == name)


def _status(op, tg_call):
    resolved = opdb.Resolved("own", "test", tg_call, op.op)
    sample = opdb.samples_of(op, 1)[0]
    return opdb.check_sample(op, resolved, sample)


def test_harness_sees_a_wrong_value():
    assert _status(_op("sin"), tg.cos)[0] == "silently wrong"


def test_harness_sees_a_wrong_gradient():
    class Sin(tg.autograd.Function):   # sin's values, twice its gradient
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * grad * x.cos()
    status, detail = _status(_op("sin"), Sin.apply)
    assert status == "silently wrong" and detail.startswith("gradient of input 0")


def test_harness_sees_a_wrong_tangent():
    class Sin(tg.autograd.Function):   # sin's values and gradient, but no tangent: forward AD loses it
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        @staticmethod
        def jvp(ctx, tangent):
            return tangent * 0
    status, detail = _status(_op("sin"), Sin.apply)
    assert status == "silently wrong" and "tangent" in detail, detail


def test_harness_sees_another_node_name():
    status, detail = _status(_op("neg"), lambda x: x * -1)
    assert status == "other node" and "MulBackward0 (torch: NegBackward0)" in detail


def test_harness_agrees_with_itself():
    assert _status(_op("sin"), tg.sin) == ("agrees", "")
    assert torch.sin(torch.tensor(1.0)) == tg.sin(tg.tensor(1.0)).data


def _table(page, heading):
    """{first cell: the cells} of the table under `heading` in docs/op-coverage.md."""
    section = page.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    return {row[0].strip("| `"): row for row in rows}


def test_op_coverage_page_is_this_run(results, module_results):
    """docs/op-coverage.md (written by `make opdb`) says what teachgrad does today: every op and module of torch's
    databases with the status this run finds on torch's samples."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "op-coverage.md").read_text()
    ops, modules = _table(page, "Every op"), _table(page, "Every module")
    stale = {key: (ops[key][2] if key in ops else "missing", r.status) for key, r in results.items()
             if key not in ops or ops[key][2] != r.status}
    stale.update({key: (modules[key][1] if key in modules else "missing", r.status)
                  for key, r in module_results.items() if key not in modules or modules[key][1] != r.status})
    assert not stale, f"docs/op-coverage.md is out of date (page, now): {stale}; run `make opdb`"
