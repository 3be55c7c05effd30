"""The page's IPython.display (runnable_book/sphinx_ext/runner/display.py) under CPython: each value's
display bundle as IPython's formatter makes it (the _repr_*_ methods, _repr_mimebundle_ first,
text/plain always), IPython.display's classes, display() and clear_output() as the page's
Python sends them. What the page draws of a bundle: tests/js/mime.test.mjs and the browser
test, tests/test_browser_outputs.py."""

from __future__ import annotations

import base64
import json

import pytest

from runnable_book.sphinx_ext.runner import display as shim

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==")


@pytest.fixture
def sent(monkeypatch):
    """What display() publishes, as the page receives it ([{data, metadata}]), and clears."""
    published, cleared = [], []
    monkeypatch.setattr(shim, "publish", lambda text: published.append(json.loads(text)))
    monkeypatch.setattr(shim, "clear", cleared.append)
    monkeypatch.setattr(shim, "show_figure", lambda value: False)
    return published, cleared


class Rich:
    def _repr_html_(self):
        return "<b>rich</b>"

    def _repr_markdown_(self):
        return "**rich**"

    def __repr__(self):
        return "Rich()"


def test_a_value_with_repr_methods_gives_each_format_and_its_text():
    data, metadata = shim.bundle(Rich())
    assert data == {"text/html": "<b>rich</b>", "text/markdown": "**rich**", "text/plain": "Rich()"}
    assert metadata == {}


def test_bytes_of_an_image_travel_as_base64_and_metadata_is_kept_by_type():
    class Picture:
        def _repr_png_(self):
            return PNG, {"width": 40}
    data, metadata = shim.bundle(Picture())
    assert base64.b64decode(data["image/png"]) == PNG
    assert metadata == {"image/png": {"width": 40}}


def test_repr_mimebundle_comes_first_and_the_other_methods_fill_in():
    class Both:
        def _repr_mimebundle_(self, include=None, exclude=None):
            return {"text/html": "<i>bundle</i>", "text/plain": "plain"}, {"text/html": {"isolated": True}}

        def _repr_html_(self):
            return "<i>method</i>"

        def _repr_latex_(self):
            return "$x$"
    data, metadata = shim.bundle(Both())
    assert data == {"text/html": "<i>bundle</i>", "text/plain": "plain", "text/latex": "$x$"}
    assert metadata == {"text/html": {"isolated": True}}


def test_a_method_that_returns_none_or_raises_leaves_its_format_out(capsys):
    class Shy:
        def _repr_html_(self):
            return None

        def _repr_markdown_(self):
            raise ValueError("no markdown today")
    data, _ = shim.bundle(Shy())
    assert set(data) == {"text/plain"}
    assert "_repr_markdown_() raised" in capsys.readouterr().err


def test_json_that_json_cannot_carry_is_left_out_and_said(capsys):
    data, _ = shim.bundle(shim.JSON({"x": float("nan")}))
    assert set(data) == {"text/plain"}
    assert "cannot be shown" in capsys.readouterr().err


def test_include_and_exclude_choose_formats():
    assert set(shim.bundle(Rich(), include=["text/html"])[0]) == {"text/html"}
    assert set(shim.bundle(Rich(), exclude=["text/html"])[0]) == {"text/markdown", "text/plain"}


def test_ipython_display_classes_say_what_ipython_says():
    cases = {
        shim.HTML("<p>x</p>"): ("text/html", "<p>x</p>"),
        shim.Markdown("*x*"): ("text/markdown", "*x*"),
        shim.Latex(r"$\alpha$"): ("text/latex", r"$\alpha$"),
        shim.Math(r"\alpha"): ("text/latex", r"$\displaystyle \alpha$"),
        shim.SVG('<?xml version="1.0"?>\n<svg width="1"/>'): ("image/svg+xml", '<svg width="1"/>'),
        shim.JSON({"a": [1]}): ("application/json", {"a": [1]}),
        shim.Javascript("alert(1)"): ("application/javascript", "alert(1)"),
    }
    for value, (mime, expected) in cases.items():
        data, _ = shim.bundle(value)
        assert data[mime] == expected, mime
        assert data["text/plain"] == f"<IPython.core.display.{type(value).__name__} object>"


def test_image_from_bytes_a_file_or_an_address(tmp_path):
    data, metadata = shim.bundle(shim.Image(data=PNG, width=40, alt="two red pixels"))
    assert set(data) == {"image/png", "text/plain"}
    assert metadata == {"image/png": {"width": 40, "alt": "two red pixels"}}
    jpeg = tmp_path / "photo.jpg"
    jpeg.write_bytes(b"\xff\xd8\xff\xe0" + b"0" * 10)
    assert "image/jpeg" in shim.bundle(shim.Image(filename=str(jpeg)))[0]
    assert "image/jpeg" in shim.bundle(shim.Image(str(jpeg)))[0]
    linked = shim.bundle(shim.Image(url="https://example.org/a.png", width=10))[0]
    assert linked["text/html"] == '<img src="https://example.org/a.png" width="10"/>'


def test_display_publishes_each_value_raw_bundles_and_clears(sent):
    published, cleared = sent
    shim.display(Rich(), shim.Markdown("m"), None)
    shim.display({"text/plain": "p", "image/png": PNG}, raw=True)
    shim.publish_display_data({"text/html": "<hr>"})
    shim.clear_output(wait=True)
    shim.display(shim.HTML("after"), clear=True)
    assert [sorted(item["data"]) for item in published] == [
        ["text/html", "text/markdown", "text/plain"], ["text/markdown", "text/plain"], ["image/png", "text/plain"],
        ["text/html"], ["text/html", "text/plain"]]
    assert base64.b64decode(published[2]["data"]["image/png"]) == PNG
    assert cleared == [True, True]


def test_display_of_an_object_that_displays_itself_or_is_a_figure(sent, monkeypatch):
    published, _ = sent
    shown = []

    class Itself:
        def _ipython_display_(self):
            shown.append("itself")
    monkeypatch.setattr(shim, "show_figure", lambda value: value == "figure")
    shim.display(Itself(), "figure")
    assert shown == ["itself"] and published == []


def test_display_html_and_the_others_show_one_format(sent):
    published, _ = sent
    shim.display_markdown("**raw**", raw=True)
    shim.display_html(Rich())
    assert [item["data"] for item in published] == [
        {"text/markdown": "**raw**"}, {"text/html": "<b>rich</b>", "text/plain": "Rich()"}]
