"""The stored notebooks: present in order, executed, and free of run-to-run noise (nbval runs them)."""
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SERIES = ["00_why_autograd", "01_forward_and_backward", "02_variables_and_functions", "03_graph_and_engine",
          "04_build_your_own_engine", "05_gradient_accumulation", "06_retain_graph", "07_no_grad_and_detach",
          "08_inplace_and_views", "09_anomaly_and_inference_mode", "10_single_layer_network",
          "11_custom_functions", "12_training", "13_higher_order", "14_forward_mode", "15_memory", "16_devices",
          "17_backprop_by_hand", "18_function_transforms", "19_attention_and_a_small_gpt",
          "23_data_parallel"]
PRESENT = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _load(name):
    return json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())


def test_series_is_in_order():
    assert PRESENT == SERIES, "notebooks/ must hold exactly the series, in order (update SERIES and the README)"


@pytest.mark.parametrize("name", PRESENT)
def test_executed_in_order_with_outputs(name):
    cells = [c for c in _load(name)["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in cells]
    assert all(isinstance(n, int) for n in counts), f"{name}: a code cell was not executed (run `make notebooks`)"
    assert counts == list(range(1, len(cells) + 1)), f"{name}: cells were not executed top to bottom on one kernel"
    assert any(c["outputs"] for c in cells), f"{name}: no stored outputs"


@pytest.mark.parametrize("name", PRESENT)
def test_no_unstable_text_in_outputs(name):
    text = json.dumps([c.get("outputs", []) for c in _load(name)["cells"]])
    assert not re.search(r" at 0x[0-9a-f]+", text), f"{name}: a memory address in the outputs"
    assert "ipykernel_" not in text, f"{name}: a kernel temp path in the outputs"
    assert "site-packages" not in text, f"{name}: a site-packages path in the outputs"


@pytest.mark.parametrize("name", PRESENT)
def test_errors_only_where_expected(name):
    for cell in _load(name)["cells"]:
        if cell["cell_type"] != "code":
            continue
        errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
        expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        assert bool(errors) == expected, f"{name}: cell {cell['source'][:60]!r} error={bool(errors)} expected={expected}"
