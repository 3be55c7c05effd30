"""A build interrupted, and two builds at once in one tree.

* Ctrl-C while pages execute ends the build in one line (what it kept, what to run), no
  traceback; its kernels are gone; and the pages it executed reach the next build's report
  (with what they changed, or that their outputs did not), though the next build finds them
  up to date.
* A second build started meanwhile waits for the first, saying so in one line, then runs.
* Ctrl-C in a terminal (a pseudo-terminal here) while a page's kernels start, or while its
  cell runs, ends in the build's own words alone: nbclient's kernel cleanup, left registered
  for exit, no longer prints "Exception ignored in atexit callback" and an AssertionError.

In a scratch copy of the repository (its sources; the copy builds its own `_build`): the first
notebook page gets a cell that prints a new line, the second a cell that prints nothing, the
third a cell that waits for a file the test creates, so the first build is surely inside the
third page's execution when it is interrupted. The lock itself is also tested alone
(runnable_book/pipeline/build_lock.py), cheaply.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from runnable_book.pipeline.build_lock import one_build_at_a_time
from runnable_book.pipeline.pages import notebook_pages
from runnable_book.repository import ROOT

OUTPUTS = ["lib", "diagrams", "outputs"]
# The graph as a terminal runs it: Ctrl-C not ignored (a background job's is, and this test's
# may be, run by a harness in the background).
AS_IN_A_TERMINAL = ("import runpy, signal, sys\n"
                    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                    "runpy.run_module('runnable_book.pipeline.artefact_graph', run_name='__main__', alter_sys=True)\n")


def add_cell(page, code: str) -> None:
    page.write_text(page.read_text().rstrip("\n") + f"\n\n```{{code-cell}} ipython3\n{code}\n```\n")


def started(copy, environment) -> subprocess.Popen:
    """The graph's `outputs` in the copy, in a session of its own (so Ctrl-C is sent to it alone)."""
    return subprocess.Popen([sys.executable, "-c", AS_IN_A_TERMINAL, *OUTPUTS], cwd=copy, env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.long  # (two builds of the copy's notebooks: four pages executed, twice each)
def test_ctrl_c_ends_in_one_line_and_the_next_build_waits_then_reports_what_it_changed(scratch_repository):
    copy = scratch_repository.path
    first, quiet, second = (copy / page.relative_to(ROOT) for page in notebook_pages()[:3])
    add_cell(first, 'print("a line the interrupted build printed")')
    add_cell(quiet, "silent = None  # (its outputs do not change)")
    go = copy / "go"
    add_cell(second, f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.1)")
    environment = {**os.environ, "PYTHONPATH": str(copy)}
    for make in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS"):  # (run as a person runs it, not under `make test`)
        environment.pop(make, None)

    interrupted = started(copy, environment)
    printed = ""
    while f"executed  book/{quiet.stem}.ipynb" not in printed:
        line = interrupted.stdout.readline()
        assert line, f"the build ended early:\n{printed}{interrupted.communicate()[1]}"
        printed += line
    waiting = started(copy, environment)
    said = waiting.stderr.readline()
    assert said.startswith("Another build is running in this tree (`artefact_graph lib diagrams outputs`, process "
                           f"{interrupted.pid}"), said
    assert said.rstrip().endswith("this one waits for it to end, then runs.")
    # Its kernels running (the third page's, which waits for `go`, once the second's are gone):
    # waited for, not a second's sleep, which a busy machine outlasts before it starts them.
    deadline = time.monotonic() + 300
    while not (kernels := [child for child in psutil.Process(interrupted.pid).children(recursive=True)
                           if "ipykernel" in " ".join(child.cmdline())]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kernels, "the first build is not executing a page"

    os.killpg(interrupted.pid, signal.SIGINT)
    out, err = interrupted.communicate(timeout=120)
    assert interrupted.returncode == 130, out + err
    assert err.count("\n") == 1 and err.startswith("Interrupted. Kept the steps it finished (lib, "), err
    assert "what it was in the middle of is made again" in err
    assert f"the notebooks it wrote ({first.stem}, {quiet.stem})" in err and "Run `make book` to finish" in err
    assert "Traceback" not in out + err
    gone, alive = psutil.wait_procs(kernels, timeout=60)
    assert not alive, f"kernels left running: {alive}"

    go.touch()
    out, err = waiting.communicate()  # (a build: minutes on a busy machine; the suite's limit holds for a hang)
    assert waiting.returncode == 0, out + err
    assert f"unchanged  book/{first.stem}.ipynb" in out and f"unchanged  book/{quiet.stem}.ipynb" in out, out
    report = out[out.index("Change report:"):]
    assert f"  {first.stem}: executed by a run stopped before its report, because code cell " in report, report
    assert "+a line the interrupted build printed" in report, report
    # (a page whose outputs did not change is named too: it was executed, and no report said so)
    assert re.search(rf"^  {quiet.stem}: executed by a run stopped before its report, because code cell \d+ is new; "
                     "outputs unchanged$", report, re.M), report
    assert f"  {second.stem}: executed because " in report, report


def test_a_second_build_waits_for_the_lock_saying_so_once(tmp_path, capfd):
    lock = tmp_path / "_build" / ".build.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys\nfrom pathlib import Path\nfrom runnable_book.pipeline.build_lock import one_build_at_a_time\n"
        f"with one_build_at_a_time(Path({str(lock)!r}), 'make book'):\n"
        "    print('held', flush=True)\n    sys.stdin.readline()\n")],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    taken = threading.Event()

    def second_build():
        with one_build_at_a_time(lock, "make html"):
            taken.set()

    waiting = threading.Thread(target=second_build)
    waiting.start()
    assert not taken.wait(1), "the second build did not wait"
    holder.communicate("\n", timeout=30)
    assert taken.wait(30), "the second build did not run once the first had ended"
    waiting.join()
    said = capfd.readouterr().err
    assert said.count("\n") == 1 and said.startswith(f"Another build is running in this tree (`make book`, process "
                                                     f"{holder.pid}, since "), said


