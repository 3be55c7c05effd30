"""The stored notebooks (book/*.ipynb): paired with their .md, honest, and clean.

What they print, character for character, is held to the accepted reference
(tests/book_as_accepted/, `make accept`) by tests/test_fidelity.py.
"""

import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from runnable_book.checks import nbval_run
from runnable_book.pipeline import book_shape, execute_pages, page_kernel
from runnable_book.pipeline.pages import notebook_pages, read_page
from runnable_book.repository import ROOT


def stored(md):
    return nbformat.read(execute_pages.stored_path(md), as_version=4)


@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_every_page_and_its_stored_notebook_hold_the_same_cells(md):
    assert execute_pages.pairing_problems(md) == []


@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_every_figure_cell_stores_its_figure_and_no_other_cell_draws_one(md):
    """Each code cell with a captioned figure (mystnb.figure) stores one PNG (the HTML's) and
    one SVG (the PDF's); the page stores no figure beyond those."""
    declared = book_shape.figure_cells(md)
    drawn = book_shape.stored_outputs(md, "figure")
    assert len(drawn) == len(declared), f"{md.stem}: {len(drawn)} figures stored, {len(declared)} declared"
    assert all({"image/png", "image/svg+xml"} <= set(o.data) for o in drawn), md.stem


@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_stored_notebooks_carry_no_run_or_machine_noise(md):
    text = execute_pages.stored_path(md).read_text()
    for noise in ('"execution":', "iopub", "/work/", "/tmp/", "/root/"):
        assert noise not in text, f"{md.stem}.ipynb contains {noise!r}"
    # One version only: language_info's, the Python that made the outputs (JupyterLab
    # marks a notebook unsaved when it lacks it), of the series Binder runs (binder/runtime.txt).
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    versions = re.findall(r'"version": "(3\.[^"]*)"', text)
    assert len(versions) == 1 and versions[0].startswith(runtime + "."), versions
    assert stored(md).metadata.language_info.version == versions[0]
    assert not re.search(r"\b20\d\d-\d\d-\d\dT\d\d:", text), "a timestamp"
    assert not re.search(r" at 0x[0-9a-f]{6,}", text), "a memory address"
    assert [c.id for c in stored(md).cells] == [f"cell-{i:02d}" for i in range(1, len(stored(md).cells) + 1)]


def test_a_source_disagreement_between_md_and_ipynb_is_reported(tmp_path):
    md = tmp_path / "page.md"
    shutil.copy(ROOT / "book" / "15_07_structured_stores.md", md)
    nb = stored(ROOT / "book" / "15_07_structured_stores.md")
    cell = next(c for c in nb.cells if "PaymentTimeout" in c.source and c.cell_type == "code")
    cell.source = cell.source.replace("PaymentTimeout", "PaymentTimedOut")
    nbformat.write(nb, tmp_path / "page.ipynb")
    problems = execute_pages.pairing_problems(md)
    # Cells are named by their rank in the .md (the .ipynb has an install cell first).
    assert len(problems) == 1 and "cell 3 (code)" in problems[0] and "page.md and page.ipynb" in problems[0]


