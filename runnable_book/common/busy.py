"""Busy processes beside a run: a loaded machine, made on purpose and always taken away.

    with busy_processes(4):      # four processes spinning on the CPU until the block ends
        ...

What a newcomer's or CI's machine is when something else runs beside the book: the suite
(runnable_book/checks/loaded_suite.py), `make check` (runnable_book/bench/check_loop.py) and the grader
(runnable_book/bench/grade_class.py) are each run beside them. Each one is a Python spinning in a loop,
at the default priority (``nice`` 0, as the work beside it), in its own process group, killed
when the block ends, however it ends (an error, Ctrl-C). A parent killed outright (SIGKILL, a
`timeout` that ends the run) runs no `finally`: each hog then sees its parent change (it is
handed to init) and stops within a fraction of a second, so no hog outlives the run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

# Spins, looking up every million turns (a few hundredths of a second) whether its parent is
# still the process that started it.
SPIN = ("import os, sys\n"
        "parent = int(sys.argv[1])  # (given, not looked up: the parent may be gone already)\n"
        "while os.getppid() == parent:\n"
        "    for _ in range(1_000_000): pass\n")


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[subprocess.Popen]]:
    hogs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            hogs.append(subprocess.Popen([sys.executable, "-c", SPIN, str(os.getpid())], start_new_session=True,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        yield hogs
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()
