"""teachgrad moves the objects that exist when it is imported (torch's and its own modules) out of the way of
Python's full collections (gc.freeze): a recorded graph sets a full collection off every ~20,000 nodes, and each
would otherwise walk those ~170,000 objects again (docs/speed.md, "The chain and the garbage collector")."""
import subprocess
import sys
import textwrap


def _run(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, capture_output=True,
                          text=True).stdout.split()


def test_import_freezes_the_import_time_objects():
    before, after, tracked = map(int, _run("""
        import gc, torch
        before = gc.get_freeze_count()
        import teachgrad
        print(before, gc.get_freeze_count(), len(gc.get_objects()))
    """))
    assert before == 0
    assert after > 50_000          # torch's and teachgrad's modules, classes and functions
    assert tracked < after // 10   # what full collections still walk: little, until the program makes more


def test_full_collections_of_freed_graphs_walk_only_what_is_alive():
    """Graphs built and freed one after another: each full collection they set off walks only the young objects."""
    collections, largest = map(int, _run("""
        import gc, teachgrad as tg
        sizes = []
        gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2
                            and sizes.append(len(gc.get_objects())))
        for _ in range(12):
            y = tg.tensor(1.0, requires_grad=True)
            for _ in range(5000):
                y = y * 1.0
            y.backward()
        print(len(sizes), max(sizes, default=0))
    """))
    assert collections > 0                   # the graphs do set full collections off
    assert largest < 40_000                  # but none of them walks the import-time objects (~170,000)