def test_a_readers_notebook_not_regenerated_after_a_prose_edit_is_reported(tmp_path):
    """The check regenerates the notebook from the .md and the stored outputs: same bytes, or fail."""
    md = tmp_path / "page.md"
    md.write_text((ROOT / "book" / "15_09_permissions_and_hostile_evidence.md").read_text()
                  .replace("Retrieved content is untrusted input.", "Retrieved content is hostile input."))
    shutil.copy(ROOT / "book" / "15_09_permissions_and_hostile_evidence.ipynb", tmp_path / "page.ipynb")
    problems = execute_pages.pairing_problems(md)
    assert len(problems) == 1, problems
    assert "page.ipynb is not what" in problems[0] and "cell 4 (markdown, id cell-04, from cell 3 of the .md)" in problems[0]
    assert "hostile input" in problems[0]
    run = subprocess.run([sys.executable, "-m", "runnable_book.pipeline.execute_pages", "check", str(md)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1 and "Run `make outputs`" in run.stderr


def test_sync_rewrites_a_stale_readers_notebook_without_executing_it(tmp_path):
    md = tmp_path / "page.md"
    md.write_text((ROOT / "book" / "15_09_permissions_and_hostile_evidence.md").read_text()
                  .replace("Retrieved content is untrusted input.", "Retrieved content is hostile input."))
    shutil.copy(ROOT / "book" / "15_09_permissions_and_hostile_evidence.ipynb", tmp_path / "page.ipynb")
    assert execute_pages.sync_page(md).status == "updated"
    assert execute_pages.pairing_problems(md) == []
    assert execute_pages.sync_page(md).status == "unchanged"


def test_the_book_build_stops_on_a_page_whose_notebook_disagrees(tmp_path):
    """runnable_book/sphinx_ext/page_outputs.py: the HTML never shows outputs of other code."""
    from types import SimpleNamespace

    from sphinx.errors import ExtensionError

    from runnable_book.sphinx_ext.page_outputs import read_page as read_source
    from runnable_book.sphinx_ext.page_outputs import shown_record, use_stored_outputs

    md = tmp_path / "page.md"
    shutil.copy(ROOT / "book" / "15_07_structured_stores.md", md)
    shutil.copy(ROOT / "book" / "15_07_structured_stores.ipynb", tmp_path / "page.ipynb")
    dependencies = []
    app = SimpleNamespace(env=SimpleNamespace(doc2path=lambda docname: str(md),
                                              note_dependency=dependencies.append))
    source = [md.read_text()]
    use_stored_outputs(app, "page", source)
    # (What the page shows of its stored notebook, by its record: page_outputs.record_shown_outputs.)
    assert dependencies == [str(shown_record(md))]
    assert read_source(source[0]).cells[2].outputs, "the page is rendered with the stored outputs"

    md.write_text(md.read_text().replace("provider slow", "provider is slow"))
    with pytest.raises(ExtensionError, match=r"page.md and page.ipynb: cell 3 .*\n.*make outputs") as error:
        use_stored_outputs(app, "page", [md.read_text()])
    # The message shows the first line that differs, once in each version (not two identical excerpts).
    changed = next(line for line in md.read_text().splitlines() if "paraphrase" in line and "provider is slow" in line)
    assert f"in the .md, {changed.replace('provider is slow', 'provider slow')!r} in the .ipynb" in str(error.value)
    assert repr(changed) in str(error.value)


@pytest.mark.kernel
def test_nbval_fails_on_an_output_changed_by_hand(tmp_path):
    """The guard `make test` relies on, shown on a one-cell notebook (no chapter page re-run)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell('print("us-east-2")', execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="attacker-zone\n")])]
    nbformat.write(nb, tmp_path / "edited.ipynb")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval",
                          "--nbval-current-env", str(tmp_path / "edited.ipynb")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode != 0
    assert "attacker-zone" in run.stdout and "us-east-2" in run.stdout


@pytest.mark.site
def test_the_built_book_rereads_a_page_when_its_stored_notebook_changes():
    """Sphinx tracks each page's .md; without this a re-executed .ipynb left stale HTML. The
    dependency is the record of what the page shows of its stored notebook (page_outputs.py,
    rewritten when that changes: tests/test_site_build.py), not the notebook itself, which a
    library change rewrites everywhere."""
    import pickle

    from runnable_book.sphinx_ext.page_outputs import shown_record

    with open(ROOT / "_build" / ".doctrees" / "environment.pickle", "rb") as handle:
        env = pickle.load(handle)
    for md in notebook_pages():
        docname = str(md.relative_to(ROOT).with_suffix(""))
        depends_on = {str((ROOT / dep).resolve()) if not str(dep).startswith("/") else str(dep)
                      for dep in env.dependencies.get(docname, ())}
        assert str(shown_record(md)) in depends_on, docname


def test_consecutive_stream_chunks_are_stored_as_one_output():
    """The kernel splits stdout at varying points; the stored notebook must not."""
    stream = nbformat.v4.new_output
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(...)", outputs=[
        stream("stream", name="stdout", text="a\n"), stream("stream", name="stdout", text="b\n"),
        stream("stream", name="stderr", text="warn\n"), stream("stream", name="stdout", text="c\n"),
        stream("stream", name="stdout", text="d\n"),
        stream("execute_result", data={"text/plain": "1"}, execution_count=1),
        stream("stream", name="stdout", text="e\n")])]
    outputs = execute_pages.normalized(nb, "digest").cells[0].outputs
    assert [(o.output_type, o.get("name"), o.get("text")) for o in outputs] == [
        ("stream", "stdout", "a\nb\n"), ("stream", "stderr", "warn\n"), ("stream", "stdout", "c\nd\n"),
        ("execute_result", None, None), ("stream", "stdout", "e\n")]
    split_differently = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(...)", outputs=[
        stream("stream", name="stdout", text="a\nb"), stream("stream", name="stdout", text="\n")])])
    same_text = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(...)", outputs=[
        stream("stream", name="stdout", text="a\n"), stream("stream", name="stdout", text="b\n")])])
    assert (nbformat.writes(execute_pages.normalized(split_differently, "d"))
            == nbformat.writes(execute_pages.normalized(same_text, "d")))


def reexecuted(md) -> str:
    """The reader's notebook text that re-executing md makes, kept with the Python version of
    the committed one. The re-execution is nbval's in this `make test` (its kernel has `make
    outputs`' settings: runnable_book/checks/nbval_run.py); without one (a bare pytest, or a page
    changed since), the page is executed here, once (`make outputs`' second run at once only
    compares the two: its own check, tests/test_site_build.py)."""
    fresh = read_page(md)
    executed = nbval_run.executed_notebook(execute_pages.stored_path(md))
    if executed is None:
        execute_pages.execute(md, fresh, twice=False)  # (execute() builds matplotlib's font cache first on a new machine)
    else:
        assert execute_pages.copy_stored_outputs(md, fresh, executed) == []
    committed = nbformat.read(execute_pages.stored_path(md), as_version=4)
    return execute_pages.reader_text(md, fresh, execute_pages.python_version(committed))


@pytest.mark.whole_book  # (each page executed: nbval's run in `make test`, or here)
@pytest.mark.parametrize("md", notebook_pages(), ids=lambda p: p.stem)
def test_re_executing_an_unchanged_page_reproduces_its_stored_notebook_byte_for_byte(md):
    """What `make outputs FORCE=1` does to a page: nothing, when its code did not change
    (figures included: the SVGs' element ids and dates are fixed by our kernel setup)."""
    assert reexecuted(md) == execute_pages.stored_path(md).read_text(), \
        f"re-executing {md.name} changed {execute_pages.stored_path(md).name}"


@pytest.mark.whole_book
def test_a_stored_figure_changed_by_hand_fails_the_byte_check():
    """nbval skips images (root conftest.py); a figure's SVG edited by hand in a stored
    notebook is caught by the byte comparison above (planted in memory, on the first page
    with a figure)."""
    md = next(md for md in notebook_pages() if book_shape.figure_cells(md))
    committed = execute_pages.stored_path(md).read_text()
    planted = re.sub(r'(<svg\b)', r'\1 data-planted="by hand"', committed, count=1)
    assert planted != committed, f"{md.name} stores no SVG to plant a change in"
    assert reexecuted(md) != planted



def test_nbvals_kernel_that_does_not_start_is_started_once_more(monkeypatch):
    """As `make outputs` does (tests/test_site_build.py): a kernel that never answers at its
    start is started again, up to page_kernel.KERNEL_STARTS times; then nbval is told."""
    starts = []

    def kernels_refused(refused: int):
        def start_new_kernel(**options):
            starts.append(options["kernel_name"])
            if len(starts) <= refused:
                raise RuntimeError("Kernel didn't respond in 60 seconds")
            return "manager", "client"
        return start_new_kernel

    monkeypatch.setattr(nbval_run.RecordingKernel, "_ensure_iopub_up", lambda self: None)
    monkeypatch.setattr(nbval_run, "start_new_kernel", kernels_refused(page_kernel.KERNEL_STARTS - 1))
    kernel = nbval_run.RecordingKernel("python3")
    assert (kernel.km, kernel.kc) == ("manager", "client") and len(starts) == page_kernel.KERNEL_STARTS
    starts.clear()
    monkeypatch.setattr(nbval_run, "start_new_kernel", kernels_refused(page_kernel.KERNEL_STARTS))
    with pytest.raises(RuntimeError, match="didn't respond"):
        nbval_run.RecordingKernel("python3")
    assert len(starts) == page_kernel.KERNEL_STARTS


def test_a_change_of_how_the_kernel_starts_re_executes_every_page(monkeypatch):
    """The kernel's setup (its arguments: figure formats, the SVG ids' salt) is an input of every
    page, as its cells are: an incremental build after changing it equals a clean one."""
    from runnable_book.pipeline import page_inputs

    md = notebook_pages()[0]
    assert execute_pages.stale_reasons(md, read_page(md), stored(md)) == []
    changed = {**page_inputs.KERNEL_SETUP, "arguments": [*page_inputs.KERNEL_SETUP["arguments"], "--changed"]}
    monkeypatch.setattr(page_inputs, "KERNEL_SETUP", changed)
    assert execute_pages.stale_reasons(md, read_page(md), stored(md)) == [
        "the kernel's setup changed (runnable_book/pipeline/page_inputs.py: KERNEL_SETUP)"]
