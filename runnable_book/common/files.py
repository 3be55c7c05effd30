"""Built files: written whole or not at all (write_atomically), and known again while unchanged (file_identity)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
