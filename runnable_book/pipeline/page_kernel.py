"""A page run top to bottom in fresh kernels, as a reader's would run it, and what the runs printed.

execute_pages.py keeps each page's stored notebook from its .md and executes a page when its
inputs changed; this is the executing: the kernel started as every page's is (its arguments and
environment, page_inputs.py), the page run twice at once (two kernels, one per core) and the two
runs compared, a kernel that does not answer at its start started once more, the limit on a
cell's time (`execute.timeout` in _config.yml), Ctrl-C (kernel_interrupts.py), and every failure
said as a person looks for it: the page, the code cell, its .md line, what happened.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import logging
import os
import re
import subprocess
from pathlib import Path

import nbformat
import yaml
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from runnable_book.pipeline import kernel_interrupts
from runnable_book.pipeline.page_inputs import KERNEL_SETUP
from runnable_book.pipeline.pages import BookError, code_cells, shown
from runnable_book.pipeline.reader_notebook import draws_figures, is_added_cell, page_install_cell
from runnable_book.repository import ROOT

CONFIG = ROOT / "_config.yml"


@functools.cache
def timeout_s() -> int:
    """The limit on one cell's execution, set in one place: `execute.timeout` in _config.yml
    (Jupyter Book's default, 30 s, where a book sets none)."""
    return int((yaml.safe_load(CONFIG.read_text()).get("execute") or {}).get("timeout", 30))


# How the kernel that executes a page is started (page_inputs.py: an input of every page).
KERNEL_ARGUMENTS, KERNEL_ENVIRONMENT = KERNEL_SETUP["arguments"], KERNEL_SETUP["environment"]


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: ours, KERNEL_ENVIRONMENT, and the book's root first on
    PYTHONPATH, so that its pages import the book's own chapter_lib (an editable install of
    another checkout's, or none at all, would give them that one or nothing). Not an input of
    the pages: where the book lies changes no output."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, **KERNEL_ENVIRONMENT, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def page_code(nb) -> list:
    """The code cells that come from the .md (a reader's notebook adds an install cell)."""
    return [c for c in nb.cells if c.cell_type == "code" and not is_added_cell(c)]


def merged_streams(outputs: list) -> list:
    """Consecutive stream outputs of the same name as one output (what a reader sees).

    The kernel flushes stdout in chunks whose boundaries vary from run to run, so storing
    the chunks would make an unchanged page rewrite its notebook; nbval coalesces them too.
    """
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
            previous["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def execute(md: Path, nb, twice: bool = True, after: str | None = None) -> str | None:
    """Run the page top to bottom in its own folder, as a reader's kernel would; twice at
    once (two kernels, one per core), and stop if the two runs print different outputs.

    The reader's notebook's install cell runs first, in the same kernel (it installs
    nothing here), so the page's cells are executions 2, 3, ... and the notebook's
    counts read naturally from its first cell; the install cell itself is not kept in nb.
    ``after``: code the kernel runs after the page's cells (the exercises' contract,
    runnable_book/pipeline/exercise_contract.py), never kept in nb; returns what it printed.
    """
    if draws_figures(nb):
        # On a new machine matplotlib builds its font cache at first import and says so on
        # stderr: built here first, that note never becomes one of the page's outputs.
        import matplotlib.font_manager  # noqa: F401 (imported for its side effect)
    install = page_install_cell(nb)
    second = copy.deepcopy(nb) if twice else None
    runs = [run for run in (nb, second) if run is not None]
    with kernel_interrupts.stopped_on_ctrl_c():
        outcomes = asyncio.run(_execute_all(md, runs, install, after))
    error = next((outcome for outcome in outcomes if isinstance(outcome, BaseException)), None)
    if error is not None:
        raise error
    if second is not None:
        difference = first_difference(md, nb, second)
        if difference:
            raise page_failed(md, nb, difference)
    return outcomes[0]


def past_the_time_limit() -> str:
    """What a page's failure says of a cell stopped at the limit."""
    return (f"did not finish within the {timeout_s()} s limit (`execute.timeout` in _config.yml): "
            "an endless loop, or work to make smaller")


def in_one_line(err: BaseException) -> str:
    """An error as a page's failure names it: its type and its message's first line."""
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def page_failed(md: Path, nb, where: str, traceback: str = "") -> BookError:
    """A page's failure: where (page, cell, line: what), that its stored notebook was kept, the
    traceback if any; the failed run (nb) and where ride along for the HTML preview and the report."""
    error = BookError(f"{where}; {md.with_suffix('.ipynb').name} was not changed.\n{traceback}".rstrip())
    error.notebook, error.where = nb, where
    return error


async def _execute_all(md: Path, runs: list, install, after: str | None) -> list:
    with kernel_interrupts.listening(asyncio.get_running_loop()):
        return await asyncio.gather(*(_execute_one(md, nb, install, after) for nb in runs), return_exceptions=True)


# A kernel that never answers at its start (nbclient: "Kernel didn't respond in 60 seconds", seen
# once under a full `make test` on two cores; no cell of the page had run) is started once more
# before the page is called failed, and then the failure says the kernel did not start.
KERNEL_STARTS = 2


async def _execute_one(md: Path, nb, install, after: str | None = None) -> str | None:
    for start in range(1, KERNEL_STARTS + 1):
        try:
            return await _execute_in_a_new_kernel(md, nb, install, last_start=start == KERNEL_STARTS, after=after)
        except _KernelDidNotStart:
            continue


class _KernelDidNotStart(Exception):
    """The kernel did not answer at its start, and it may be started again (_execute_one)."""


async def _execute_in_a_new_kernel(md: Path, nb, install, last_start: bool, after: str | None = None) -> str | None:
    page_cells = nb.cells
    after_cell = nbformat.v4.new_code_cell(after) if after is not None else None
    nb.cells = [*([install] if install is not None else []), *page_cells, *([after_cell] if after_cell else [])]
    started = []  # the index (in nb.cells) of each cell as it starts: the one a time limit stopped
    client = NotebookClient(
        nb, timeout=timeout_s(), kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(md.parent)}}, extra_arguments=KERNEL_ARGUMENTS,
        on_cell_execute=lambda cell, cell_index: (kernel_interrupts.check(), started.append(cell_index)),
        # Past the limit the cell is interrupted, so its traceback says which line it was on.
        interrupt_on_timeout=True,
    )
    client.log.setLevel(logging.CRITICAL)  # its own report of a dead kernel; ours names the page
    kernel_interrupts.watch(client)
    try:
        try:
            # The kernel process's own stderr (not the cells': theirs comes as outputs) carries
            # only its complaints when it is shut down mid-cell after a time limit: ours names the page.
            await client.async_execute(env=kernel_environment(), stderr=subprocess.DEVNULL)
        finally:
            nb.cells = page_cells
    except CellExecutionError as err:
        where = failure(md, nb) or shown(md)
        if err.ename == "KeyboardInterrupt" and ": KeyboardInterrupt" in where:  # our interrupt, at the limit
            where = where.split(": KeyboardInterrupt")[0] + f": {past_the_time_limit()}"
            raise page_failed(md, nb, where) from None
        # (the notebook's outputs up to the error: the HTML preview shows them)
        raise page_failed(md, nb, where, ANSI.sub('', err.traceback or '')) from None
    except (CellTimeoutError, DeadKernelError, TimeoutError, RuntimeError) as err:
        if not started and not isinstance(err, TimeoutError):  # (nbclient's start: RuntimeError, DeadKernelError)
            if not last_start:
                raise _KernelDidNotStart from err
            where = f"{shown(md)}: its kernel did not start ({in_one_line(err)}; started {KERNEL_STARTS} times)"
            raise page_failed(md, nb, where) from None
        index = (started[-1] - (install is not None)) if started else 0
        cells = code_cells(md)
        code_index = sum(c.cell_type == "code" for c in page_cells[:index])
        place = cells[code_index].where if code_index < len(cells) else f"{shown(md)}, code cell {code_index + 1}"
        what = (past_the_time_limit() if isinstance(err, (CellTimeoutError, TimeoutError))
                else f"its kernel stopped ({in_one_line(err)})")
        raise page_failed(md, nb, f"{place}: {what}") from None
    if after_cell is None:
        return None
    return "".join(o.get("text", "") for o in after_cell.outputs if o.get("output_type") == "stream")


