"""The book is what its author accepted, and holds the chapter as delivered: how that is decided.

runnable_book/pipeline/accept.py says why and how: (a) every page's text and printed outputs equal
tests/book_as_accepted/<page>.txt (`make accept` writes them); (b) every line of
tests/chapter15_as_delivered.txt is in the book, except the departures `make accept`
recorded, and the record is exact. The book itself is held to both by `accept --check`
(`make test-sources`), once per run: these tests show how the comparison reads the book and
what a failure says, and that the chapter as delivered never changes. An author's changes in
a row, each accepted, on a scratch copy: tests/test_recipes.py (docs/authoring.md's recipes).
"""

from __future__ import annotations

import hashlib
import re

import pytest

from runnable_book.pipeline import accept
from runnable_book.pipeline.book_text import NO_NEWLINE, Line, markdown_lines, verbatim
from runnable_book.repository import ROOT


@pytest.fixture(scope="module")
def now():
    return accept.current_reference()


def test_markdown_reads_as_the_rendered_page_shows_it():
    """runnable_book/pipeline/book_text.py: one line per block, inline markup dropped, code kept."""
    markdown = (
        "## Exercise 2\n\nA *paragraph* with `code` and a [link](#references)\non two lines.\n\n"
        "> **In the interview**\n>\n> Q. Why?\n\n1. first\n2. second\n\n| a | b |\n|---|---|\n| 1 | `2` |\n\n"
        "<details>\n<summary>Hint 1 of 2 for exercise 2</summary>\n\nInside the hint.\n\n</details>\n\n"
        "```mermaid\nflowchart LR\n  A --> B\n```\n")
    assert markdown_lines(markdown) == [Line("prose", text) for text in (
        "## Exercise 2", "A paragraph with code and a link on two lines.", "> In the interview", "> Q. Why?",
        "1. first", "2. second", "a | b", "1 | 2", "Hint 1 of 2 for exercise 2", "Inside the hint.")] + [
        Line("code", "flowchart LR"), Line("code", "  A --> B")]
    assert verbatim("a\nb") == [Line("printed", "a"), Line("printed", "b"), Line("printed", NO_NEWLINE)]
    assert verbatim("a\n\n") == [Line("printed", "a"), Line("printed", "")]


# The chapter as delivered is a record, never changed: its digest, as committed in c8cdeb1.
DELIVERED_SHA256 = "763ceff33c1e65aa809693e7ad7e0b9fda0f96f5c763cde2d93d74bcd9e18a4b"


def test_the_chapter_as_delivered_is_unchanged_byte_for_byte():
    digest = hashlib.sha256(accept.DELIVERED.read_bytes()).hexdigest()
    assert digest == DELIVERED_SHA256, (f"{accept.DELIVERED.name} is the chapter as delivered, never edited: "
                                        "an intended change to the book is recorded by `make accept`")
    assert accept.delivered_lines() and accept.delivered_exercises(), "its text and Exercises section are read"


DELIVERED_SAMPLE = """15  A chapter

A paragraph that says “one thing” and cites (Liu et al., 2024).

def f(k=3):
    return k
d01 -> printed by f  

NoteIn the interview

1. Read the traces side by side.

Asai, Akari, et al. 2024. “A reference.” Somewhere.
"""
SAMPLE_BOOK = [
    Line("prose", "# 15 A chapter"),
    Line("prose", "A paragraph that says “one thing” and cites (Liu et al. 2024)."),
    Line("code", "def f(k=3):"), Line("code", "    return k"),
    Line("printed", "d01 -> printed by f  "),
    Line("prose", "> In the interview"),
    Line("prose", "1. Read the traces side by side."),
]


@pytest.mark.parametrize("changed, departed", [
    (None, []),
    (1, "A paragraph that says “one thing” and cites (Liu et al., 2024)."),  # a reworded sentence
    (3, "    return k"),  # changed code
    (4, "d01 -> printed by f  "),  # a changed print
    (5, "NoteIn the interview"),
    (6, "1. Read the traces side by side."),
])
def test_a_changed_line_of_each_kind_is_a_departure_from_the_delivered_chapter(tmp_path, changed, departed):
    """(b) can fail: each kind of line is looked for where a reader finds it, verbatim or as prose."""
    delivered = tmp_path / "delivered.txt"
    delivered.write_text(DELIVERED_SAMPLE)
    lines = list(SAMPLE_BOOK)
    if changed is not None:
        lines[changed] = Line(lines[changed].kind, lines[changed].text.replace("e", "E", 1))
    found = accept.departures({tmp_path / "page.md": lines}, delivered)
    assert found == ([departed] if departed else [])


def test_a_difference_names_the_page_the_line_and_both_versions(now):
    """A changed printed line (the first the book prints) and a changed code line, as a fidelity
    failure reports them: where they are in the .md (its file, the cell, the line), as the change
    report and every message name a place, and both versions."""
    from runnable_book.pipeline.pages import cell_positions, code_cells

    name, lines, index = next((name, text.splitlines(), i) for name, text in now.items()
                              for i, line in enumerate(text.splitlines()) if line.startswith("--- ") and " printed " in line)
    page = ROOT / "book" / f"{name[:-4]}.md"
    number, did = re.match(r"--- cell (\d+) (.*)$", lines[index]).groups()
    kind, rank, _ = cell_positions(page)[int(number) - 1]
    assert kind == "code", lines[index]
    cell = code_cells(page)[rank - 1]
    old = lines[index + 1]
    changed = "\n".join(lines[:index + 1] + [old + " (changed)"] + lines[index + 2:]) + "\n"
    found = accept.problem(name, changed)
    assert found.startswith(f"book/{name[:-4]}.md differs from its accepted text (tests/book_as_accepted/{name}):")
    shown_old, shown_new = accept.excerpt(old, old + " (changed)")  # a long line: around the change
    assert f"  {cell.where}, {did}:\n    - {shown_old}\n    + {shown_new}" in found, found
    assert shown_new.endswith("(changed)")

    # A line of code: the .md line it is on, counted from the cell's first line of code.
    code = next(i for i, line in enumerate(lines) if line == f"--- cell {number} (code)") + 1
    source_line = lines[code]
    md_line = page.read_text().splitlines().index(source_line, cell.line) + 1  # (after its fence)
    edited = "\n".join(lines[:code] + [source_line + "  # edited"] + lines[code + 1:]) + "\n"
    assert f"  {cell.where}, line {md_line}:\n" in accept.problem(name, edited)
