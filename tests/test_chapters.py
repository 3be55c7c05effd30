"""A book of two chapters, built: the second chapter's saved code goes to a module of its own
that imports what it uses of the first's, its page runs on it, and a change to a chapter 15
definition re-executes exactly the pages of either chapter that use it.

The second chapter is a fixture (tests/fixture_chapters/, never published), added to a copy of
this repository; the book itself keeps its one chapter.
"""

import re
import shutil

import nbformat
import pytest

from runnable_book.repository import ROOT

pytestmark = [pytest.mark.whole_book, pytest.mark.kernel]

PAGE = ROOT / "tests" / "fixture_chapters" / "16_01_tokens_read.md"


def executed(output: str) -> list[str]:
    return re.findall(r"^\s*executed\s+book/(\S+)\.ipynb$", output, re.M)


def test_a_second_chapter_imports_the_first_and_a_change_re_executes_exactly_its_users(scratch_repository):
    copy = scratch_repository.path
    shutil.copyfile(PAGE, copy / "book" / PAGE.name)
    toc = copy / "_toc.yml"
    toc.write_text(toc.read_text().replace("  - file: book/references\n",
                                           f"  - file: book/{PAGE.stem}\n  - file: book/references\n"))
    built = scratch_repository.run("-m", "runnable_book.pipeline.artefact_graph", "lib", "outputs").stdout
    assert executed(built) == [PAGE.stem], built
    sixteen = (copy / "chapter_lib" / "chapter16.py").read_text()
    assert "\nfrom chapter_lib.chapter15 import token_count  # saved by chapter 15\n" in sixteen
    assert "def tokens_read" in sixteen and "def tokens_read" not in (copy / "chapter_lib" / "chapter15.py").read_text()
    assert "'chapter16': ['tokens_read']" in (copy / "chapter_lib" / "__init__.py").read_text()
    notebook = nbformat.read(copy / "book" / f"{PAGE.stem}.ipynb", as_version=4)
    printed = [o.get("text") for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert printed == ["10\n"], printed
    # A chapter 15 definition that chapter 16 uses changes: its page, and the pages that use it.
    fifteen_eight = copy / "book" / "15_08_long_context_rag_cache.md"
    fifteen_eight.write_text(fifteen_eight.read_text().replace("    return len(tokenize(text))",
                                                               "    return len(list(tokenize(text)))"))
    built = scratch_repository.run("-m", "runnable_book.pipeline.artefact_graph", "lib", "outputs").stdout
    assert sorted(executed(built)) == ["15_08_long_context_rag_cache", "15_11_exercises", PAGE.stem], built
    assert "library definitions it uses changed: `chapter15.token_count`" in built
