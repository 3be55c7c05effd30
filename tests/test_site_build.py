"""runnable_book/pipeline/site_build.py: a page that fails, for any reason, loses nothing; the others go on.

Each failure (an exception, a time limit, an output that differs between two runs, a hand
edit of the stored notebook) leaves the stored notebook byte for byte as it was and names
the page, the cell and the line; the failed run goes to _build/failed/ for the HTML preview.
"""

import io
import threading

import nbformat
import pytest
from scratch_book import MYST_NOTEBOOK_HEADER

from runnable_book.pipeline import execute_pages, page_kernel, site_build, synced_pages

pytestmark = pytest.mark.kernel  # (scratch pages executed, as `make outputs` executes them)

PAGE = MYST_NOTEBOOK_HEADER.replace("{", "{{").replace("}", "}}") + """
# A page

```{{code-cell}} ipython3
print("before")
```

```{{code-cell}} ipython3
{middle}
```

```{{code-cell}} ipython3
print("after")
```
"""


@pytest.fixture
def book(tmp_path, monkeypatch):
    """Two pages, both executed once and stored: `page.md` (edited by each test) and `next.md`."""
    monkeypatch.setattr(execute_pages, "FAILED_RUNS", tmp_path / "failed")
    monkeypatch.setattr(synced_pages, "RECORD", tmp_path / "synced-pages.json")
    page, following = tmp_path / "page.md", tmp_path / "next.md"
    page.write_text(PAGE.format(middle='print("fine")'))
    following.write_text(PAGE.format(middle='print("next")'))
    monkeypatch.setattr(site_build, "notebook_pages", lambda: [page, following])
    assert site_build.sync_outputs() == []
    return page, following


def fail_with(book, middle: str, capsys=None) -> tuple[str, bytes]:
    page, following = book
    stored = page.with_suffix(".ipynb").read_bytes()
    page.write_text(PAGE.format(middle=middle))
    following.write_text(PAGE.format(middle='print("next, edited")'))
    runs = []
    failures = site_build.sync_outputs(runs)
    assert [md for md, _ in failures] == [page]
    assert page.with_suffix(".ipynb").read_bytes() == stored, "the failed page's stored notebook is kept"
    assert "next, edited" in following.with_suffix(".ipynb").read_text(), "the page after it still ran"
    assert [run.status for run in runs] == ["failed", "executed"]
    return failures[0][1], stored


def test_an_exception_keeps_the_stored_notebook_and_shows_the_error_in_the_preview(book):
    page, _ = book
    message, stored = fail_with(book, '{}["missing"]')
    assert message == f"{page}, code cell 2 (line 18), line 19: KeyError: 'missing'"
    preview = nbformat.read(execute_pages.FAILED_RUNS / "page.ipynb", as_version=4)
    code = execute_pages.page_code(preview)
    assert code[0].outputs[0].text == "before\n" and code[1].outputs[0].ename == "KeyError" and code[2].outputs == []
    assert execute_pages.page_with_stored_outputs(page)[1] == [], "the HTML preview builds from the failed run"
    assert execute_pages.stale_reasons(page, execute_pages.read_page(page),
                                        nbformat.reads(stored.decode(), as_version=4)) == ["its last run failed"]
    page.write_text(PAGE.format(middle='print("fine")'))  # fixed: it runs, and the failed run is gone
    assert site_build.sync_outputs() == [] and not (execute_pages.FAILED_RUNS / "page.ipynb").exists()
    assert page.with_suffix(".ipynb").read_bytes() == stored


def test_an_endless_cell_is_stopped_at_the_time_limit_and_named_in_one_line(book, monkeypatch):
    monkeypatch.setattr(page_kernel, "timeout_s", lambda: 3)
    page, _ = book
    # (Endless, and idle: the limit is on the cell's time, and the suite's cores are not burnt for it.)
    message, _ = fail_with(book, "import time\nwhile True:\n    time.sleep(0.1)")
    assert message.startswith(f"{page}, code cell 2 (line 18), line ")
    assert message.endswith("did not finish within the 3 s limit (`execute.timeout` in _config.yml): "
                            "an endless loop, or work to make smaller")
    assert "\n" not in message and "Traceback" not in message


KERNEL_SILENT = "Kernel didn't respond in 60 seconds"  # what nbclient raises when a kernel never answers at its start


def kernels_that_do_not_start(monkeypatch, first_only: bool) -> None:
    """nbclient's client, but the kernel of each run of a page does not answer at its start:
    the first time only, or every time."""
    refused = set()

    class NotStarting(page_kernel.NotebookClient):
        async def async_execute(self, **kwargs):
            if not (first_only and id(self.nb) in refused):
                refused.add(id(self.nb))
                raise RuntimeError(KERNEL_SILENT)
            return await super().async_execute(**kwargs)

    monkeypatch.setattr(page_kernel, "NotebookClient", NotStarting)


