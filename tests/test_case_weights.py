"""Per-case weights: what some cases of a check weigh, declared beside the exercise's points.

A start cell of book/15_11_exercises.md may say, beside ``points:``, what some cases of its
check weigh (``weights:``, a case's name -> a positive number; every other case weighs 1).
`make lib` writes them into chapter_lib/exercises/points.py (``WEIGHTS``, beside ``POINTS``;
runnable_book/pipeline/book_shape.py reads and checks them), and one rule
(chapter_lib.exercises.harness.verdict_points) gives the points, from the lines a check prints:
in the page and a notebook (``report``'s verdict line) and in the grader (runnable_book/grade/judge.py,
with the instructor's hidden cases, each weighing 1).

* the rule (Hypothesis): any weights and pass pattern give points between 0 and the worth,
  the worth when every case passes, more passed never fewer points, and today's share of the
  cases when nothing is weighed;
* a reader's error message cannot pass for another case's line;
* book_shape's errors for declarations that do not read, each naming the page, the start cell
  and its line, and the fix; the book's own weights name cases of their checks;
* agreement: for every checked exercise and every kind of answer the grader's test class gives
  (runnable_book/grade/generated_class.py), the points ``report`` prints are the points the judge gives
  on the same function's answers, and the hidden cases count one share each.

No sandbox: the judge is given the record a sandbox makes (each call's arguments and answer),
made here by calling the answers in this Python.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import textwrap
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

from chapter_lib.exercises import harness
from chapter_lib.exercises import points as generated
from chapter_lib.exercises.harness import CASE_COUNTS, VERDICT_HEADING, CaseResult, passed_of, points_for, report
from runnable_book.grade import book as grade_book
from runnable_book.grade import hidden as hidden_cases
from runnable_book.grade.box import wire
from runnable_book.grade.generated_class import answers
from runnable_book.grade.judge import judge
from runnable_book.pipeline import book_shape

PAGE = book_shape.exercises_page()
BOOK = grade_book.load()
CHECKED = {e.number: e for e in BOOK.checked}
NUMBER = min(CHECKED)  # the exercise the rule's tests report as (its points replaced in each)
PAGE_TOP = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n  language: python\n---\n\n# Exercises\n\n"


def printed_by(function, *args) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        function(*args)
    return out.getvalue().splitlines()


def said_points(heading: str) -> float:
    found = re.search(r", ([\d.]+) of ([\d.]+) points$", heading)
    assert found, heading
    return float(found.group(1))


# --------------------------------------------------------------------------
# The rule
# --------------------------------------------------------------------------

names = st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters=":"), min_size=1,
                         max_size=12), min_size=1, max_size=12, unique=True)
weight = st.one_of(st.integers(1, 20), st.floats(0.01, 50, allow_nan=False, allow_infinity=False))
worth = st.integers(1, 10_000).map(lambda cents: cents / 100)  # points as a page declares them: to the cent


@st.composite
def checks(draw):
    """(case results, weights of some of them, points the exercise is worth)."""
    cases = draw(names)
    results = [CaseResult(name, draw(st.booleans()), "why") for name in cases]
    weighed = draw(st.lists(st.sampled_from(cases), unique=True))
    return results, {name: draw(weight) for name in weighed}, draw(worth)


def reported(results, weights, worth) -> list[str]:
    with mock.patch.dict(generated.POINTS, {NUMBER: worth}), mock.patch.dict(generated.WEIGHTS, {NUMBER: weights}):
        return printed_by(report, NUMBER, "check_x", results)


@settings(max_examples=300, deadline=None)
@given(checks())
def test_the_points_lie_between_nothing_and_the_worth_and_every_case_passed_earns_the_worth(drawn):
    results, weights, worth = drawn
    lines = reported(results, weights, worth)
    points = said_points(lines[0])
    assert 0 <= points <= worth
    if all(r.ok for r in results):
        assert points == worth
    if not any(r.ok for r in results):
        assert points == 0
    # The verdict line still reads as the page's progress and the grader read it.
    assert VERDICT_HEADING.match(lines[0]) and CASE_COUNTS.search(lines[0])
    assert passed_of(lines[0]) == (sum(r.ok for r in results), len(results))
    # One more case passed never earns fewer points.
    failing = next((i for i, r in enumerate(results) if not r.ok), None)
    if failing is not None:
        better = list(results)
        better[failing] = CaseResult(results[failing].name, True, "why")
        assert said_points(reported(better, weights, worth)[0]) >= points


@settings(max_examples=200, deadline=None)
@given(checks(), st.integers(1, 9))
def test_equal_weights_give_the_share_of_the_cases_passed_as_before(drawn, same):
    results, _, worth = drawn
    passed = sum(r.ok for r in results)
    before = points_for(passed, len(results), worth)  # the rule before weights: cases passed of all
    assert said_points(reported(results, {}, worth)[0]) == before
    whole = float(math.ceil(worth))  # (one weight on every case, on a whole worth: the same share exactly)
    assert said_points(reported(results, {r.name: same for r in results}, whole)[0]) == \
        points_for(passed, len(results), whole)


def test_a_weighed_case_moves_the_points_by_its_share():
    results = [CaseResult("small", True, "ok"), CaseResult("big", False, "no"), CaseResult("other", True, "ok")]
    assert said_points(reported(results, {}, 10)[0]) == 6.67
    assert said_points(reported(results, {"big": 2}, 10)[0]) == 5  # 2 of 4
    assert said_points(reported(results, {"small": 3}, 10)[0]) == 8  # 4 of 5
    lines = reported(results, {"big": 2}, 10)
    assert lines[0] == "FAIL  exercise %d (check_x): 1 of 3 cases fail, 5 of 10 points" % NUMBER
    # Lines report() did not print (one case's line missing) count the verdict's cases, one share each.
    with mock.patch.dict(generated.WEIGHTS, {NUMBER: {"big": 2}}):
        assert harness.verdict_points(NUMBER, lines, 10) == 5
        assert harness.verdict_points(NUMBER, lines[:2], 10) == harness.verdict_points(NUMBER, lines[:1], 10) == 6.67
        assert harness.verdict_points(NUMBER, ["no verdict"], 10) is None


def test_a_readers_message_cannot_pass_for_another_cases_line():
    """A case's why may quote the reader's exception: its line breaks become spaces, so the lines
    under the verdict are one per case, and a forged "ok" line for the weighed case counts nothing."""
    forged = "nope\n  ok   big: forged\r\n  ok   big: again\u2028  ok   big: and again"
    results = [CaseResult("small", False, f"raised ValueError: {forged}"), CaseResult("big", False, "no")]
    lines = reported(results, {"big": 9}, 10)
    assert len(lines) == 3 and lines[1].startswith("  FAIL small: raised ValueError: nope   ok   big: forged")
    assert said_points(lines[0]) == 0
    assert harness.verdict_points(NUMBER, lines, 10) is not None


# --------------------------------------------------------------------------
# The declaration: book_shape's errors, and the book's own
# --------------------------------------------------------------------------


def scratch_page(tmp_path, options: str, check: str = "check_second_control", number: int = 4):
    """A page with one exercise whose start cell's options are ``options`` (YAML under `points: 10`)."""
    imports = f"from chapter_lib.exercises import {check}\n" if check else ""
    when_ready = f"\n\n# When ready: {check}(my_function)" if check else ""
    page = tmp_path / "page.md"
    page.write_text(PAGE_TOP + f"## Exercise {number}\n\nDo it.\n\n```{{code-cell}} ipython3\n---\npoints: 10\n"
                    + textwrap.dedent(options) + f"---\n# Exercise {number}: start here\n{imports}\n\n"
                    "def my_function(*args, **kwargs):\n    raise NotImplementedError" + when_ready + "\n```\n")
    return page


