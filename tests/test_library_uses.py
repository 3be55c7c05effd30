"""runnable_book/pipeline/library_uses.py: a page re-executes when what it uses changes, and only then."""

import json
import shutil
import subprocess
import sys

import pytest

from runnable_book.pipeline import page_inputs, execute_pages
from runnable_book.pipeline.library_text import LIBRARY_INIT
from runnable_book.pipeline.library_uses import LAZY_EXPORTS, Library, uses
from runnable_book.pipeline.pages import notebook_pages, read_page
from runnable_book.repository import ROOT

INIT = "from .chapter15 import *  # noqa\nfrom .chapter15 import __all__  # noqa\n"
CHAPTER = '''\
"""The generated module (a docstring is no page's input)."""
import re

# Defined in Section 15.1 -- page a, code cell 1.
def h():
    return re.sub("a", "b", "a")


# Defined in Section 15.1 -- page a, code cell 1.
def g():
    return h()


def f():
    return 2


LIMIT = 3
LIMIT += 1
__all__ = ["h", "g", "f", "LIMIT"]
'''
PAGES = {  # what each page imports
    "uses_f": "from chapter_lib import f\nprint(f())",
    "uses_g": "from chapter_lib import g\nprint(g())",
    "uses_limit": "from chapter_lib.chapter15 import LIMIT",
    "whole_module": "from chapter_lib import chapter15\nprint(vars(chapter15))",
    "imports_nothing": "print(1)",
}


def inputs_by_page(root):
    library = Library(root)
    return {page: uses([code], library) for page, code in PAGES.items()}


def edited(tmp_path, old, new):
    """The scratch library's chapter15.py with one edit; returns the digests before and after."""
    root = tmp_path / "chapter_lib"
    root.mkdir(exist_ok=True)
    (root / "__init__.py").write_text(INIT)
    (root / "chapter15.py").write_text(CHAPTER)
    before = inputs_by_page(root)
    assert old in CHAPTER
    (root / "chapter15.py").write_text(CHAPTER.replace(old, new))
    after = inputs_by_page(root)
    return {page for page in PAGES if before[page] != after[page]}


def test_a_changed_definition_reaches_exactly_its_users_through_the_library(tmp_path):
    assert edited(tmp_path, 'return re.sub("a", "b", "a")', 'return 0') == {"uses_g", "whole_module"}
    assert edited(tmp_path, "return 2", "return 5") == {"uses_f", "whole_module"}


def test_comments_provenance_lines_and_layout_are_not_inputs(tmp_path):
    assert edited(tmp_path, "# Defined in Section 15.1 -- page a, code cell 1.",
                  "# Defined in Section 15.1 -- page a, code cell 2.") == set()
    assert edited(tmp_path, "def f():\n    return 2", "def f():\n\n    return (2)  # two") == set()
    assert edited(tmp_path, '"""The generated module', '"""The regenerated module') == set()


def test_a_new_unused_definition_reaches_only_pages_that_use_the_whole_module(tmp_path):
    assert edited(tmp_path, "LIMIT = 3\n", "LIMIT = 3\n\n\ndef unused():\n    return 1\n") == {"whole_module"}


def test_every_statement_binding_a_name_is_an_input_and_a_removed_name_is_one_too(tmp_path):
    assert edited(tmp_path, "LIMIT += 1", "LIMIT += 2") == {"uses_limit", "whole_module"}
    gone = edited(tmp_path, "def g():\n    return h()\n", "")
    assert gone == {"uses_g", "whole_module"}
    root = tmp_path / "chapter_lib"
    assert inputs_by_page(root)["uses_g"] == {"chapter_lib.g": "missing"}


def test_ipython_syntax_that_mentions_the_library_reaches_all_of_it(tmp_path):
    root = tmp_path / "chapter_lib"
    root.mkdir()
    (root / "__init__.py").write_text(INIT)
    (root / "chapter15.py").write_text(CHAPTER)
    reached = uses(["%time from chapter_lib import f"], Library(root))
    assert {"chapter15.f", "chapter15.g", "chapter15.h"} <= set(reached)
    assert uses(["%time print(1)"], Library(root)) == {}


