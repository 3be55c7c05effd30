"""matplotlib's property lists, recorded at build time and replayed in the page (ours).

Importing matplotlib writes, for each of its Artist classes (about 220), a docstring that lists
every property the class can set (``matplotlib.artist.kwdoc``: an ``ArtistInspector`` walks the
class's ``dir()`` and reads each setter's docstring). In the page that is a large share of
matplotlib's import (cProfile's), and a returning reader's first figure waits for it. The text
depends only on matplotlib's own classes, so it is made once:

- ``make assets`` (runnable_book/pipeline/figure_bytecode.mjs) imports matplotlib with ``record()`` in
  place, which keeps what each call of ``kwdoc`` returned, in order, and stores it in the first
  figure's zip; it then imports matplotlib again with ``replay()`` and fails unless every
  docstring and ``interpd`` entry is the same as the recorded import's;
- the page (page_python.py, as ``_browser_artist_docs``) calls ``replay_recorded()`` before its
  import: the same texts, not computed again.

A call with nothing recorded for it (a reader's own Artist subclass, a call with an instance or
a list) is computed as matplotlib computes it. Plain Python and matplotlib: it runs under
CPython too (tests/test_browser_figures.py).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys

ARTIST_MODULE = "matplotlib.artist"
# Beside this module in site-packages (first-figure.zip): {"module.Class": [text, ...]}.
RECORDING = "_browser_artist_docs.json"


def _class_key(artist) -> str | None:
    return f"{artist.__module__}.{artist.__qualname__}" if isinstance(artist, type) else None


class _WrapKwdocOnImport(importlib.abc.MetaPathFinder):
    """Once matplotlib.artist has run, its ``kwdoc`` is wrapped (before any other module of
    matplotlib defines an Artist subclass: they import matplotlib.artist first)."""

    def __init__(self, wrap):
        self.wrap = wrap

    def find_spec(self, name, path=None, target=None):
        if name != ARTIST_MODULE:
            return None
        sys.meta_path.remove(self)  # (so the lookup below finds the usual spec)
        spec = importlib.util.find_spec(name)
        run_module = spec.loader.exec_module

        def run_then_wrap(module):
            run_module(module)
            module.kwdoc = self.wrap(module.kwdoc)

        spec.loader.exec_module = run_then_wrap
        return spec


def record() -> dict[str, list[str]]:
    """From now on, what each ``kwdoc(SomeArtistClass)`` returns, by class, in call order."""
    calls: dict[str, list[str]] = {}

    def wrap(kwdoc):
        def recording(artist):
            text = kwdoc(artist)
            key = _class_key(artist)
            if key:
                calls.setdefault(key, []).append(text)
            return text
        return recording

    sys.meta_path.insert(0, _WrapKwdocOnImport(wrap))
    return calls


def replay(calls: dict[str, list[str]]) -> None:
    """The n-th ``kwdoc`` of a class returns its n-th recorded text; the rest is computed."""
    def wrap(kwdoc):
        left = {key: iter(texts) for key, texts in calls.items()}

        def replaying(artist):
            key = _class_key(artist)
            text = next(left[key], None) if key in left else None
            return kwdoc(artist) if text is None else text
        return replaying

    sys.meta_path.insert(0, _WrapKwdocOnImport(wrap))


def replay_recorded() -> bool:
    """``replay()`` of the recording beside this module (first-figure.zip puts both in
    site-packages); False, and nothing replayed, where there is none."""
    recording = os.path.join(os.path.dirname(__file__), RECORDING)
    if not os.path.isfile(recording):
        return False
    with open(recording, encoding="utf-8") as file:
        replay(json.load(file))
    return True


def documentation() -> dict[str, str]:
    """What the texts end up in, to compare two imports: every Artist class's ``set`` docstring
    and matplotlib's docstring interpolations (``_docstring.interpd``)."""
    import matplotlib.artist
    from matplotlib import _docstring

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    found = {f"set of {_class_key(cls)}": cls.set.__doc__ or ""
             for cls in [matplotlib.artist.Artist, *subclasses(matplotlib.artist.Artist)]}
    found.update({f"interpd {name}": str(value) for name, value in _docstring.interpd.params.items()})
    return found