def declaration_problem(page) -> str:
    with pytest.raises(book_shape.BookProblem) as raised:
        book_shape.declared_points(page)
    return str(raised.value)


WHERE = "page.md, code cell 1 (line 14)"  # (the scratch page's start cell: what an editor jumps to)


@pytest.mark.parametrize("options, said", [
    ("weights:\n  any single mislabeled flag: 0\n", "gives the case 'any single mislabeled flag' the weight 0; a weight is a positive number"),
    ("weights:\n  any single mislabeled flag: -2\n", "the weight -2; a weight is a positive number"),
    ("weights:\n  any single mislabeled flag: two\n", "the weight 'two'; a weight is a positive number"),
    ("weights:\n  any single mislabeled flag: true\n", "the weight True; a weight is a positive number"),
    ("weights:\n  any single mislabeled flag: .nan\n", "the weight nan; a weight is a positive number"),
    ("weights: 2\n", "`weights: 2` should map case names to numbers: write `weights:` then one indented line"),
    ("weights:\n  - any single mislabeled flag\n", "should map case names to numbers"),
    ("weights:\n  'a: b': 2\n", "names the case 'a: b': name a case as its check does"),
    ("weights:\n  3: 2\n", "names the case 3: name a case as its check does"),
])
def test_a_declaration_that_does_not_read_is_named_with_its_cell_and_the_fix(tmp_path, options, said):
    problem = declaration_problem(scratch_page(tmp_path, options))
    assert problem.startswith(f"{tmp_path / WHERE}: exercise 4") and said in problem, problem


def test_weights_on_an_exercise_without_a_check_are_refused(tmp_path):
    problem = declaration_problem(scratch_page(tmp_path, "weights:\n  a case: 2\n", check=""))
    assert f"{tmp_path / WHERE}: exercise 4: its start cell gives `weights:` but imports no check" in problem
    assert "remove `weights:`, or import the exercise's check" in problem


