"""Keep each page's reader's notebook (book/X.ipynb) generated from its source (book/X.md).

    python -m runnable_book.pipeline.execute_pages sync [PAGE.md ...]   # the pages alone (the benchmarks'; no graph)
    python -m runnable_book.pipeline.execute_pages sync --force          # re-execute every page
    python -m runnable_book.pipeline.execute_pages check                 # fail if a .ipynb is not what its .md makes
    python -m runnable_book.pipeline.execute_pages check --skip-synced   # the same, but for the pages as the build left them

(`make outputs` runs the build graph, runnable_book/pipeline/artefact_graph.py, whose `outputs` step calls
:func:`sync_page` for each page, and puts the tree back if the build fails: tree_rollback.py.)

The .md is what people edit; the .ipynb is generated from it: the reader's notebook that
launch links open (assembled by runnable_book/pipeline/reader_notebook.py, markdown converted from MyST, a first
install cell of ours) holding the outputs the book shows, which nbval re-checks on every
`make test`. ``sync`` rewrites each .ipynb from its .md and re-executes a page only when
its inputs changed: its code cells, or the ``chapter_lib`` definitions its code reaches
(runnable_book/pipeline/page_inputs.py; jupyter-cache keys on a page's own cells only, and would
miss a change made in an earlier section). The inputs, itemized, and their digest are
stored in the notebook's metadata, and ``sync`` ends with a change report: why each page
ran and how its outputs changed (runnable_book/pipeline/change_report.py). Stored notebooks hold
no timestamps, timings or random cell ids, so an unchanged page rewrites to the same bytes. ``check`` regenerates every notebook in memory from its .md and the
outputs it stores, and requires the very bytes that are committed.

The HTML book (runnable_book/sphinx_ext/page_outputs.py) renders the .md itself, with the outputs
of :func:`page_with_stored_outputs`: each .md code cell gets the outputs of its stored
counterpart, matched one to one.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import functools
import hashlib
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from runnable_book.pipeline import change_report, exercise_contract, kernel_interrupts, synced_pages
from runnable_book.common.files import write_atomically
from runnable_book.pipeline.change_report import PageRun
from runnable_book.pipeline.page_inputs import KERNEL_SETUP, inputs, inputs_digest
from runnable_book.pipeline.myst_to_notebook import ConversionError
from runnable_book.pipeline.reader_notebook import draws_figures, is_added_cell, page_install_cell, reader_notebook
from runnable_book.pipeline.pages import FAILED_RUNS, BookError, shown, code_cells, notebook_pages, read_page
from runnable_book.repository import ROOT

# The notebook metadata key holding {"inputs_sha256": ..., "inputs": {...}, "sources_sha256": ...}:
# named for the tool, as a notebook of any book it builds carries it.
DIGEST_KEY = "runnable_book"
# Never an inputs digest: a notebook stored so (by an older build) is re-executed, whatever changed.
FAILED_DIGEST = "failed"
REGENERATE = "make outputs"
CONFIG = ROOT / "_config.yml"


@functools.cache
def timeout_s() -> int:
    """The limit on one cell's execution, set in one place: `execute.timeout` in _config.yml
    (Jupyter Book's default, 30 s, where a book sets none)."""
    return int((yaml.safe_load(CONFIG.read_text()).get("execute") or {}).get("timeout", 30))

# What ipykernel reports for Python, stored in full so that JupyterLab, filling it in when
# the kernel starts, finds nothing to change (a notebook otherwise opens marked unsaved).
# Its "version" is the Python that made the outputs: taken from the kernel when a page is
# executed and kept, like the outputs, until the page is executed again.
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}


# How the kernel that executes a page is started (page_inputs.py: an input of every page).
KERNEL_ARGUMENTS, KERNEL_ENVIRONMENT = KERNEL_SETUP["arguments"], KERNEL_SETUP["environment"]


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: ours, KERNEL_ENVIRONMENT, and the book's root first on
    PYTHONPATH, so that its pages import the book's own chapter_lib (an editable install of
    another checkout's, or none at all, would give them that one or nothing). Not an input of
    the pages: where the book lies changes no output."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, **KERNEL_ENVIRONMENT, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def stored_path(md: Path) -> Path:
    return md.with_suffix(".ipynb")


