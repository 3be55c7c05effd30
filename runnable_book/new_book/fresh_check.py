"""A new book as its author meets it (`make test-new-book`): the README's two commands in a fresh
folder, with a fresh environment.

    python -m runnable_book.new_book.fresh_check [--python python3.12]

Builds this tool's wheel, writes a new book (`python -m runnable_book new`), and runs the new
book's own `make book` and `make test` there: a venv made by the given Python from the book's
requirements.txt (the tool from its wheel, PIP_FIND_LINKS, as the book's README says until
the tool is on PyPI; everything else from the package index), and `npm ci` of the book's
package-lock.json. Nothing of this repository's environment is used. Says how long each
command took; exits 1, with the command's last lines, when one fails (its whole output:
_build/new-book/).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runnable_book import new_book
from runnable_book.release import tool_wheel
from runnable_book.repository import ROOT

# Where each command's whole output is kept (the book's folder is removed afterwards).
LOGS = ROOT / "_build" / "new-book"
# pip's line for each index location of this machine's configuration that does not exist: said
# for every requirement, it would bury the failure in a failed command's last lines.
NOISE = re.compile(r"WARNING: Location '.*' is ignored")
# What a shell of the author's has not: this repository's environment and book.
NOT_THE_AUTHORS = ("PYTHONPATH", "VIRTUAL_ENV", "RUNNABLE_BOOK_ROOT", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="python3", help="the Python the new book's venv is made with")
    parser.add_argument("--keep", type=Path, help="write the book here (new or empty) and keep it")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="new-book-"))
    LOGS.mkdir(parents=True, exist_ok=True)
    try:
        wheel = tool_wheel.build(work / "wheel")
        book = args.keep or work / "my-book"
        new_book.write(book, title="A new book")
        environment = {k: v for k, v in os.environ.items() if k not in NOT_THE_AUTHORS}
        environment["PIP_FIND_LINKS"] = str(wheel.parent)
        for command in (["make", "book", f"PYTHON={args.python}"], ["make", "test", f"PYTHON={args.python}"]):
            started = time.monotonic()
            log = LOGS / f"{command[1]}.log"
            with open(log, "w") as output:
                done = subprocess.run(command, cwd=book, env=environment, stdout=output, stderr=subprocess.STDOUT, text=True)
            took = time.monotonic() - started
            if done.returncode:
                said = [line for line in log.read_text().splitlines() if not NOISE.match(line)]
                print(f"FAIL  {' '.join(command)} in a new book ({took:.0f} s); its whole output is in {log}, "
                      f"its end:\n" + "\n".join(said[-40:]))
                return 1
            print(f"ok    {' '.join(command)} in a new book: {took:.0f} s", flush=True)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
