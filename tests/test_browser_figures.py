"""runnable_book/sphinx_ext/runner/figures.py, the page's matplotlib backend, run under CPython.

The page runs it in Pyodide (the site tests, tests/test_browser_run.py); here its rules are
checked quickly: plt.show() sends each open figure once and closes them, a Figure as a
cell's value is sent once, what a cell leaves open is sent at its end unless it failed,
and the PNG is drawn at twice the size it is shown at.
"""

from __future__ import annotations

import base64
import importlib.util
import struct
import sys

import pytest

from runnable_book.repository import ROOT

matplotlib = pytest.importorskip("matplotlib")


@pytest.fixture
def figures(monkeypatch):
    """The backend module as the worker installs it (`_browser_figures`), sends recorded."""
    spec = importlib.util.spec_from_file_location(
        "_browser_figures", ROOT / "runnable_book" / "sphinx_ext" / "runner" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_browser_figures", module)
    spec.loader.exec_module(module)
    sent = []
    module.send = lambda plain, png, width, height: sent.append((plain, base64.b64decode(png), width, height))
    previous = matplotlib.get_backend()
    matplotlib.use("module://_browser_figures")
    import matplotlib.pyplot as plt

    yield module, sent, plt
    plt.close("all")
    matplotlib.use(previous)


def test_show_sends_each_open_figure_as_a_png_and_closes_them(figures):
    module, sent, plt = figures
    plt.subplots(figsize=(6.4, 3.8))[1].plot([1, 2, 3])
    plt.figure(figsize=(2, 2))
    plt.show()
    assert [s[0] for s in sent] == ["<Figure size 640x380 with 1 Axes>", "<Figure size 200x200 with 0 Axes>"]
    plain, png, width, height = sent[0]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    drawn = struct.unpack(">II", png[16:24])
    assert abs(drawn[0] - width * module.SCALE) <= 1 and abs(drawn[1] - height * module.SCALE) <= 1
    assert 500 <= width <= 640 and 300 <= height <= 380  # a tight box inside 6.4 x 3.8 in at 100 dpi
    assert plt.get_fignums() == []


def test_a_figure_value_is_sent_once_and_what_a_cell_leaves_open_at_its_end(figures):
    module, sent, plt = figures
    fig = plt.figure()
    assert module.show_value(fig) and not module.show_value(42)
    module.end_of_cell(ok=True)
    assert len(sent) == 1
    plt.figure()
    module.end_of_cell(ok=True)
    assert len(sent) == 2
    plt.figure()
    module.end_of_cell(ok=False)  # a cell that raised: its figures are dropped, not shown
    assert len(sent) == 2 and plt.get_fignums() == []


def test_changed_data_draws_a_different_png(figures):
    _, sent, plt = figures
    for data in ([1, 2, 3], [3, 1, 2]):
        plt.subplots()[1].plot(data)
        plt.show()
    assert sent[0][1] != sent[1][1]


def test_the_warm_up_draw_leaves_no_figure_and_sends_nothing(figures):
    module, sent, plt = figures
    module.warm_up()
    assert sent == [] and plt.get_fignums() == []
    plt.figure()
    assert plt.get_fignums() == [1]  # the reader's first figure is still figure 1


# runner/artist_docs.py: matplotlib's property lists, recorded in one Python and replayed in
# another (make assets checks the same in Pyodide; here the rules, with CPython's matplotlib).
ARTIST_DOCS = f"""
import json, sys
sys.path.insert(0, {str(ROOT / "runnable_book" / "sphinx_ext" / "runner")!r})
import artist_docs
mode, recording = sys.argv[1:]
if mode == "record":
    calls = artist_docs.record()
elif mode == "replay":
    with open(recording) as file:
        calls = json.load(file)
    # a text that is not matplotlib's, to show the replay is what the import used
    calls["matplotlib.lines.Line2D"][0] = "REPLAYED"
    artist_docs.replay(calls)
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
import matplotlib.artist as martist
if mode == "record":
    with open(recording, "w") as file:
        json.dump(calls, file)

class Mine(martist.Artist):  # a reader's own class: nothing recorded, computed
    def set_colour_of_mine(self, value):
        "Set the colour of mine."
print(json.dumps({{**artist_docs.documentation(), "a list": martist.kwdoc([Mine])}}))
"""


def test_artist_docs_replayed_give_the_docstrings_matplotlib_makes(tmp_path):
    import json
    import subprocess

    recording = tmp_path / "recorded.json"
    run = {mode: json.loads(subprocess.run([sys.executable, "-c", ARTIST_DOCS, mode, str(recording)],
                                           check=True, capture_output=True, text=True).stdout)
           for mode in ("plain", "record", "replay")}
    assert len(json.loads(recording.read_text())) > 50  # (one per Artist class matplotlib defines)
    assert run["record"] == run["plain"]
    differ = sorted(key for key in run["plain"] if run["replay"][key] != run["plain"][key])
    assert differ == ["set of matplotlib.lines.Line2D"]  # (the only text changed above)
    assert run["replay"]["set of matplotlib.lines.Line2D"].endswith("REPLAYED")
    assert "colour_of_mine" in run["replay"]["set of __main__.Mine"]
    assert run["replay"]["a list"] == run["plain"]["a list"]