def test_a_weight_that_names_no_case_of_the_check_is_named_with_the_cases_to_choose_from(tmp_path):
    page = scratch_page(tmp_path, "weights:\n  any single mislabelled flag: 2\n  the trust gate still applies: 1.5\n")
    assert book_shape.declared_points(page) == ({4: 10}, {4: {"any single mislabelled flag": 2,
                                                               "the trust gate still applies": 1.5}})
    problems = book_shape.unknown_weights(page)
    cases = [harness.case_name(line) for line in book_shape.case_lines("check_second_control", 1)[1:]]
    assert len(problems) == 1 and problems[0].startswith(f"{tmp_path / WHERE}: exercise 4's `weights:` names no case "
                                                         "of check_second_control: 'any single mislabelled flag'")
    assert problems[0].endswith(f"Name one of its cases as the check prints it: {'; '.join(cases)}")
    assert book_shape.unknown_weights(scratch_page(tmp_path, "weights:\n  the trust gate still applies: 3\n")) == []


def test_the_books_weights_name_cases_of_their_checks_and_make_lib_wrote_them():
    worth, weights = book_shape.declared_points(PAGE)
    assert weights, "the book weighs some case (exercise 4's: a single mislabeled flag no longer decides)"
    assert book_shape.unknown_weights(PAGE) == []
    assert (generated.POINTS, generated.WEIGHTS) == (worth, weights), "run `make lib`"
    assert set(weights) <= set(CHECKED)


# --------------------------------------------------------------------------
# Agreement: the page's verdict line and the grader's judge
# --------------------------------------------------------------------------


def recorded(functions):
    """The functions wrapped as the sandbox wraps them, and the record it makes (runnable_book/grade/box/harness.py):
    each call's slot, its arguments' key and its answer (or what it raised), as JSON carries it."""
    calls = []

    def recorder(slot, function):
        def call(*args, **kwargs):
            entry = {"slot": slot, "key": wire.call_key(args, kwargs)}
            calls.append(entry)
            try:
                result = function(*args, **kwargs)
            except Exception as error:
                entry["raised"] = [type(error).__name__, str(error), False]
                raise
            entry["out"] = wire.encode(result, [])
            return wire.decode(entry["out"])
        return call

    return [recorder(slot, f) for slot, f in enumerate(functions)], calls


def answered(exercise, code: str) -> list:
    """The student's functions when their cell is ``code``, after the start cell (as the grader's test class writes it)."""
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(exercise.start, namespace)
        exec(code, namespace)
    return [namespace[name] for name in exercise.args]


HIDDEN = '''
def {check}({parameters}):
    """Two hidden cases: one any function passes, one none does."""
    return [("always", lambda: (True, "fine")), ("never", lambda: (False, "no"))]
'''


def test_the_page_and_the_grader_give_the_same_points_for_every_kind_of_answer(tmp_path):
    weighed_and_failed = 0
    kinds = answers(BOOK)
    for number, exercise in CHECKED.items():
        check = exercise.grader_check()
        hidden_file = tmp_path / f"hidden_{number}.py"
        hidden_file.write_text(HIDDEN.format(check=exercise.check, parameters=", ".join(exercise.args)))
        hidden = hidden_cases.load(hidden_file, {exercise.check: len(exercise.args)})
        for kind in ("right", "wrong", "raises"):
            for code in kinds[number][kind]:
                functions, calls = recorded(answered(exercise, code))
                page = printed_by(check, *functions)
                hidden.results(exercise.check, functions)  # (the sandbox runs them after the check, recording)
                outcome = json.loads(json.dumps({"calls": calls, "finished": True}))
                verdict = judge(exercise, outcome, untouched=False, python_mb=256)
                assert verdict.points == said_points(page[0]), (number, kind, code, page[0], verdict)
                with_hidden = judge(exercise, outcome, untouched=False, python_mb=256, hidden=hidden)
                assert with_hidden.hidden == [1, 2], with_hidden
                # The hidden cases count one share each: the weighted share of the check's cases, plus them.
                weights = book_shape.exercises()[number].weights
                shares = [(line.startswith("  ok"), weights.get(harness.case_name(line), 1)) for line in page[1:]
                          if harness.case_name(line) is not None]
                passed, total = sum(w for ok, w in shares if ok) + 1, sum(w for _, w in shares) + 2
                assert with_hidden.points == round(exercise.points * passed / total, 2), (number, kind, page)
                if any(not ok and w != 1 for ok, w in shares) and any(ok for ok, _ in shares):
                    weighed_and_failed += 1
                    assert verdict.points != points_for(sum(ok for ok, _ in shares), len(shares), exercise.points)
    assert weighed_and_failed, "no answer of the grader's test class failed a weighed case of the book and passed another"
