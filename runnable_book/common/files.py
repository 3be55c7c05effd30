"""Built files: written whole or not at all (write_atomically), and known again while unchanged
(file_identity, kept_per_file)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def write_atomically(path: Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8, or bytes) to ``path`` through a temporary file in its
    folder, renamed over it: a build, a browser or a test reading ``path`` meanwhile sees the
    old file or the new one, never half of one, and a failed write leaves the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
        # A temporary file is private (0600); a built file is readable like any other.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def file_identity(path: Path) -> list[int]:
    """A file's size, modification and change times (ns) and inode: what a rewrite changes, as
    git's index and Bazel's digest cache take it. For keeping what a file's bytes gave while the
    file is the same one, never for deciding what to build (that goes by content)."""
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def kept_per_file(files: dict[str, Path], kept: Path, compute: Callable[[Path], T], kind: str = "") -> dict[str, T]:
    """``compute(file)`` for each of ``files`` (by name), what each gave kept in the JSON file
    ``kept`` by the file's identity and used again while that identity holds: a build rewrites a
    few of a large book's files, and reading all of them again grows with the book. (What
    ``compute`` gives must be JSON; ``kind`` names what it gives: a record of another kind, or a
    damaged or missing one, is computed again.)"""
    try:
        before = json.loads(kept.read_text())
    except (OSError, ValueError):
        before = {}
    entries = before.get("entries") if isinstance(before, dict) and before.get("kind") == kind else None
    entries = entries if isinstance(entries, dict) else {}
    found, values = {}, {}
    for name, path in files.items():
        identity = file_identity(path)
        entry = entries.get(name)
        if not (isinstance(entry, dict) and entry.get("identity") == identity and "value" in entry):
            entry = {"identity": identity, "value": compute(path)}
        found[name], values[name] = entry, entry["value"]
    write_atomically(kept, json.dumps({"kind": kind, "entries": found}))
    return values