WAITING_PAGE = """---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# 15.99 A page that waits

```{code-cell} ipython3
import time
time.sleep(120)
```
"""
# A page executed as `make outputs` executes it (two kernels at once), its KeyboardInterrupt
# said in one line as the graph says it (runnable_book/pipeline/artefact_graph.py).
EXECUTE_A_PAGE = ("import sys\nfrom pathlib import Path\nfrom runnable_book.pipeline import execute_pages\n"
                  "from runnable_book.pipeline.pages import read_page\nmd = Path(sys.argv[1])\nprint('executing', flush=True)\n"
                  "try:\n    execute_pages.execute(md, read_page(md))\nexcept KeyboardInterrupt:\n"
                  "    print('Interrupted.', file=sys.stderr)\n    sys.exit(130)\n")


def in_a_terminal(arguments: list[str], ctrl_c_after: float) -> tuple[str, int, list]:
    """Run ``arguments`` in a pseudo-terminal, type Ctrl-C ``ctrl_c_after`` seconds after it says
    `executing` (as a person does: the terminal sends SIGINT to its foreground job, which a
    background job of a non-interactive shell would ignore); returns all it wrote, its exit
    status and the kernels it had started."""
    pid, terminal = pty.fork()
    if pid == 0:  # (the child: the program, its output the terminal's)
        os.chdir(ROOT)
        # Ctrl-C not ignored, as a terminal's shell starts its foreground job: a run of this test
        # in the background (a harness, `make test &`) ignores SIGINT, which the program would
        # inherit and keep, go on to the cell's end, and exit 1 (seen: "executing\n^C" alone).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execv(sys.executable, [sys.executable, *arguments])
    written = b""

    def read_for(seconds: float) -> bool:
        nonlocal written
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([terminal], [], [], 0.1)[0]:
                try:
                    chunk = os.read(terminal, 4096)
                except OSError:  # (the program ended: Linux says EIO)
                    return False
                if not chunk:
                    return False
                written += chunk
        return True

    deadline = time.monotonic() + 300  # (its imports: seconds, several times that on a busy machine)
    while b"executing" not in written and time.monotonic() < deadline and read_for(0.2):
        pass
    assert b"executing" in written, written.decode(errors="replace")
    read_for(ctrl_c_after)
    kernels = [child for child in psutil.Process(pid).children(recursive=True)
               if "ipykernel" in " ".join(child.cmdline())]
    os.write(terminal, b"\x03")
    # To its end (the terminal's EOF), all it prints after the Ctrl-C read: a limit only for a
    # program that never ends, generous for a busy machine (unwinding takes a second unloaded).
    if read_for(300):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(terminal)
        pytest.fail("still running 300 s after Ctrl-C:\n" + written.decode(errors="replace"))
    _, status = os.waitpid(pid, 0)
    os.close(terminal)
    return written.decode(errors="replace").replace("\r\n", "\n"), os.waitstatus_to_exitcode(status), kernels


@pytest.mark.kernel
@pytest.mark.parametrize("ctrl_c_after", [0.3, 6.0], ids=["while-its-kernels-start", "while-its-cell-runs"])
def test_ctrl_c_in_a_terminal_ends_in_the_builds_words_alone(tmp_path, ctrl_c_after):
    page = tmp_path / "waiting.md"
    page.write_text(WAITING_PAGE)
    written, status, kernels = in_a_terminal(["-c", EXECUTE_A_PAGE, str(page)], ctrl_c_after)
    assert status == 130, written
    assert "Exception ignored" not in written and "Traceback" not in written, written
    assert written.rstrip().endswith("Interrupted."), written
    gone, alive = psutil.wait_procs(kernels, timeout=60)
    assert not alive, f"kernels left running: {alive}"
