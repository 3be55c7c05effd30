"""nbval's execution of each stored notebook, kept: `make test` executes every page once.

nbval (`make test-notebooks`) re-executes each book/*.ipynb and compares its text outputs;
the byte-stability test (tests/test_execute_pages.py) needs the outputs of a re-execution
in full (each figure's SVG bytes, the execution counts) to show that re-executing an
unchanged page rewrites its notebook to the committed bytes. Rather than executing every
page a second time, it reads what nbval's run produced, written here:

* nbval's kernel (:class:`RecordingKernel`, put in place by nbval_plugin.py) is
  started with `make outputs`' settings (runnable_book/pipeline/execute_pages.py: KERNEL_ARGUMENTS,
  kernel_environment(): the book's own chapter_lib first) and keeps history as nbclient does (execution counts 1, 2, ...);
  nbval compares skipping execution counts and images, so its verdict is unchanged;
* every message the kernel sends for a cell is turned into outputs as nbclient turns them
  (nbformat's ``output_from_msg``; ``clear_output`` honoured);
* once a notebook's last cell has passed, the notebook as executed is written to
  _build/test-run/executed/<page>.ipynb, stamped with the digest of what it was executed
  from (the stored notebook's bytes and chapter_lib's): a later change to either makes the
  copy stale, and the test then executes the page itself, as it does when no copy exists
  (a bare `pytest tests/test_execute_pages.py`).
"""

from __future__ import annotations

import copy
import hashlib
import os
from collections import defaultdict
from pathlib import Path

import nbformat
from nbformat.v4 import output_from_msg
from nbval.kernel import RunningKernel, start_new_kernel

from runnable_book.common.files import write_atomically
from runnable_book.repository import ROOT
from runnable_book.pipeline.page_kernel import KERNEL_ARGUMENTS, KERNEL_STARTS, kernel_environment

EXECUTED = ROOT / "_build" / "test-run" / "executed"
STAMP_KEY = "executed_from_sha256"  # in the kept copy's metadata
OUTPUT_MESSAGES = ("stream", "display_data", "execute_result", "error")


def executed_path(ipynb: Path) -> Path:
    return EXECUTED / ipynb.name


def sources_digest(ipynb: Path) -> str:
    """What an execution of ipynb depends on: its bytes (its code) and chapter_lib's files."""
    digest = hashlib.sha256(ipynb.read_bytes())
    for path in sorted((ROOT / "chapter_lib").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def executed_notebook(ipynb: Path):
    """ipynb as nbval's run in this `make test` executed it, or None (none kept, or stale)."""
    path = executed_path(ipynb)
    if not path.exists():
        return None
    nb = nbformat.read(path, as_version=4)
    return nb if nb.metadata.get(STAMP_KEY) == sources_digest(ipynb) else None


def outputs_from(messages: list[dict]) -> tuple[list, int | None]:
    """(outputs, execution count) of one cell from its iopub messages, as nbclient makes them."""
    outputs, count, clear_before_next = [], None, False
    for message in messages:
        content, kind = message["content"], message["msg_type"]
        if "execution_count" in content:
            count = content["execution_count"]
        if kind == "clear_output":
            if content.get("wait"):
                clear_before_next = True
            else:
                outputs = []
        elif kind in OUTPUT_MESSAGES:
            if clear_before_next:
                outputs, clear_before_next = [], False
            outputs.append(output_from_msg(message))
    return outputs, count


class RecordingKernel(RunningKernel):
    """nbval's kernel with `make outputs`' settings, keeping every message of every cell."""

    def __init__(self, kernel_name, cwd=None, startup_timeout=60):
        # RunningKernel.__init__, with the kernel arguments and environment of `make outputs`.
        # On a new machine matplotlib builds its font cache at first import and says so on
        # stderr: built here first (as page_kernel.execute does), never a page's output.
        import matplotlib.font_manager  # noqa: F401 (imported for its side effect)

        # A kernel that never answers at its start ("Kernel didn't respond in 60 seconds", seen
        # under a loaded `make test`; start_new_kernel shuts it down) is started once more, as
        # `make outputs` does (page_kernel.KERNEL_STARTS); then nbval reports the failure.
        for start in range(1, KERNEL_STARTS + 1):
            try:
                self.km, self.kc = start_new_kernel(
                    startup_timeout=startup_timeout, kernel_name=kernel_name, stderr=open(os.devnull, "w"),  # noqa: SIM115
                    cwd=cwd, extra_arguments=KERNEL_ARGUMENTS, env=kernel_environment())
                break
            except RuntimeError:
                if start == KERNEL_STARTS:
                    raise
        self.requests: list[str] = []  # each executed cell's request id, in order
        self.messages: dict[str, list] = defaultdict(list)  # request id -> its iopub messages
        self.failed = False  # set by the root conftest.py when a cell's test failed
        self._ensure_iopub_up()

    def execute_cell_input(self, cell_input, allow_stdin=None):
        # History kept (nbval: store_history=False), as nbclient executes: counts 1, 2, ...
        request = self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)
        self.requests.append(request)
        return request

    def get_message(self, stream, timeout=None):
        message = super().get_message(stream, timeout=timeout)
        if stream == "iopub":
            self.messages[message["parent_header"].get("msg_id")].append(message)
        return message

    def keep(self, nb, ipynb: Path) -> None:
        """Write nb as this kernel executed it (not after a failed or unrun cell)."""
        executed = copy.deepcopy(nb)
        code = [cell for cell in executed.cells if cell.cell_type == "code"]
        if self.failed or len(code) != len(self.requests):
            return
        for cell, request in zip(code, self.requests):
            cell.outputs, cell.execution_count = outputs_from(self.messages[request])
        executed.metadata[STAMP_KEY] = sources_digest(ipynb)
        write_atomically(executed_path(ipynb), nbformat.writes(executed))