def first_difference(md: Path, first, second) -> str | None:
    """Where two runs of the same page printed different outputs, as a person looks for it."""
    cells = code_cells(md)
    for number, (a, b) in enumerate(zip(page_code(first), page_code(second))):
        one, two = comparable(a.outputs), comparable(b.outputs)
        if one == two:
            continue
        where = cells[number].where if number < len(cells) else f"{shown(md)}, code cell {number + 1}"
        lines_one, lines_two = one.splitlines(), two.splitlines()
        differing = next(((x, y) for x, y in zip(lines_one, lines_two) if x != y),
                         (lines_one[len(lines_two)] if len(lines_one) > len(lines_two) else "",
                          lines_two[len(lines_one)] if len(lines_two) > len(lines_one) else ""))
        return (f"{where}: its output differs between two runs of the same code (first run {differing[0][:80]!r}, "
                f"second {differing[1][:80]!r}). The book stores one run and the tests re-run it, so an output "
                f"must be reproducible: seed the random generator (random.seed(0)), and do not print the clock, "
                f"timings, memory addresses or unordered sets")
    return None


def comparable(outputs: list) -> str:
    """Outputs as text to compare (streams merged; figures by their bytes)."""
    normalised = []
    for output in merged_streams(copy.deepcopy(outputs)):
        output.get("metadata", {}).pop("execution", None)
        output.pop("execution_count", None)
        normalised.append(output)
    return "\n".join(json.dumps(o, sort_keys=True) if o.get("output_type") != "stream" else o["text"]
                     for o in normalised)


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failure(md: Path, nb) -> str | None:
    """Where and what the error in an executed page is, as a person looks for it:
    ``book/x.md, code cell 6 (line 153), line 158: KeyError: 'missing'``."""
    cells = code_cells(md)
    for number, cell in enumerate(page_code(nb)):
        error = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        if error is None:
            continue
        where = cells[number].where if number < len(cells) else f"{shown(md)}, code cell {number + 1}"
        traceback = ANSI.sub("", "\n".join(error.get("traceback", [])))
        in_cell = re.search(r"(?:Cell In\[\d+\]|<cell line: \d+>|Input In \[\d+\]), line (\d+)", traceback)
        line = ""
        if in_cell and number < len(cells) and cells[number].line:
            line = f", line {md_line(md, cells[number], int(in_cell.group(1)))}"
        return f"{where}{line}: {error.get('ename')}: {error.get('evalue')}"
    return None


def md_line(md: Path, cell, line_in_cell: int) -> int:
    """The .md line of a cell's line (its code starts after the fence and any options)."""
    lines = md.read_text().splitlines()
    first = cell.source.split("\n", 1)[0]
    start = next((i for i in range(cell.line, len(lines)) if lines[i] == first), cell.line)
    return start + line_in_cell