# --------------------------------------------------------------------------
# The book itself
# --------------------------------------------------------------------------


def digests_with(tmp_path, monkeypatch, module, old, new):
    """Each page's inputs digest before and after one edit to a scratch copy of chapter_lib."""
    pages = {md.stem: read_page(md) for md in notebook_pages()}
    before = {name: execute_pages.inputs_digest(nb) for name, nb in pages.items()}
    library = tmp_path / "chapter_lib"
    shutil.copytree(ROOT / "chapter_lib", library, ignore=shutil.ignore_patterns("__pycache__"))
    text = (library / module).read_text()
    assert old in text, f"{old!r} is not in {module}"
    (library / module).write_text(text.replace(old, new, 1))
    monkeypatch.setattr(page_inputs, "LIBRARY", library)
    after = {name: execute_pages.inputs_digest(nb) for name, nb in pages.items()}
    return {name for name in pages if before[name] != after[name]}, pages


def importers_of(pages, name):
    """Pages whose code imports `name` from chapter_lib (by reading the code, not the analysis)."""
    return {page for page, nb in pages.items()
            if any(line.startswith("from chapter_lib") and f" {name}" in line.replace(",", " ")
                   for c in nb.cells if c.cell_type == "code" for line in c.source.splitlines())}


def test_a_new_unused_saved_function_re_executes_only_the_page_that_copies_the_whole_module(tmp_path, monkeypatch):
    changed, _ = digests_with(tmp_path, monkeypatch, "chapter15.py", "\n__all__ = [",
                              "\ndef unused_by_every_page():\n    return None\n\n__all__ = ['unused_by_every_page', ")
    assert changed == {"15_11_exercises"}, "chapter_lib.exercises copies every function of chapter15"


def test_renumbered_provenance_comments_re_execute_no_page(tmp_path, monkeypatch):
    changed, _ = digests_with(tmp_path, monkeypatch, "chapter15.py", ", code cell 2.", ", code cell 3.")
    assert changed == set()


@pytest.mark.parametrize("name", ["token_count", "assess"])
def test_a_changed_definition_re_executes_the_pages_that_import_it(tmp_path, monkeypatch, name):
    text = (ROOT / "chapter_lib" / "chapter15.py").read_text()
    start = text.index(f"\ndef {name}(")
    body = text.index('"""', text.index('"""', start) + 3) + 3  # after its docstring
    changed, pages = digests_with(tmp_path, monkeypatch, "chapter15.py", text[start:body],
                                  text[start:body] + "\n    pass  # an edit")
    assert importers_of(pages, name) <= changed
    assert "15_01_corpus_and_search_stub" not in changed, "15.1 defines what it uses; it imports nothing"


def test_a_hand_written_exercise_module_re_executes_only_the_exercises_page(tmp_path, monkeypatch):
    edit = ("\ndef check_conflict_policy(assess_fn, resolve_fn):\n",
            "\ndef check_conflict_policy(assess_fn, resolve_fn):\n    assert True  # an edit\n")
    changed, _ = digests_with(tmp_path, monkeypatch, "exercises/check_3.py", *edit)
    assert changed == {"15_11_exercises"}
    monkeypatch.undo()  # the edit above is gone: the real library again
    unused, _ = digests_with(tmp_path / "again", monkeypatch, "exercises/check_3.py",
                             "\ndef check_conflict_policy(", "\nNOT_USED = 1\n\n\ndef check_conflict_policy(")
    assert unused == set(), "a definition no page reaches is no page's input"


def test_the_change_report_ignores_where_a_fresh_run_split_its_stdout():
    from nbformat.v4 import new_code_cell, new_output

    from runnable_book.pipeline import change_report

    stored = new_code_cell("print(1); print(2)", outputs=[new_output("stream", name="stdout", text="a\nb\n")])
    fresh = new_code_cell("print(1); print(2)", outputs=[new_output("stream", name="stdout", text="a"),
                                                         new_output("stream", name="stdout", text="\nb\n")])
    assert change_report.output_diff([stored], [fresh], ["cell 1"]) == []
    changed = new_code_cell("print(1); print(2)", outputs=[new_output("stream", name="stdout", text="a\nc\n")])
    assert change_report.output_diff([stored], [changed], ["cell 1"]) == ["cell 1:", "   a", "  -b", "  +c"]


