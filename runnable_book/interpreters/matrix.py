"""The book on every supported Python found here: `make test-pythons` (CI: the workflow pythons.yml,
one version a job).

    python -m runnable_book.interpreters.matrix [PYTHON ...]

For each interpreter (runnable_book.interpreters.found_here, or those named: PYTHONS= in make), a fresh
clone of the committed HEAD, as a newcomer starts: `make book PYTHON=<it>` (its own .venv, from
the lock) then `make check` there (the quick lane; the full suite, `make test`, runs on one
Python). One clone at a time: each build uses both cores. Each step's output is kept in
_build/pythons/<version>-<step>.log; exits 1 naming the interpreter and the step that failed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time

from runnable_book.interpreters import found_here, supported
from runnable_book.repository import ROOT

LOGS = ROOT / "_build" / "pythons"


def build_and_check(executable: str, version: str) -> tuple[bool, str]:
    scratch = tempfile.mkdtemp(prefix=f"python{version}-")
    clone = f"{scratch}/book"
    steps = []
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), clone], check=True)
        for step in (["book", f"PYTHON={executable}"], ["check"]):
            started = time.monotonic()
            done = subprocess.run(["make", "--no-print-directory", *step], cwd=clone,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            log = LOGS / f"{version}-{step[0]}.log"
            log.write_text(done.stdout)
            steps.append(f"make {step[0]} {time.monotonic() - started:.0f} s")
            if done.returncode:
                return False, (f"Python {version} ({executable}): make {' '.join(step)} failed ({log.relative_to(ROOT)}):\n"
                               + done.stdout[-2000:])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return True, f"Python {version} ({executable}): {', '.join(steps)}"


def main(argv=None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    interpreters = found_here(names or None)
    if not interpreters:
        print(f"matrix: no supported Python ({', '.join(supported())}) found among {names or 'python3 and the usual places'}")
        return 1
    LOGS.mkdir(parents=True, exist_ok=True)
    results = []
    for executable, version in interpreters:
        results.append(build_and_check(executable, version))
        print(("ok    " if results[-1][0] else "FAIL  ") + results[-1][1], flush=True)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
