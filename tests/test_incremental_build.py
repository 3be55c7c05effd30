"""The build graph's contract: an incremental `make book` leaves the site a clean build would.

In a scratch copy of the repository and of what its last build left (its `_build`: an author's
checkout; `make test` builds it first), a sequence of author edits (saved code, prose, a
`.bib` entry, a figure's caption, a page added then removed, a revert, a title's markup; and two mistakes, a
`_toc.yml` entry for a missing page and an unclosed `.bib` entry, each stopping the build with
one line, after which nothing is remade), each followed by
`make book`'s graph, some alone and some together, as an author makes several changes
before a build (edits of different pages and files; each of them reaches artefacts of its
own), and after each build the graph's own check (`artefact_graph status`: every
artefact's recorded input digests are today's) finds nothing out of date. The page's Python
(restored from the snapshot the graph remade) has the function the saved-code edit added, in
a browser. Then a clean build of the same sources, and the two sites compared byte for byte.
The saved-code edit is not reverted, so a stale artefact cannot hide behind a revert.
(The copy's first build, the saved-code edit's, also brings the repository's build up to date
there: the site, at least, which links the PDF in the repository and not in the copy, and
which Sphinx reads again in a folder of another name. Not a build of its own before the edits:
it cost as much as the clean one, and an edit built together with whatever the last build left
undone is the case an author meets anyway. One build of the whole book, the clean one: the
suite's longest test all the same.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runnable_book.checks.clean_build_compare import already_in, built_copy, differing, sources_copy

pytestmark = [pytest.mark.site, pytest.mark.browser, pytest.mark.long]

ROOT = Path(__file__).resolve().parent.parent
# Files whose bytes may differ between two builds of the same sources, and why: none. (The
# wheel, Python's snapshot and the first figure's bytecode are made reproducibly, whatever the
# checkout's path; see runnable_book/pipeline/reproducible_runtime.mjs and artefact_graph.py.)
DIFFER_LEGITIMATELY: set[str] = set()
PROBE = "\n\ndef probe_marker():\n    \"\"\"Added by tests/test_incremental_build.py.\"\"\"\n    return 'probe'\n"


# `artefact_graph STEPS`, then `artefact_graph status` on what it left, in one Python (its start-up,
# about a second, paid once a build): status reads every input and artefact from disk again.
STATUS_FOLLOWS = "-- artefact_graph status --"
BUILD_THEN_STATUS = f"""import sys
from runnable_book.pipeline import artefact_graph
built = artefact_graph.main(sys.argv[1:])
print({STATUS_FOLLOWS!r}, flush=True)
sys.exit(1 if built else 2 * bool(artefact_graph.main(["status"])))
"""


def graph(repository, *steps: str) -> str:
    done = repository.run("-c", BUILD_THEN_STATUS, *steps, check=False)
    built, _, status = done.stdout.partition(STATUS_FOLLOWS)
    assert done.returncode != 1, f"artefact_graph {' '.join(steps)}:\n{built[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"after artefact_graph {' '.join(steps)}: {status}{done.stderr[-3000:]}"
    return built


def stopped(repository, *steps: str) -> str:
    """`artefact_graph STEPS` that must stop: what it said on stderr."""
    done = repository.run("-m", "runnable_book.pipeline.artefact_graph", *steps, check=False)
    assert done.returncode == 1, f"artefact_graph {' '.join(steps)} did not stop:\n{done.stdout[-3000:]}"
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    return done.stderr


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found"
    path.write_text(text.replace(old, new, 1))


def test_an_incremental_build_equals_a_clean_build(tmp_path, scratch_run):
    incremental = scratch_run(built_copy(ROOT, tmp_path / "incremental"))
    book = incremental.path / "book"

    # Saved code: a new function in 15.1's first `# @save` cell (library, wheel, snapshot, pages),
    # built together with whatever the copied build had left to do.
    edit(book / "15_01_corpus_and_search_stub.md", "# @save\nfrom dataclasses import dataclass\n",
         "# @save\nfrom dataclasses import dataclass\n" + PROBE)
    assert "15_01_corpus_and_search_stub: executed" in graph(incremental, "book")
    # An author's mistakes stop the build with one line each, and what they stopped is not
    # remade once they are mended: a `_toc.yml` entry for a missing page (before `lib`), the
    # first `.bib` entry left open (at `outputs`, which reads it). The next build (the edits
    # below) makes none of the wheel, the snapshot, the first figure and the font again.
    toc = incremental.path / "_toc.yml"
    listed = toc.read_text()
    toc.write_text(listed.replace("  - file: book/references\n", "  - file: book/15_99_missing\n  - file: book/references\n"))
    line = toc.read_text().splitlines().index("  - file: book/15_99_missing") + 1
    assert stopped(incremental, "book") == (f"error: _toc.yml, line {line}: its entry `book/15_99_missing` names "
                                            "book/15_99_missing.md, which does not exist. Create the page, or take "
                                            "the entry out.\n")
    toc.write_text(listed)
    bib = book / "references.bib"
    works = bib.read_text()
    first_closing = works.index("\n}\n")
    bib.write_text(works[:first_closing] + works[first_closing + 2:])
    said = stopped(incremental, "book")
    assert re.search(r"^error: book/references\.bib, line \d+: '=' expected, in the entry `\w+` \(@\w+, line \d+\), "
                     r"still open where the next entry begins: is its closing brace missing\?$", said, re.M), said
    bib.write_text(works)
    # Together: prose, a page's title (in every page's navigation), a figure (its caption)
    # and a .bib entry.
    page = book / "15_05_self_correcting_retrieval.md"
    prose = page.read_text()
    edit(page, "\n\n", "\n\nAn added sentence.\n\n")
    edit(book / "15_10_summary.md", "\n# 15.10 Summary\n", "\n# 15.10 Summary, retitled\n")
    edit(book / "15_04_quality_and_cost.md", "Accuracy versus documents pulled into context.",
         "Accuracy against documents pulled into context.")
    edit(book / "references.bib", "{{Don't Do RAG:", "{{Do Not Do RAG:")
    assert "making" not in graph(incremental, "book"), "an artefact after the mistakes was made again"
    # The reader's notebook of the page that cites it lists the work with its new title.
    assert "Do Not Do RAG" in (book / "15_08_long_context_rag_cache.ipynb").read_text()
    # Together: the prose edit reverted, and a page added (then, alone, removed).
    page.write_text(prose)
    toc = incremental.path / "_toc.yml"
    listed = toc.read_text()
    added = book / "15_12_scratch.md"
    added.write_text((book / "15_10_summary.md").read_text().split("\n# ", 1)[0]
                     + "\n# 15.12 A scratch section\n\n```{code-cell} ipython3\nprint('scratch')\n```\n")
    toc.write_text(listed.replace("  - file: book/references\n", "  - file: book/15_12_scratch\n  - file: book/references\n"))
    assert "15_12_scratch: executed" in graph(incremental, "book")
    toc.write_text(listed)
    added.unlink()
    added.with_suffix(".ipynb").unlink()
    graph(incremental, "book")
    # A title's markup alone, its words the same: every page's sidebar shows it so (the
    # navigation is its titles' nodes, not their text).
    edit(book / "15_06_graph_view.md", "\n# 15.6 A graph view of the corpus\n", "\n# 15.6 A *graph* view of the corpus\n")
    graph(incremental, "book")

    # The page's Python, restored from the snapshot, has the library just built.
    from runnable_book.browser.page_runner import JS_TIMINGS, BrowserRunner

    with BrowserRunner(incremental.path / "_build" / "html") as runner:
        runner.open("book/15_01_corpus_and_search_stub.html")
        runner.keep_snapshot()  # (restored from it whatever the line: a busy machine's is slow)
        runner.start()
        cell = runner.type_and_run(1, "import chapter_lib\nprint(chapter_lib.probe_marker())")
        assert cell["outputs"] == [["stdout", "probe\n"]], cell
        assert "runtime restored from its snapshot" in [t["step"] for t in runner.page.evaluate(JS_TIMINGS)]

    clean = scratch_run(sources_copy(incremental.path, tmp_path / "clean"))
    graph(clean, "book")
    different = [path for path in differing(incremental.path / "_build" / "html", clean.path / "_build" / "html")
                 if path not in DIFFER_LEGITIMATELY]
    assert different == [], f"the incremental and the clean build differ in: {different}"


def test_a_copy_keeps_what_the_build_left_beside_what_make_copied(tmp_path):
    """built_copy's merge: a folder the copy already has (runner/, the editor Make copied) is
    merged into, so the wheel, the snapshot and the first figure's bytecode the last build left
    there are copied too (once they were not, and the copy's first build made them again)."""
    import shutil

    made, target = tmp_path / "made", tmp_path / "target"
    for path, text in [("runner/editor.mjs", "the build's"), ("runner/chapter_lib.whl", "wheel"), ("fonts/a.woff", "font")]:
        (made / path).parent.mkdir(parents=True, exist_ok=True)
        (made / path).write_text(text)
    (target / "runner").mkdir(parents=True)
    (target / "runner" / "editor.mjs").write_text("Make's")
    shutil.copytree(made, target, dirs_exist_ok=True, ignore=already_in(made, target))
    assert {p.relative_to(target).as_posix(): p.read_text() for p in target.rglob("*") if p.is_file()} == {
        "runner/editor.mjs": "Make's", "runner/chapter_lib.whl": "wheel", "fonts/a.woff": "font"}
