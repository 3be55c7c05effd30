"""The Pythons the book is built on: the supported ones (pyproject.toml's classifiers), those
found on this machine, and the lock's pins for each (requirements.txt, one universal lock).

- ``find_python.sh``: which interpreter `make env` makes .venv from (any Python can run it);
- ``lock_check.py``: `make test`'s stage pythons-lock, pip's dry run of the lock on each found;
- ``matrix.py``: `make test-pythons`, a fresh clone's `make book` and `make check` on each.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess

from runnable_book.repository import ROOT

LOCK = ROOT / "requirements.txt"
CLASSIFIER = re.compile(r'"Programming Language :: Python :: (3\.\d+)"')


def supported() -> list[str]:
    """The supported minor versions, oldest first ("3.11", ...): pyproject.toml's classifiers."""
    return sorted(CLASSIFIER.findall((ROOT / "pyproject.toml").read_text()), key=lambda v: int(v.split(".")[1]))


def identify(python: str) -> tuple[str, str] | None:
    """(its sys.executable, its version "3.11.2"), or None when it does not run."""
    try:
        done = subprocess.run([python, "-c", "import sys, platform; print(sys.executable); print(platform.python_version())"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.split()
    return (lines[0], lines[1]) if done.returncode == 0 and len(lines) == 2 else None


def found_here(names: list[str] | None = None) -> list[tuple[str, str]]:
    """The supported interpreters on this machine, one per (executable, version), by version:
    ``names`` when given (a make variable: PYTHONS=), else python3 and python3.N on PATH,
    Debian's /usr/bin/python3.N and pyenv's versions."""
    candidates = names or ["python3", *(f"python{v}" for v in supported()),
                           *sorted(glob.glob("/usr/bin/python3.[0-9]*")),
                           *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin/python3")))]
    found: dict[str, tuple[str, str]] = {}
    for name in candidates:
        if (names or shutil.which(name) or os.path.isfile(name)) and (known := identify(name)):
            executable, version = known
            if version.rsplit(".", 1)[0] in supported():
                found.setdefault(os.path.realpath(executable) + " " + version, known)
    return sorted(found.values(), key=lambda known: [int(part) for part in known[1].split(".")])