def test_a_kernel_that_does_not_start_is_started_once_more(book, monkeypatch):
    page, _ = book
    kernels_that_do_not_start(monkeypatch, first_only=True)
    page.write_text(PAGE.format(middle='print("started on the second try")'))
    assert site_build.sync_outputs() == []
    assert "started on the second try" in page.with_suffix(".ipynb").read_text()


def test_a_kernel_that_never_starts_fails_its_page_blaming_no_cell(book, monkeypatch):
    page, _ = book
    kernels_that_do_not_start(monkeypatch, first_only=False)
    stored = page.with_suffix(".ipynb").read_bytes()
    page.write_text(PAGE.format(middle='print("never run")'))
    failures = site_build.sync_outputs()
    assert [md for md, _ in failures] == [page]
    assert failures[0][1] == (f"{page}: its kernel did not start (RuntimeError: {KERNEL_SILENT}; started "
                              f"{page_kernel.KERNEL_STARTS} times)")
    assert page.with_suffix(".ipynb").read_bytes() == stored


def test_an_output_that_differs_between_two_runs_is_named(book):
    page, _ = book
    message, _ = fail_with(book, "import random\nprint(random.random())")
    assert message.startswith(f"{page}, code cell 2 (line 18): its output differs between two runs of the same code")
    assert "seed the random generator" in message


def test_a_hand_edit_of_a_stored_notebook_is_named_and_kept(book):
    page, _ = book
    stored = page.with_suffix(".ipynb")
    edited = stored.read_text().replace('print(\\"fine\\")', 'print(\\"edited by hand\\")')
    assert edited != stored.read_text()
    stored.write_text(edited)
    with pytest.raises(site_build.BookError) as error:
        site_build.sync_outputs()
    assert str(error.value).startswith(f"{stored}, cell ")
    assert f"was edited by hand (its cells are not what was last written there); it is generated from {page}, " \
           f"code cell 2 (line 18)" in str(error.value)
    assert stored.read_text() == edited, "nothing overwritten"


