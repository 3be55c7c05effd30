"""IPython.display for the page's Python (ours): display bundles as IPython makes them.

IPython is not in the browser. worker.mjs installs this module (as ``_browser_display``) before
page_python.py runs; page_python.py makes it ``IPython.display`` (and ``IPython.core.display``),
and sets ``publish`` to the worker's ``display`` and ``clear`` to its ``clear``. As in
pyodide-kernel and JupyterLite, a value is shown as IPython's formatter shows it: a bundle of
MIME types (``text/plain`` always; ``text/html``, ``text/markdown``, ``image/svg+xml``,
``image/png``, ``image/jpeg``, ``text/latex``, ``application/json`` from the value's
``_repr_mimebundle_`` or ``_repr_*_`` methods), which the page draws by JupyterLab's order of
preference (output.mjs, mime.mjs), the reader's HTML and SVG sanitised.

It is plain Python and runs under CPython too (tests/test_display_bundles.py).
"""

from __future__ import annotations

import base64
import json
import sys
import traceback

# Set by page_python.py: publish(bundle_as_json) sends one output, clear(wait) clears the cell's.
publish = None
clear = None
# Set by page_python.py: shows a matplotlib Figure as the figure backend does (True when it was one).
show_figure = None

# The formatters IPython's DisplayFormatter runs, in its order: MIME type -> the method it calls.
FORMATTERS = {
    "text/html": "_repr_html_",
    "text/markdown": "_repr_markdown_",
    "image/svg+xml": "_repr_svg_",
    "image/png": "_repr_png_",
    "image/jpeg": "_repr_jpeg_",
    "text/latex": "_repr_latex_",
    "application/json": "_repr_json_",
    "application/javascript": "_repr_javascript_",
}
# Binary formats travel as base64 text, as a notebook stores them.
BINARY = {"image/png", "image/jpeg", "image/gif", "image/webp"}
# What an image's first bytes say it is (IPython's Image reads them too).
IMAGE_SIGNATURES = [(b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8", "jpeg"), (b"GIF8", "gif"), (b"RIFF", "webp")]


def _as_text(mime: str, data):
    """One format's data as a notebook stores it: bytes of an image as base64, text as text."""
    if mime in BINARY and isinstance(data, (bytes, bytearray)):
        return base64.b64encode(bytes(data)).decode("ascii")
    if mime == "application/json":  # (what cannot travel as JSON, NaN among it, fails here, not in the page)
        return json.loads(json.dumps(data, allow_nan=False))
    if isinstance(data, (bytes, bytearray)):
        return bytes(data).decode("utf-8", "replace")
    return data


def _method_result(value, method: str, *args):
    """(data, metadata) from one of value's _repr_*_ methods, or None when it has none or
    returns None. A method that raises is reported under the cell, as IPython reports it,
    and that format is left out."""
    bound = getattr(type(value), method, None)
    if bound is None:
        return None
    try:
        result = getattr(value, method)(*args)
    except Exception:  # noqa: BLE001 - the reader's method: reported, as IPython does
        sys.stderr.write(f"{type(value).__name__}.{method}() raised; that format is not shown:\n"
                         + "".join(traceback.format_exc()))
        return None
    if result is None:
        return None
    if isinstance(result, tuple) and len(result) == 2:
        return result
    return result, None


def bundle(value, include=None, exclude=None) -> tuple[dict, dict]:
    """(data, metadata): value's display bundle, as IPython's DisplayFormatter.format makes it."""
    data: dict = {}
    metadata: dict = {}
    wanted = lambda mime: (include is None or mime in include) and (exclude is None or mime not in exclude)  # noqa: E731
    found = _method_result(value, "_repr_mimebundle_", include, exclude)
    if found is not None:
        more, more_metadata = found
        for mime, item in (more or {}).items():
            if wanted(mime):
                data[mime] = _as_text(mime, item)
        metadata.update(more_metadata or {})
    for mime, method in FORMATTERS.items():
        if mime in data or not wanted(mime):
            continue
        found = _method_result(value, method)
        if found is None:
            continue
        item, item_metadata = found
        try:
            data[mime] = _as_text(mime, item)
        except (TypeError, ValueError) as error:
            sys.stderr.write(f"{type(value).__name__}.{method}() returned what cannot be shown ({error}).\n")
            continue
        if item_metadata:
            metadata[mime] = item_metadata
    if "text/plain" not in data and wanted("text/plain"):
        data["text/plain"] = _plain(value)
    return data, metadata


def _plain(value) -> str:
    return value.data if isinstance(value, Pretty) else repr(value)


def send(data: dict, metadata: dict | None = None) -> None:
    if data:
        publish(json.dumps({"data": data, "metadata": metadata or {}}))


def display(*objs, include=None, exclude=None, metadata=None, transient=None, display_id=None, raw=False,
            clear=False, **kwargs):
    """IPython.display.display: show each object under the cell, as its last value would be.
    raw=True: each object is a bundle ({mime: data}) already. (display_id and updating a
    display in place are not supported here: each call shows anew.)"""
    if clear:
        clear_output(wait=True)
    for value in objs:
        if raw:
            send({mime: _as_text(mime, item) for mime, item in dict(value).items()}, metadata)
            continue
        if value is None:
            continue
        if show_figure is not None and show_figure(value):
            continue
        if hasattr(type(value), "_ipython_display_"):
            value._ipython_display_()
            continue
        data, found_metadata = bundle(value, include, exclude)
        send(data, {**found_metadata, **(metadata or {})})


def clear_output(wait=False):
    """Clear the cell's output now, or (wait=True) when it next shows something."""
    clear(bool(wait))


def publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    send({mime: _as_text(mime, item) for mime, item in dict(data).items()}, metadata)


def _display_as(mime):
    def display_mime(*objs, raw=False, metadata=None):
        if raw:
            for obj in objs:
                send({mime: _as_text(mime, obj)}, metadata)
        else:
            display(*objs, include=[mime, "text/plain"] if mime != "text/plain" else [mime], metadata=metadata)
    display_mime.__name__ = "display_" + mime.split("/")[-1].split("+")[0]
    return display_mime


display_html = _display_as("text/html")
display_markdown = _display_as("text/markdown")
display_svg = _display_as("image/svg+xml")
display_png = _display_as("image/png")
display_jpeg = _display_as("image/jpeg")
display_latex = _display_as("text/latex")
display_json = _display_as("application/json")
display_pretty = _display_as("text/plain")


class DisplayObject:
    """IPython's base of displayable objects: data given, or read from a file. (A url is not
    fetched: only Image uses one, as the image's address.)"""

    _read_flags = "r"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if data is not None and isinstance(data, str) and filename is None and url is None:
            if data.startswith(("http://", "https://")):
                url, data = data, None
        self.data, self.url, self.filename = data, url, filename
        self.metadata = metadata or {}
        if filename is not None and data is None:
            with open(filename, self._read_flags) as file:
                self.data = file.read()

    def __repr__(self):
        return f"<IPython.core.display.{type(self).__name__} object>"

    def _data_and_metadata(self):
        return (self.data, self.metadata) if self.metadata else self.data


class TextDisplayObject(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, (list, tuple)):
            data = "\n".join(map(str, data))
        super().__init__(data, url, filename, metadata)


class Pretty(TextDisplayObject):
    """Text shown as it is (its text/plain)."""


class HTML(TextDisplayObject):
    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, str) and data.startswith("<iframe "):  # (IPython warns the same way)
            sys.stderr.write("Consider using IPython.display.IFrame instead\n")
        super().__init__(data, url, filename, metadata)

    def _repr_html_(self):
        return self._data_and_metadata()

    def __html__(self):
        return self._repr_html_()


class Markdown(TextDisplayObject):
    def _repr_markdown_(self):
        return self._data_and_metadata()


class Latex(TextDisplayObject):
    def _repr_latex_(self):
        return self._data_and_metadata()


class Math(TextDisplayObject):
    def _repr_latex_(self):
        text = (self.data or "").strip("$")
        return (f"$\\displaystyle {text}$", self.metadata) if self.metadata else f"$\\displaystyle {text}$"


class SVG(DisplayObject):
    _read_flags = "rb"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        super().__init__(data, url, filename, metadata)
        if isinstance(self.data, bytes):
            self.data = self.data.decode("utf-8", "replace")
        if isinstance(self.data, str):  # IPython keeps the <svg> element alone (no XML prolog)
            start = self.data.find("<svg")
            self.data = self.data[start:] if start >= 0 else self.data

    def _repr_svg_(self):
        return self._data_and_metadata()


class JSON(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None, root="root", **kwargs):
        super().__init__(data, url, filename, metadata)
        if isinstance(self.data, str):
            self.data = json.loads(self.data)
        self.metadata = {"expanded": expanded, "root": root, **(metadata or {}), **kwargs}

    def _repr_json_(self):
        return self.data, self.metadata


class Javascript(TextDisplayObject):
    """Shown as its text: the page runs no script from a cell's output."""

    def _repr_javascript_(self):
        return self._data_and_metadata()


class Image(DisplayObject):
    """IPython's Image: bytes, a file or a URL; embedded as PNG, JPEG, GIF or WebP, or (a URL
    not embedded) an <img> of that address."""

    _read_flags = "rb"

    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None, height=None,
                 retina=False, unconfined=False, metadata=None, alt=None):
        if isinstance(data, str) and not data.startswith(("http://", "https://")) and filename is None:
            filename, data = data, None
        super().__init__(data, url, filename, metadata)
        self.embed = embed if embed is not None else self.url is None
        if isinstance(self.data, str):  # base64 text
            self.data = base64.b64decode(self.data)
        self.format = (format or self._format_of(self.data, filename or url or "")).lower().replace("jpg", "jpeg")
        self.width, self.height, self.retina, self.unconfined, self.alt = width, height, retina, unconfined, alt

    @staticmethod
    def _format_of(data, name: str) -> str:
        for signature, found in IMAGE_SIGNATURES:
            if isinstance(data, (bytes, bytearray)) and bytes(data).startswith(signature):
                return found
        return name.rsplit(".", 1)[-1] if "." in name else "png"

    def _image_metadata(self):
        found = {key: value for key, value in
                 (("width", self.width), ("height", self.height), ("alt", self.alt)) if value is not None}
        if self.unconfined:
            found["unconfined"] = True
        return {**found, **self.metadata}

    def _repr_mimebundle_(self, include=None, exclude=None):
        if not self.embed:
            size = "".join(f' {name}="{value}"' for name, value in (("width", self.width), ("height", self.height))
                           if value is not None)
            alt = f' alt="{self.alt}"' if self.alt else ""
            return {"text/html": f'<img src="{self.url}"{size}{alt}/>'}, {}
        mime = f"image/{self.format}"
        metadata = self._image_metadata()
        return {mime: self.data}, ({mime: metadata} if metadata else {})
