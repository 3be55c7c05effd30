"""Figures for the page's Python (ours): a matplotlib backend that sends each figure to the page.

worker.mjs installs this module (as ``_browser_figures``) the first time a cell imports
matplotlib, after loading Pyodide's matplotlib, and selects it as the backend. It plays the
part of the notebook's inline backend (matplotlib-inline): drawing is Agg's; ``plt.show()``
sends every open figure as a PNG and closes it; a figure that is a cell's value is sent
once; figures a cell leaves open are sent when it ends. The page (figures.mjs) shows each
one under its cell.

It is plain matplotlib and runs under CPython too (tests/test_browser_figures.py).
"""

from __future__ import annotations

import base64
import io
import struct

from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# What matplotlib asks of a backend module ("module://_browser_figures").
FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase

# Drawn at twice the figure's dpi and shown at its size: the same size as the notebook's
# figure, sharp on high-density screens.
SCALE = 2

# Set by the worker: send(plain, png_base64, width, height), width and height in CSS pixels.
send = None


def png(figure: Figure) -> tuple[bytes, int, int]:
    """The figure as the notebook's inline backend saves it (IPython's print_figure: a tight
    bounding box, the figure's own face colour), at SCALE times its dpi; and its size at 1x."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=figure.dpi * SCALE, bbox_inches="tight",
                   facecolor=figure.get_facecolor(), edgecolor=figure.get_edgecolor())
    data = buffer.getvalue()
    width, height = struct.unpack(">II", data[16:24])  # the PNG's IHDR chunk
    return data, round(width / SCALE), round(height / SCALE)


def send_figure(figure: Figure) -> None:
    data, width, height = png(figure)
    # repr(figure) is the figure's text/plain, what the stored notebook holds beside its image.
    send(repr(figure), base64.b64encode(data).decode("ascii"), width, height)


def show(*args, **kwargs) -> None:
    """plt.show(): send every open figure, then close them all (as the inline backend does)."""
    import matplotlib.pyplot as plt

    for number in plt.get_fignums():
        send_figure(plt.figure(number))
    plt.close("all")


def show_value(value) -> bool:
    """A cell's last value: a Figure is sent (once) and closed; True when it was one."""
    if not isinstance(value, Figure):
        return False
    import matplotlib.pyplot as plt

    send_figure(value)
    plt.close(value)
    return True


def warm_up() -> None:
    """Draw a small figure no one sees, before any cell draws (worker.mjs, when matplotlib is
    loaded ahead of the page's figure cells): the first draw's one-time costs (reading the
    font, setting Agg up) are paid then. Made outside pyplot, so no figure number is taken,
    nothing is left open and nothing is sent."""
    figure = Figure(figsize=(2, 1.5))
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], marker="o", label="line")
    axes.set_title("title")
    axes.legend()
    png(figure)


def end_of_cell(ok: bool) -> None:
    """Figures a cell left open are shown, as in a notebook; after an error they are dropped."""
    import matplotlib.pyplot as plt

    if ok:
        show()
    plt.close("all")
