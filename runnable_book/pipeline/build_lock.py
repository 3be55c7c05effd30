"""One build at a time in a tree: a second `make book` (or `make html`, `make pdf`, ...) waits
for the first, saying so in one line, instead of running beside it.

Two builds at once in one clone both executed pages, wrote the same notebooks and the same
site, and printed contradicting reports. The lock is an advisory lock (flock) on a file in
_build/, held for the build's whole run and released by the kernel when its process ends,
however it ends: a build killed outright leaves no stale lock behind. The file says who holds
it, for the waiting build's line.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path


@contextlib.contextmanager
def one_build_at_a_time(lock: Path, command: str):
    """Hold ``lock`` while the block runs; if another build holds it, say so once and wait."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            print(f"Another build is running in this tree ({holder}); this one waits for it to end, then runs.",
                  file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"`{command}`, process {os.getpid()}, since {time.strftime('%H:%M:%S')}\n")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)
