"""What a parse made of a text, kept between processes: keyed by the text and the parser.

Every `make book` is a new process, and each reads every page again (the library, the
exercises, the outputs and the HTML all start from the parsed pages). On a book of 200 pages
that parsing was the largest part of a prose edit's build, though one page had changed (`make
bench-chapters`, profiled). Here a parse is kept under ``_build/cache/parsed/``, named by the
digest of what it was made from: the text, and the parser itself (Python's version, the versions
of the packages that parse, and the source of the module that asks). An edited text, an upgraded package or an
edited parser is a new name, so nothing stale is ever found: inputs by content, not times.

Only a parse that succeeded is kept (a page with a problem says so each time). A kept parse
that cannot be read (cut short, another Python's pickle) is parsed again and kept again.
Written atomically, so parallel builds and test workers share it safely. It holds about KEPT
parses: past KEPT and an eighth, the least recently made go, down to KEPT (the folder is a cache:
`make clean` removes it). The eighth is so that a build does not read the age of every parse it
holds each time it keeps a new one: on a book of 200 pages the cache is full, and that reading
was a tenth of a prose edit's build (make bench-chapters, timed).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

from runnable_book.repository import ROOT

FOLDER = ROOT / "_build" / "cache" / "parsed"
KEPT = 4096  # about twenty times a book of 200 pages
PARSERS = ("jupytext", "markdown-it-py", "mdit-py-plugins", "myst-parser", "nbformat")

T = TypeVar("T")


def _fingerprint(parser_source: Path) -> bytes:
    # (Python's own version too: one checkout's build may be made by 3.11 one day and 3.13 the
    # next, and `ast` and pickle are Python's.)
    versions = [f"python {sys.version_info.major}.{sys.version_info.minor}"]
    for name in PARSERS:
        try:
            versions.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return "\n".join(versions).encode() + b"\0" + parser_source.read_bytes()


_FINGERPRINTS: dict[Path, bytes] = {}


def kept_parse(kind: str, text: str, parser_source: Path, parse: Callable[[], T]) -> T:
    """``parse()``'s result for ``text``, from the cache when this text was parsed so before by
    the same parser (``parser_source``: the module whose code does the parsing)."""
    if parser_source not in _FINGERPRINTS:
        _FINGERPRINTS[parser_source] = _fingerprint(parser_source)
    key = hashlib.sha256(kind.encode() + b"\0" + _FINGERPRINTS[parser_source] + b"\0" + text.encode()).hexdigest()
    path = FOLDER / f"{kind}-{key}.pickle"
    try:
        with open(path, "rb") as kept:
            return pickle.load(kept)
    except Exception:  # (absent, or unreadable: parsed again below)
        pass
    result = parse()
    try:
        _keep(path, result)
    except OSError:  # (a read-only checkout, a full disk: the parse stands, only not kept)
        pass
    return result


def _keep(path: Path, result) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(result, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Past KEPT and an eighth, the oldest made go, down to KEPT (a cache's order, not a build's
    input). Counting the names costs little; only a prune reads their ages."""
    entries = list(os.scandir(folder))
    if len(entries) <= KEPT + KEPT // 8:
        return
    entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
    for entry in entries[: len(entries) - KEPT]:
        Path(entry.path).unlink(missing_ok=True)
