"""Reader check for exercise 6: labels, dispatch accuracy, and calls saved.

Ours, hand-written (not generated from the page): the cases a reader's function must
pass. Its test data comes from the fixtures and, where the exercise builds it, from the
worked solution's module (generated from the page's ``# @solution 6`` cells).
"""

from __future__ import annotations

from chapter_lib.chapter15 import corpus, questions
from chapter_lib.exercises.common import FINANCE, question
from chapter_lib.exercises.harness import report, run_case
from chapter_lib.exercises.solution_6 import GOLD_ROUTES, ROUTES, always_agentic, dispatch, evaluate_router, outcome

__all__ = ["check_router"]


def check_router(router_fn):
    """Reader check for exercise 6: labels, dispatch accuracy, and calls saved.

    Args:
        router_fn: ``router_fn(text, groups)`` returning ``direct``, ``multi_hop``
            or ``restricted``.

    Prints its verdict first, then one line per failing case (see
    :func:`chapter_lib.exercises.harness.report`); returns nothing.
    """
    docs = corpus()
    baseline = evaluate_router(always_agentic, docs)
    baseline_calls = sum(r.calls for r in baseline)

    def label_case(q):
        qid, text, groups, *_ = q

        def case():
            got = router_fn(text, groups)
            want = GOLD_ROUTES[qid]
            if got == want:
                return True, f"{text!r} -> {got}"
            if got not in ROUTES:
                return False, f"{text!r} -> {got!r}, which is not one of {ROUTES}"
            _, _, _, start, goal, expected = q
            right = dispatch(want, docs, text, groups, start, goal)
            wrong = dispatch(got, docs, text, groups, start, goal)
            extra = wrong.searches - right.searches
            return False, (f"{text!r} -> {got!r}, should be {want!r} (dispatched as {got!r} "
                           f"it spends {extra:+d} search call(s) against the intended route, "
                           f"and the answer is {outcome(wrong.answer, expected)})")
        return case

    def caller_groups_matter():
        _, text, *_ = question("q6")
        got = router_fn(text, FINANCE)
        if got == "restricted":
            return False, ("a finance caller's budget question is labeled 'restricted': "
                           "the caller's groups were ignored")
        answer = dispatch(got, docs, text, FINANCE, "Falcon", "budget").answer
        return (answer == "twelve million dollars",
                f"a finance caller's budget question -> {got}, answer {answer!r}")

    def accuracy():
        rows = evaluate_router(router_fn, docs)
        wrong = [f"{r.qid} ({r.label}: {r.answer!r})" for r in rows if not r.ok]
        if wrong:
            right = len(rows) - len(wrong)
            return False, f"after dispatch {right}/{len(rows)} correct; wrong: {', '.join(wrong)}"
        return True, f"after dispatch {len(rows)}/{len(rows)} correct, as always-agentic"

    def cheaper():
        calls = sum(r.calls for r in evaluate_router(router_fn, docs))
        return (calls < baseline_calls,
                f"{calls} search calls in total against always-agentic's {baseline_calls}")

    cases = [(f"{q[0]} is {GOLD_ROUTES[q[0]]}", label_case(q)) for q in questions()]
    cases += [
        ("caller groups decide 'restricted'", caller_groups_matter),
        ("as accurate as always-agentic", accuracy),
        ("fewer calls than always-agentic", cheaper),
    ]
    report(6, "check_router", [run_case(n, c) for n, c in cases])