def test_warnings_about_figures_of_a_failed_page_are_counted_as_consequences(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    name: fig-drawn-later\n---\nplot()\n```\n")
    assert site_build.figure_labels(page) == {"fig-drawn-later"}
    shown = io.StringIO()
    stream = site_build.ConsequenceFilter(shown, site_build.figure_labels(page))
    stream.write("other.md:3: WARNING: undefined label: 'fig-drawn-later'\n")
    stream.write("other.md:9: WARNING: undefined label: 'fig-a-typo'\n")
    assert stream.held == 1 and stream.passed == 1
    assert shown.getvalue() == "other.md:9: WARNING: undefined label: 'fig-a-typo'\n", "a real cause is still printed"


@pytest.mark.parametrize("middle", ["import no_such_module_of_this_book"])
def test_an_import_error_keeps_the_stored_notebook(book, middle):
    page, _ = book
    message, _ = fail_with(book, middle)
    assert message == f"{page}, code cell 2 (line 18), line 19: ModuleNotFoundError: No module named 'no_such_module_of_this_book'"


def test_a_page_nothing_changed_for_is_left_as_it_is_and_every_change_syncs_it(book, monkeypatch):
    """synced_pages.py: the second sync of an unchanged book syncs no page; an edit to a page,
    its stored notebook, a kept failed run or the book's tools syncs that page (or all) again."""
    page, following = book
    synced = []
    sync_page = execute_pages.sync_page
    monkeypatch.setattr(execute_pages, "sync_page", lambda md, **kw: synced.append(md.name) or sync_page(md, **kw))
    runs = []
    assert site_build.sync_outputs(runs) == [] and synced == []
    assert [run.status for run in runs] == ["unchanged", "unchanged"]
    page.write_text(page.read_text() + "\nA sentence.\n")
    site_build.sync_outputs()
    assert synced == ["page.md"]
    following.with_suffix(".ipynb").write_text(following.with_suffix(".ipynb").read_text() + "\n")
    site_build.sync_outputs()
    assert synced == ["page.md", "next.md"]
    monkeypatch.setattr(synced_pages, "book_digest", lambda: "another version of the tools")
    site_build.sync_outputs()
    assert synced == ["page.md", "next.md", "page.md", "next.md"]
    site_build.sync_outputs(force=True)
    assert synced[4:] == ["page.md", "next.md"]


def test_make_checks_pairing_skips_exactly_the_pages_the_build_left_as_they_are(book, monkeypatch, capsys):
    """`execute_pages check --skip-synced` (`make check`'s): a page whose every input is as the
    build last synced it is paired by construction and not regenerated; a hand-edited stored
    notebook, an edited page or another version of the tools is checked, and a broken pairing
    fails; without the flag (`make test`'s) every page is checked."""
    page, following = book
    checked = []
    pairing = execute_pages.pairing_problems
    monkeypatch.setattr(execute_pages, "pairing_problems", lambda md: checked.append(md.name) or pairing(md))
    pages = [str(page), str(following)]
    assert execute_pages.main(["check", "--skip-synced", *pages]) == 0 and checked == []
    assert execute_pages.main(["check", *pages]) == 0 and checked == ["page.md", "next.md"]
    stored = following.with_suffix(".ipynb")
    as_built = stored.read_text()
    stored.write_text(as_built.replace('"next', '"next, by hand'))
    checked.clear()
    assert execute_pages.main(["check", "--skip-synced", *pages]) == 1 and checked == ["next.md"]
    assert "next.md and next.ipynb: cell 3 (code) differs" in capsys.readouterr().err
    stored.write_text(as_built)  # (as the build wrote it: its record holds again)
    page.write_text(page.read_text() + "\nA sentence.\n")
    checked.clear()
    assert execute_pages.main(["check", "--skip-synced", *pages]) == 1 and checked == ["page.md"]
    monkeypatch.setattr(synced_pages, "book_digest", lambda: "another version of the tools")
    checked.clear()
    execute_pages.main(["check", "--skip-synced", *pages])
    assert checked == ["page.md", "next.md"]


def test_a_page_is_read_again_when_what_it_shows_of_its_stored_notebook_changes_not_its_install_cell(book, monkeypatch):
    """page_outputs.py: a page's dependency is the record of what it shows of its stored
    notebook. A change to the install cell alone (a library change names a new digest there in
    every stored notebook) leaves the record as it is, file and time; an output's change rewrites it."""
    from runnable_book.pipeline import pages
    from runnable_book.sphinx_ext import page_outputs

    page, following = book
    monkeypatch.setattr(page_outputs, "SHOWN", page.parent / "shown")
    monkeypatch.setattr(pages, "notebook_pages", lambda: [page, following])
    page_outputs.record_shown_outputs(None)
    record = page_outputs.shown_record(page)
    first = (record.read_text(), record.stat().st_mtime_ns)
    stored = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    install = next(cell for cell in stored.cells if "install" in cell.metadata.get("tags", []))
    install.source += "\n# another edition's library"
    stored.metadata[execute_pages.DIGEST_KEY]["sources_sha256"] = execute_pages.sources_digest(stored)
    nbformat.write(stored, page.with_suffix(".ipynb"))
    page_outputs.record_shown_outputs(None)
    assert (record.read_text(), record.stat().st_mtime_ns) == first
    next(cell for cell in stored.cells if cell.cell_type == "code" and cell.outputs).outputs[0]["text"] = "other\n"
    nbformat.write(stored, page.with_suffix(".ipynb"))
    page_outputs.record_shown_outputs(None)
    assert record.read_text() != first[0]
    assert page_outputs.shown_record(following).is_file()


def test_the_pages_that_need_no_kernel_are_rewritten_while_a_page_executes(book, monkeypatch):
    """site_build.ahead_of: a page to execute runs on the main thread (where Ctrl-C lands), one
    at a time, while a helper thread rewrites the pages after it that need no kernel; the report
    keeps the pages' order."""
    page, following = book
    page.write_text(PAGE.format(middle='print("changed")'))  # its code: executed
    following.write_text(following.read_text() + "\nA sentence.\n")  # its prose: rewritten, no kernel
    rewritten_ahead = threading.Event()
    sync_page = execute_pages.sync_page

    def watched(md, **options):
        run = sync_page(md, **options)
        if md == following and run.status == "updated" and threading.current_thread() is not threading.main_thread():
            rewritten_ahead.set()
        return run

    execute, executed_on = execute_pages.execute, []

    def waiting(md, *arguments, **options):
        executed_on.append(threading.current_thread() is threading.main_thread())
        assert rewritten_ahead.wait(60), "the page after it was not rewritten while this one executed"
        return execute(md, *arguments, **options)

    monkeypatch.setattr(execute_pages, "sync_page", watched)
    monkeypatch.setattr(execute_pages, "execute", waiting)
    runs = []
    assert site_build.sync_outputs(runs) == []
    assert executed_on == [True]
    assert [(run.page, run.status) for run in runs] == [(page, "executed"), (following, "updated")]
    assert "A sentence." in following.with_suffix(".ipynb").read_text()
