"""Reader check for exercise 5: authorization must come before ranking.

Ours, hand-written (not generated from the page): the cases a reader's function must
pass. Its test data comes from the fixtures and, where the exercise builds it, from the
worked solution's module (generated from the page's ``# @solution 5`` cells).
"""

from __future__ import annotations

from chapter_lib.chapter15 import questions, search
from chapter_lib.exercises.common import report, run_case
from chapter_lib.exercises.solution_5 import authorized_relevant, one_in_ten_corpus

__all__ = ["check_filter_before_ranking"]


def check_filter_before_ranking(search_fn):
    """Reader check for exercise 5: authorization must come before ranking.

    Passes on the chapter's :func:`search` (which filters first) and fails on a
    rank-then-filter variant: on a corpus where one document in ten is authorized,
    the latter returns near-empty result lists at a fixed depth.

    Args:
        search_fn: ``search_fn(docs, query, groups, k=3)`` returning documents.

    Prints its verdict first, then one line per failing case (see
    :func:`chapter_lib.exercises.common.report`); returns nothing.
    """
    docs = one_in_ten_corpus()
    qs = questions()

    def never_unauthorized():
        for _, text, groups, *_ in qs:
            for k in (1, 3, 10):
                bad = [d.id for d in search_fn(docs, text, groups, k=k) if not d.groups & groups]
                if bad:
                    return False, (f"returned {bad}, which the caller may not read, "
                                   f"for {text!r} at k={k}")
        return True, "no unauthorized document is ever returned"

    def fills_depth():
        for _, text, groups, *_ in qs:
            want = min(3, len(authorized_relevant(docs, text, groups)))
            got = [d.id for d in search_fn(docs, text, groups, k=3)]
            if len(got) < want:
                return False, (f"for {text!r} at k=3 it returns {len(got)} document(s) {got} "
                               f"although {want} authorized matches exist: unauthorized "
                               f"documents took the slots")
        return True, "at k=3 every question gets min(3, authorized matches) results"

    def best_authorized():
        for _, text, groups, *_ in qs:
            authorized = tuple(d for d in docs if d.groups & groups)
            want = [d.id for d in search(authorized, text, groups, k=3)]
            got = [d.id for d in search_fn(docs, text, groups, k=3)]
            if got != want:
                return False, f"for {text!r} it returns {got}; the best 3 authorized are {want}"
        return True, "the results are the top-ranked authorized documents, in order"

    cases = [
        ("never returns an unauthorized document", never_unauthorized),
        ("a fixed depth is filled with authorized results", fills_depth),
        ("the best authorized documents, in ranking order", best_authorized),
    ]
    report(5, "check_filter_before_ranking", [run_case(n, c) for n, c in cases])