def failed_run_path(md: Path) -> Path:
    """Where the build keeps a page's failed run (runnable_book/pipeline/site_build.py)."""
    return FAILED_RUNS / stored_path(md).name


def normalized(nb, digest: str, language_info: dict | None = None, itemized: dict | None = None):
    """Strip what differs between runs and machines; keep every output."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    record = {"inputs_sha256": digest, **({"inputs": itemized} if itemized else {}),
              "sources_sha256": sources_digest(nb)}
    nb.metadata = nbformat.from_dict({
        "kernelspec": nb.metadata.get("kernelspec", {}),
        "language_info": language_info or {"name": "python"},
        DIGEST_KEY: record,
    })
    for number, cell in enumerate(nb.cells, start=1):
        cell.id = f"cell-{number:02d}"  # deterministic: pairs with the .md cell of that rank
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
            for output in cell.outputs:
                output.get("metadata", {}).pop("execution", None)
                svg = output.get("data", {}).get("image/svg+xml")
                if svg is not None:
                    output["data"]["image/svg+xml"] = stable_svg_ids("".join(svg) if isinstance(svg, list) else svg)
    return nb


# matplotlib names an SVG's clip paths, markers and hatches by a hash of their geometry's floats
# as `str()` writes them (backend_svg._make_id): a last-digit difference between two CPUs' float
# arithmetic (numpy's SIMD paths differ between machines) renames an element while every drawn
# coordinate, written at fewer digits, stays the same. Each such id is named again from the
# figure's text without its ids and the element's rank in it: the same figure gets the same
# bytes on any machine, and two figures never share a name (the print inlines them together).
SVG_ID = re.compile(r'(?<=id=")([a-z])([0-9a-f]{10})(?=")')


def stable_svg_ids(svg: str) -> str:
    found = list(dict.fromkeys(m.group(0) for m in SVG_ID.finditer(svg)))
    if not found:
        return svg
    skeleton = re.sub("|".join(map(re.escape, found)), "@", svg)
    figure = hashlib.sha256(skeleton.encode()).hexdigest()
    renamed = {old: old[0] + hashlib.sha256(f"{figure}:{rank}".encode()).hexdigest()[:10]
               for rank, old in enumerate(found)}
    return re.sub("|".join(map(re.escape, found)), lambda m: renamed[m.group(0)], svg)


def sources_digest(nb) -> str:
    """A digest of the notebook's cells as written (type and source): recorded when the
    notebook is written, so a hand edit of a stored notebook is found before it is overwritten."""
    cells = [[cell.cell_type, cell.source] for cell in nb.cells]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def hand_edit(md: Path, stored) -> str | None:
    """How the stored notebook was edited by hand since it was written (None: it was not)."""
    recorded = stored.metadata.get(DIGEST_KEY, {}).get("sources_sha256")
    if recorded is None or recorded == sources_digest(stored):
        return None
    fresh_reader = reader_notebook(md, read_page(md))
    target = stored_path(md)
    number = next((n for n, (a, b) in enumerate(zip(stored.cells, fresh_reader.cells), start=1)
                   if a.cell_type != b.cell_type or a.source != b.source), min(len(stored.cells), len(fresh_reader.cells)) + 1)
    origin = shown(md)
    if number <= len(fresh_reader.cells) and not is_added_cell(fresh_reader.cells[number - 1]):
        cell = fresh_reader.cells[number - 1]
        if cell.cell_type == "code":
            rank = sum(c.cell_type == "code" and not is_added_cell(c) for c in fresh_reader.cells[:number])
            cells = code_cells(md)
            origin = cells[rank - 1].where if rank <= len(cells) else f"{shown(md)}, code cell {rank}"
        else:
            origin = f"{shown(md)}, markdown cell {sum(not is_added_cell(c) for c in fresh_reader.cells[:number])}"
    return (f"{shown(target)}, cell {number}, was edited by hand (its cells are not what was last written there); "
            f"it is generated from {origin}: make the edit there, or `git checkout -- {shown(target)}` "
            f"(or delete it) to discard it. Nothing was overwritten.")


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


def copy_stored_outputs(md: Path, fresh, stored) -> list[str]:
    """Give each code cell of fresh (the .md) the outputs of its stored counterpart.

    Code cells are matched one to one, in order; returns how they disagree (then
    nothing is copied), naming the cell by its rank in the .md, as messages do.
    """
    ranked = [(rank, c) for rank, c in enumerate(fresh.cells, start=1) if c.cell_type == "code"]
    old = page_code(stored)
    problems = [f"cell {rank} (code) differs: {first_differing_line(new.source, was.source)}"
                for (rank, new), was in zip(ranked, old) if new.source != was.source]
    if len(ranked) != len(old):
        problems.append(f"the .md has {len(ranked)} code cells, the .ipynb {len(old)}")
    if problems:
        return [f"{shown(md)} and {stored_path(md).name}: {p}" for p in problems]
    for (_, new), was in zip(ranked, old):
        new.outputs, new.execution_count = was.outputs, was.execution_count
    return []


def first_differing_line(md_source: str, stored_source: str) -> str:
    """The first line where a cell of the .md and its stored copy differ, both versions."""
    mine, theirs = md_source.splitlines(), stored_source.splitlines()
    for number, (a, b) in enumerate(zip(mine, theirs), start=1):
        if a != b:
            return f"its line {number} is {a[:80]!r} in the .md, {b[:80]!r} in the .ipynb"
    shorter = min(len(mine), len(theirs))
    extra = mine[shorter] if len(mine) > shorter else theirs[shorter]
    side = "the .md" if len(mine) > shorter else "the .ipynb"
    return f"its line {shorter + 1}, {extra[:80]!r}, is only in {side}"


def stale_reasons(md: Path, fresh, stored, force: bool = False) -> list[str]:
    """Why the page must be executed (empty: its stored outputs are reused, copied into fresh)."""
    if force:
        return ["FORCE=1"]
    if stored is None:
        return [f"it has no stored notebook yet ({stored_path(md).name})"]
    record = stored.metadata.get(DIGEST_KEY, {})
    if not python_version(stored):
        return ["it was never executed"]
    if record.get("inputs_sha256") == FAILED_DIGEST or (FAILED_RUNS / stored_path(md).name).is_file():
        return ["its last run failed"]
    itemized = inputs(fresh)
    if record.get("inputs_sha256") != inputs_digest(fresh, itemized):
        return change_report.reasons(record.get("inputs"), itemized)
    problems = copy_stored_outputs(md, fresh, stored)
    return ["its stored notebook's cells do not pair with the page's"] if problems else []


def page_with_stored_outputs(md: Path):
    """(the .md's notebook with the outputs its .ipynb stores, problems): what the HTML shows."""
    fresh = read_page(md)
    target = stored_path(md)
    failed_run = FAILED_RUNS / target.name
    if failed_run.is_file():  # the page's last run failed: the preview shows it, the error in place
        target = failed_run
    if not target.exists():
        return fresh, [f"{shown(target)} is missing"]
    problems = copy_stored_outputs(md, fresh, nbformat.read(target, as_version=4))
    return normalized(fresh, inputs_digest(fresh)), problems


def python_version(nb) -> str | None:
    """The Python version of the kernel that made nb's outputs (None: not recorded)."""
    return nb.metadata.get("language_info", {}).get("version")


def reader_text(md: Path, executed, version: str, digest: str | None = None) -> str:
    """The bytes of md's reader's notebook, from its notebook with outputs (``executed``)
    and the version of the Python that made them; ``digest`` replaces the inputs digest
    (runnable_book/pipeline/site_build.py marks a page that failed so that it is re-executed)."""
    itemized = inputs(executed)
    digest = digest or inputs_digest(executed, itemized)
    reader = reader_notebook(md, executed)
    return nbformat.writes(normalized(reader, digest, {**LANGUAGE_INFO, "version": version}, itemized)) + "\n"


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
    error = BookError(f"{where}; {stored_path(md).name} was not changed.\n{traceback}".rstrip())
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


def sync_page(md: Path, force: bool = False, twice: bool = True) -> PageRun:
    """Rewrite md's stored notebook, executing the page only if its inputs changed.

    Returns what happened: status 'executed', 'updated' (rewritten from the stored outputs)
    or 'unchanged', and for an executed page why and how its outputs changed.
    """
    fresh = read_page(md)
    target = stored_path(md)
    stored = nbformat.read(target, as_version=4) if target.exists() else None
    if stored is not None:
        edited = hand_edit(md, stored)
        if edited:
            raise BookError(edited)
    why = stale_reasons(md, fresh, stored, force)
    if why:
        try:
            contract = exercise_contract.kernel_cell(md)
            printed = execute(md, fresh, twice=twice, after=contract)
            if contract is not None:
                since = change_report.reasons(stored.metadata.get(DIGEST_KEY, {}).get("inputs") if stored else None,
                                              inputs(fresh))
                problems = exercise_contract.broken(md, fresh, printed, since)
                if problems:
                    raise page_failed(md, fresh, "\n".join(problems))
        except BookError as error:
            error.reasons = why
            raise
    text = reader_text(md, fresh, python_version(fresh if why else stored))
    run = PageRun(md, "executed" if why else "updated", why)
    if why:
        # Against the notebook as last reported: a run stopped before its report may have
        # rewritten it since (change_report.UNREPORTED).
        last_reported = change_report.unreported().get(md.stem)
        before = nbformat.read(last_reported[0], as_version=4) if last_reported and last_reported[0] else (
            None if last_reported else stored)
        # The stored bytes against the stored bytes: the notebook as it is written (normalized:
        # each SVG's ids renamed, streams merged), never the kernel's raw outputs, whose SVG
        # ids differ from the stored ones and so made an unchanged figure look changed.
        run.output_diff = outputs_changed(md, before, nbformat.reads(text, as_version=4))
        # Every executed page, changed outputs or not: a run stopped before its report
        # (Ctrl-C) leaves it up to date, and the next report still names it.
        change_report.remember_unreported(md, target.read_text() if target.exists() else None, why)
    if target.exists() and target.read_text() == text:
        run.status = "executed" if why else "unchanged"
        return run
    write_atomically(target, text)
    return run


def with_unreported_runs(runs: list[PageRun]) -> list[PageRun]:
    """``runs``, with the pages a run stopped before its report rewrote (Ctrl-C, a crash), which
    this run found up to date: each as executed then, its outputs against the last report's."""
    pending = change_report.unreported()
    merged = []
    for run in runs:
        if run.page.stem in pending and run.status in ("unchanged", "updated"):
            last_reported, why = pending[run.page.stem]
            before = nbformat.read(last_reported, as_version=4) if last_reported else None
            now = nbformat.read(stored_path(run.page), as_version=4)
            run = PageRun(run.page, "executed", why, outputs_changed(run.page, before, now), unreported=True)
        merged.append(run)
    return merged


def outputs_changed(md: Path, stored, executed) -> list[str]:
    """The diff of the stored and the new outputs, per code cell (empty: the same)."""
    cells = code_cells(md)
    where = [cell.where for cell in cells] if len(cells) == len(page_code(executed)) else [
        f"{shown(md)}, code cell {n}" for n in range(1, len(page_code(executed)) + 1)]
    return change_report.output_diff(page_code(stored) if stored is not None else [], page_code(executed), where)


def pairing_problems(md: Path) -> list[str]:
    """How md's committed .ipynb differs from the one its .md makes (empty when equal).

    The notebook is regenerated in memory from the .md and the outputs the .ipynb stores,
    as `make outputs` would write it, and must be the committed bytes.
    """
    fresh, problems = page_with_stored_outputs(md)
    if problems:
        return problems
    target = stored_path(md)
    version = python_version(nbformat.read(target, as_version=4)) or "(none: run `make outputs`)"
    try:
        expected = reader_text(md, fresh, version)
    except ConversionError as err:
        return [str(err)]
    committed = target.read_text()
    if committed == expected:
        return []
    return [f"{shown(target)} is not what {shown(md)} makes: {p}" for p in differences(expected, committed)]


def differences(expected: str, committed: str) -> list[str]:
    """Where two notebooks' texts differ, cell by cell, for a message a person can act on."""
    try:
        want, have = nbformat.reads(expected, as_version=4), nbformat.reads(committed, as_version=4)
    except Exception as err:  # noqa: BLE001 - a hand-broken file: say so, whatever broke
        return [f"it does not read as a notebook ({err})"]
    found = []
    md_rank = 0  # the .md cell a notebook cell comes from (the converter adds some cells)
    for number, (a, b) in enumerate(zip(want.cells, have.cells), start=1):
        md_rank += not is_added_cell(a)
        origin = "ours, added to the notebook" if is_added_cell(a) else f"from cell {md_rank} of the .md"
        if a != b:
            what = "source" if a.source != b.source else "outputs" if a.get("outputs") != b.get("outputs") else "metadata"
            found.append(f"its cell {number} ({a.cell_type}, id {a.id}, {origin}) has other {what}: "
                         f"expected {a.source[:60]!r}…, found {b.source[:60]!r}…")
    if len(want.cells) != len(have.cells):
        found.append(f"it has {len(have.cells)} cells, not {len(want.cells)}")
    def without_sources_digest(metadata) -> dict:  # (it follows the cells: a differing cell says it)
        metadata = copy.deepcopy(dict(metadata))
        metadata.get(DIGEST_KEY, {}).pop("sources_sha256", None)
        return metadata

    if without_sources_digest(want.metadata) != without_sources_digest(have.metadata):
        found.append(f"its notebook metadata differs (the inputs digest if chapter_lib changed): "
                     f"expected {dict(want.metadata)}, found {dict(have.metadata)}")
    return found or ["its text differs (formatting: rewrite it with `make outputs`)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("--force", action="store_true", help="re-execute every page")
    parser.add_argument("--run-once", action="store_true",
                        help="execute a page once, without comparing two runs (what the comparison costs: make bench-outputs)")
    parser.add_argument("--skip-synced", action="store_true",
                        help="check: leave out the pages whose every input is as the build last synced them "
                             "(runnable_book/pipeline/synced_pages.py; `make check`'s, not `make test`'s)")
    parser.add_argument("pages", nargs="*", type=Path, help="only these .md pages")
    args = parser.parse_intermixed_args(argv)  # (flags before or after the pages)
    pages = [p.resolve() for p in args.pages] or notebook_pages()
    if args.command == "check":
        if args.skip_synced:
            synced = synced_pages.as_synced(pages, failed_run_path)
            pages = [md for md in pages if md not in synced]
        problems = [p for md in pages for p in pairing_problems(md)]
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print(f"Run `{REGENERATE}` to regenerate the stored notebooks.", file=sys.stderr)
        return 1 if problems else 0
    runs = []
    try:
        for md in pages:
            runs.append(sync_page(md, force=args.force, twice=not args.run_once))
            print(f"{runs[-1].status:>9}  {shown(stored_path(md))}", flush=True)
    except BookError as err:  # ConversionError too: it names page and cell
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(change_report.report(with_unreported_runs(runs), stored_path, len(notebook_pages())))
    change_report.forget_unreported([run.page for run in runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())