# A statement's text, as library_uses reads it, on each interpreter: the keys and a digest of
# each text (only the standard library and runnable_book/ are needed, so any interpreter runs it).
STATEMENT_TEXTS = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from runnable_book.pipeline.library_uses import Library
print(json.dumps({s.key: hashlib.sha256(s.text.encode()).hexdigest()
                  for m in Library().modules.values() for s in m.statements}, sort_keys=True))
"""


def test_the_librarys_inputs_are_the_same_on_every_supported_python_here():
    """A page's inputs read the same library alike on 3.11, 3.12 and 3.13 (3.12's ast.unparse
    writes f-strings otherwise): else a fresh `make book` on another Python re-executes pages
    whose code and library did not change. Every supported interpreter found here, against this one."""
    from runnable_book.interpreters import found_here

    def texts(python: str) -> dict:
        return json.loads(subprocess.run([python, "-c", STATEMENT_TEXTS, str(ROOT)], capture_output=True,
                                         text=True, check=True).stdout)

    here = texts(sys.executable)
    assert any("f'" in s.text or 'f"' in s.text or "__fstring__" in s.text
               for m in Library().modules.values() for s in m.statements), "the library has no f-string to compare"
    for python, version in found_here():
        other = texts(python)
        differ = sorted(key for key in here.keys() | other.keys() if here.get(key) != other.get(key))
        assert not differ, f"Python {version} ({python}) reads these statements otherwise: {differ}"


# The package re-exporting two chapters: as make lib writes it (each chapter imported on first use
# of one of its names: library_text.LIBRARY_INIT), and as star imports would.
TWO_CHAPTERS_INIT = {
    "make lib's": LIBRARY_INIT.format(regenerate="make lib", chapters="two", lazy_name=LAZY_EXPORTS,
                                      chapters_names="    'chapter15': ['h', 'g', 'f', 'LIMIT'],\n    'chapter16': ['count'],\n",
                                      names=['h', 'g', 'f', 'LIMIT', 'count']),
    "star imports": "from .chapter15 import *  # noqa\nfrom .chapter16 import *  # noqa\n__all__ = ['h', 'g', 'f', 'LIMIT', 'count']\n",
}


@pytest.mark.parametrize("init", TWO_CHAPTERS_INIT)
def test_a_later_chapter_reaches_what_it_imports_of_an_earlier_one(tmp_path, init):
    """Two chapters, as make lib writes them (one module each, the package re-exporting both):
    a page that uses chapter 16's function depends on the chapter 15 definition it calls, and
    only the pages that reach an edited definition see their inputs change."""
    root = tmp_path / "chapter_lib"
    root.mkdir()
    (root / "__init__.py").write_text(TWO_CHAPTERS_INIT[init])
    (root / "chapter15.py").write_text(CHAPTER)
    (root / "chapter16.py").write_text('__all__ = ["count"]\n\nfrom chapter_lib.chapter15 import f  # saved by chapter 15\n\n'
                                       "def count():\n    return f() + 1\n")
    pages = {"uses_count": "from chapter_lib import count\nprint(count())", "uses_g": PAGES["uses_g"],
             "the_package": "import chapter_lib\nprint(chapter_lib.count())"}
    before = {page: uses([code], Library(root)) for page, code in pages.items()}
    assert not any(key.startswith("chapter16") for key in before["uses_g"]), before["uses_g"]
    assert {key.split(".")[0] for key in before["the_package"]} >= {"chapter15", "chapter16"}, before["the_package"]
    assert any(key.startswith("chapter15.f") for key in before["uses_count"]), before["uses_count"]
    assert any(key.startswith("chapter16.count") for key in before["uses_count"])
    (root / "chapter15.py").write_text(CHAPTER.replace("return 2", "return 3"))
    after = {page: uses([code], Library(root)) for page, code in pages.items()}
    assert after["uses_count"] != before["uses_count"] and after["uses_g"] == before["uses_g"]
