"""A worked solution's fold shows one prompt: "Worked solution N: …" closed, "Hide …" open.

runnable_book/sphinx_ext/valid_markup.py writes myst-nb's two prompts as <span>s (valid inside
<summary>); runnable_book/sphinx_ext/static/runnable-book.css shows the one that fits the fold's state. On screen
the opened fold says "Hide …"; printed (the PDF prints solutions opened) it keeps its title.
"""

import pytest

from runnable_book.pipeline import book_shape

pytestmark = pytest.mark.site

EXERCISES = "book/15_11_exercises.html"
SUMMARY_TEXT = "(i) => document.querySelectorAll('details.hide')[i].querySelector('summary').innerText.trim()"


def test_each_fold_shows_the_prompt_of_its_state(open_page):
    page = open_page(EXERCISES)
    folds = page.locator("details.hide")
    hidden = len(book_shape.hidden_cells(book_shape.exercises_page()))
    assert folds.count() == hidden, f"{folds.count()} folds in the page, {hidden} hidden cells in the .md"
    assert page.evaluate(SUMMARY_TEXT, 0) == "Worked solution 1: show the code"
    folds.first.locator("summary").click()
    assert page.evaluate(SUMMARY_TEXT, 0) == "Hide the code"
    page.emulate_media(media="print")
    assert page.evaluate(SUMMARY_TEXT, 0) == "Worked solution 1: show the code"


# For each exercise: its hints, in DOM order, each nested in the one before, all before the
# first fold of its worked solution.
JS_HINTS = """() => {
    const folds = [...document.querySelectorAll('details.hide')];
    const result = {};
    for (const summary of document.querySelectorAll('details.sd-dropdown > summary')) {
        const m = summary.textContent.trim().match(/^Hint (\\d+) of (\\d+) for exercise (\\d+)$/);
        if (!m) continue;
        const [, n, total, exercise] = m.map(Number);
        const details = summary.parentElement;
        const solution = folds.find((f) => f.querySelector('summary').textContent.trim()
            .startsWith(`Worked solution ${exercise}:`));
        const before = solution && (details.compareDocumentPosition(solution) & Node.DOCUMENT_POSITION_FOLLOWING);
        const parent = details.parentElement.closest('details.sd-dropdown');
        const parentHint = parent ? parent.querySelector(':scope > summary').textContent.trim() : null;
        (result[exercise] ||= []).push({n, total, before: Boolean(before), open: details.open, parentHint});
    }
    return result;
}"""


def test_every_exercise_offers_hints_one_at_a_time_before_its_solution(open_page):
    hints = open_page(EXERCISES).evaluate(JS_HINTS)
    assert sorted(hints, key=int) == [str(n) for n in book_shape.exercise_numbers()]
    for exercise, found in hints.items():
        total = found[0]["total"]
        assert [h["n"] for h in found] == list(range(1, total + 1)) and 1 <= total <= 3
        assert all(h["before"] and not h["open"] for h in found), found
        # Hint n+1 is inside hint n: the reader reaches it only by opening the one before.
        assert [h["parentHint"] for h in found] == [None] + [
            f"Hint {n} of {total} for exercise {exercise}" for n in range(1, total)]
