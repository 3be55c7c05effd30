"""Does the lock install on every supported Python found here? (`make test`'s stage pythons-lock)

    python -m runnable_book.interpreters.lock_check [PYTHON ...]

For each interpreter (runnable_book.interpreters.found_here): a fresh venv of it, and its own pip, as a
newcomer's `make env` has, resolves requirements.txt (`pip install --dry-run --report`: nothing is
installed). It passes when pip would install exactly the lock's pins whose markers hold there,
each at its pinned version: no pin missing a release for that Python, none unpinned pulled in.
Two at a time (each mostly waits on the index). Exits 1 naming the interpreter and the pins.
A fresh environment built and the book made on each is `make test-pythons` (runnable_book/interpreters/matrix.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.requirements import Requirement

from runnable_book.interpreters import LOCK, found_here, supported


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins_where(environment: dict[str, str], lock: Path = LOCK) -> dict[str, str]:
    """{name: version} of the lock's pins whose markers hold in a marker ``environment``."""
    pins = {}
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            pins[normalized(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return pins


def check(executable: str, version: str) -> tuple[bool, str]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lock-check-") as scratch:
        venv, report, lock = Path(scratch) / "venv", Path(scratch) / "report.json", Path(scratch) / "lock.txt"
        lock.write_text("".join(line + "\n" for line in LOCK.read_text().splitlines() if not line.startswith("-e ")))
        made = subprocess.run([executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode:
            return False, f"Python {version} ({executable}): no venv: {made.stderr.strip()[-500:]}"
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "--ignore-installed",
                               "--quiet", "--disable-pip-version-check", "--report", str(report), "-r", str(lock)],
                              capture_output=True, text=True)
        if done.returncode:
            errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
            return False, f"Python {version} ({executable}): pip cannot install the lock: {' '.join(errors)[-1500:]}"
        resolved = json.loads(report.read_text())
    chosen = {normalized(item["metadata"]["name"]): item["metadata"]["version"] for item in resolved["install"]}
    pinned = pins_where(resolved["environment"])
    wrong = {name: (pinned.get(name), chosen.get(name)) for name in set(chosen) | set(pinned) if pinned.get(name) != chosen.get(name)}
    if wrong:
        return False, f"Python {version} ({executable}): pip's choice differs from the lock's pins (lock, pip): {wrong}"
    return True, f"Python {version} ({executable}): pip installs the lock's {len(pinned)} pins for it ({time.monotonic() - started:.0f} s)"


def main(argv=None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    interpreters = found_here(names or None)
    if not interpreters:
        print(f"lock_check: no supported Python ({', '.join(supported())}) found among {names or 'python3 and the usual places'}")
        return 1
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda known: check(*known), interpreters))
    for ok, line in results:
        print(("ok    " if ok else "FAIL  ") + line)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
