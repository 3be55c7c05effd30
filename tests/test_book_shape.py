"""The book's shape (runnable_book/pipeline/book_shape.py): what the tests count, read from the pages.

And the exercise the proof that no test writes a count adds to a scratch copy (the next one
after the last), which then passes the exercise, notebook, shape and fidelity tests unedited
(the guide's recipe in tests/test_recipes.py adds one too).
"""

import contextlib
import io
from types import SimpleNamespace

from docutils.core import publish_doctree
import pytest
from sphinx.errors import ExtensionError

import chapter_lib.exercises
from chapter_lib.exercises.harness import CaseResult, report, verdict_heading

from runnable_book.pipeline import book_shape, myst_to_notebook
from runnable_book.pipeline.pages import notebook_pages, pages_in_toc_order
from runnable_book.sphinx_ext.exercises import sections_are_where_the_data_says


def test_the_pages_are_the_tocs_and_the_exercises_are_numbered_in_order():
    assert book_shape.pages() == pages_in_toc_order()
    numbers = book_shape.exercise_numbers()
    assert numbers == list(range(1, len(numbers) + 1))
    assert book_shape.exercises_page() in notebook_pages()


def test_every_exercise_has_a_start_cell_hints_a_worked_solution_and_checks_that_exist():
    for n, exercise in book_shape.exercises().items():
        assert exercise.start.source.startswith(f"# Exercise {n}: start here"), n
        assert exercise.hints and exercise.saved_solution is not None and exercise.solution, n
        for check in exercise.checks:  # a check a start cell imports is one the package has
            assert callable(getattr(chapter_lib.exercises, check, None)), (n, check)


def test_nested_hints_are_found_where_the_html_finds_them(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("---\nkernelspec:\n  name: python3\n  display_name: Python 3\n  language: python\n---\n\n"
                    "# Exercises\n\n## Exercise 1\n\nDo `it`.\n\n"
                    "```{code-cell} ipython3\n# Exercise 1: start here\nfrom chapter_lib.exercises import check_router\n```\n\n"
                    "`````{dropdown} Hint 1 of 2 for exercise 1\nFirst.\n\n"
                    "````{dropdown} Hint 2 of 2 for exercise 1\nSecond.\n````\n`````\n\n"
                    "## Exercise 10\n\nThen this.\n")
    exercises = book_shape.read_exercises(page)
    assert list(exercises) == [1, 10]
    assert exercises[1].hints == [(1, 2), (2, 2)] and exercises[1].checks == ["check_router"]
    assert exercises[1].text == "Do `it`." and exercises[1].plain_text == "Do it."
    assert exercises[10].hints == [] and exercises[10].start is None


def test_the_figures_and_citations_are_counted_as_the_notebooks_number_and_link_them():
    assert book_shape.figures() == myst_to_notebook.figure_numbers()
    assert list(book_shape.figures().values()) == [f"Figure 15.{n}" for n in range(1, len(book_shape.figures()) + 1)]
    assert book_shape.citations() > 0 and book_shape.mermaid_diagrams() > 0


NEXT_EXERCISE = '''
+++

## Exercise @N@

Count what the loop spends. For each question in `questions()`, report how many searches the agentic loop makes and how many documents it reads.

```{code-cell} ipython3
# Exercise @N@: start here. Setup (ours): the loop and the question set.
from chapter_lib import agentic, corpus, questions

docs = corpus()
print([q[0] for q in questions()])
```

````{dropdown} Hint 1 of 1 for exercise @N@
Each result of `agentic` carries `searches` and `docs_read`.
````

```{code-cell} ipython3
---
mystnb:
  code_prompt_show: "Worked solution @N@: show the code"
  code_prompt_hide: "Hide the code"
tags: [hide-cell]
---
# @solution @N@
# Worked solution @N@ (ours): the loop's searches and reads, per question.
from chapter_lib import agentic, corpus, questions


def loop_costs_@N@(docs=None):
    """Question id -> (searches, documents read) of the agentic loop."""
    docs = docs or corpus()
    return {q[0]: (r.searches, r.docs_read) for q in questions() for r in [agentic(docs, *q[1:5])]}
```

```{code-cell} ipython3
---
mystnb:
  code_prompt_show: "Worked solution @N@: show the costs"
  code_prompt_hide: "Hide worked solution @N@"
tags: [hide-cell]
---
from chapter_lib.exercises import loop_costs_@N@ as loop_costs  # as the tests and checks import it

print(loop_costs(docs))
```

````{dropdown} Worked solution @N@: the answer in words
A one-hop question costs one search; a chain costs one search per hop it follows.
````
'''



def test_the_pages_data_names_each_exercise_section_as_docutils_does_and_a_missing_one_stops_the_build():
    doctree = publish_doctree("Exercise 1\n==========\n\nDo it.\n\nExercise 10\n===========\n\nThen this.\n")
    described = [{"number": n, "section": book_shape.Exercise(n).section_id} for n in (1, 10)]
    app = SimpleNamespace(env=SimpleNamespace(doc2path=lambda docname: f"/book/{docname}.md"))
    sections_are_where_the_data_says(app, "exercises", doctree, described)  # (no error: both there)
    with pytest.raises(ExtensionError, match=r"/book/exercises\.md: no section with the id\(s\) exercise-2\b"):
        sections_are_where_the_data_says(app, "exercises", doctree, [*described, {"number": 2, "section": "exercise-2"}])
    # How a pass begins, from the checks' own harness: what a passing check prints begins so
    # (the line the page's progress watches for), and a failing one does not.
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        report(6, "check_router", [])
        report(6, "check_router", [CaseResult("a case", False, "wrong")])
    passed, failed = printed.getvalue().split("\n", 1)[0], printed.getvalue().splitlines()[1]
    heading = verdict_heading(6, "check_router", passed=True)
    assert passed.startswith(heading) and not failed.startswith(heading)
