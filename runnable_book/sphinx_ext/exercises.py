"""The book's exercises, as data every page of the HTML book carries (ours): one inline JSON.

What an exercise is, which page holds them and which have a check is
runnable_book/pipeline/book_shape.py's to say; the page's JavaScript reads it from here instead of
parsing headings, section ids and URLs on its own. Each page of the HTML book gets, in its
``<head>`` (no extra request), every exercise page's exercises, in the book's order::

    <script type="application/json" id="book-exercises">
    {"pages": [{"page": "book/15_11_exercises.html",
                "exercises": [{"number": 1, "section": "exercise-1", "checks": []},
                              {"number": 3, "section": "exercise-3",
                               "checks": [{"name": "check_conflict_policy",
                                           "passed": "PASS  exercise 3 (check_conflict_policy)"}]}, ...]},
               ...]}

``page`` is an exercise page's address from the site's root; ``section`` each exercise's
section id as the page has it (checked here against the page's doctree); ``checks`` the
reader checks its start cell imports, each with how the verdict line of a pass begins, as
``verdict_heading()`` of the checks' harness in the page's exercise package (chapter_lib/exercises/harness.py),
which the checks print it with, says it.
runner/book_exercises.mjs reads it; runner/progress.mjs (progress, "Mark as done", the
sidebar's "n/7 done") and runner/runner.mjs (a cell of an exercise depends only on its
exercise's cells) use it. The print is told the section ids by runnable_book/pipeline/print_pdf.py.

The data is a config value that changes the HTML (as runner's announced bytes are): an
exercise added to an exercise page changes it, and Sphinx then rewrites every page, whose
sidebars count the exercises, not only the page that changed.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError

from runnable_book.pipeline import book_shape

SCRIPT_ID = "book-exercises"


def exercises_data(srcdir: Path) -> dict | None:
    """The exercises as the pages carry them, but each exercise page still a docname (its
    address is the builder's to say, add_exercises); None for a book without exercises."""
    packages = book_shape.exercise_packages()
    if not packages:
        return None
    pages = []
    for page, package in packages.items():
        # (The harness the page's checks print their verdicts with, generated into its exercise
        # package: a book without exercises never imports one.)
        verdict_heading = importlib.import_module(f"{package}.harness").verdict_heading
        pages.append({"page": page.relative_to(srcdir).with_suffix("").as_posix(),
                      "exercises": [{"number": exercise.number, "section": exercise.section_id,
                                     "checks": [{"name": check, "passed": verdict_heading(exercise.number, check, passed=True)}
                                                for check in exercise.checks]}
                                    for exercise in book_shape.exercises(page).values()]})
    return {"pages": pages}


def note_exercises(app, config) -> None:
    data = exercises_data(Path(app.srcdir))
    config.book_exercises = json.dumps(data, sort_keys=True) if data else ""


def sections_are_where_the_data_says(app, docname: str, doctree, exercises: list[dict]) -> None:
    ids = {section_id for section in doctree.findall(nodes.section) for section_id in section["ids"]}
    missing = [exercise["section"] for exercise in exercises if exercise["section"] not in ids]
    if missing:
        raise ExtensionError(f"{app.env.doc2path(docname)}: no section with the id(s) {', '.join(missing)}, "
                             f"which runnable_book/pipeline/book_shape.py gives its exercises; its sections are "
                             f"{', '.join(sorted(ids))}")


def add_exercises(app, pagename, templatename, context, doctree) -> None:
    # The pages a reader reads (not the singlehtml page that is printed, which runs no progress).
    if app.builder.name != "html" or doctree is None or not app.config.book_exercises:
        return
    data = json.loads(app.config.book_exercises)
    for page in data["pages"]:
        if pagename == page["page"]:
            sections_are_where_the_data_says(app, pagename, doctree, page["exercises"])
        page["page"] = app.builder.get_target_uri(page["page"])
    # ("</" escaped: the JSON cannot end its own <script>.)
    body = json.dumps(data, sort_keys=True).replace("</", "<\\/")
    app.add_js_file(None, body=body, type="application/json", id=SCRIPT_ID)


def setup(app):
    app.add_config_value("book_exercises", "", "html", types=[str])
    app.connect("config-inited", note_exercises)
    app.connect("html-page-context", add_exercises)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
