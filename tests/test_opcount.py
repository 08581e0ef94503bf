"""benchmarks/opcount.py counts the bytecodes a case runs: the same count every time (what makes it useful on a
shared machine), with teachgrad's engine and Function.apply among the functions it names."""
import importlib.util
import pathlib

_path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "opcount.py"
_spec = importlib.util.spec_from_file_location("opcount", _path)
opcount = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(opcount)


def test_the_count_of_a_case_is_the_same_every_time_and_names_the_engine():
    first, second = opcount.count("chain"), opcount.count("chain")
    moved = {f: (first.get(f), second.get(f)) for f in set(first) | set(second) if first.get(f) != second.get(f)}
    assert not moved, moved
    assert first["teachgrad/core/engine.py:_run"] > 0 and first["teachgrad/core/function.py:apply"] > 0
    assert sum(first.values()) > 300 * 100   # 300 nodes, each recorded and run
