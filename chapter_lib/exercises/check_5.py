"""Reader check for exercise 5: the rank-then-filter variant the exercise asks for.

Ours, hand-written (not generated from the page): the cases a reader's function must
pass. Its test data comes from the worked solution's module (generated from the page's
``# @solution 5`` cells): the one-in-ten corpus. What the function should return is
worked out here from the chapter's own :func:`search`, not from the worked solution.

Exercise 5 asks the reader to build a search that ranks every document and only then
drops what the caller may not read, and to compare it with the chapter's ``search``,
which filters first. So the check is about that variant: it fails on the chapter's
``search`` (which fills every slot with authorized documents) and on the start cell's
stub, and passes on a rank-then-filter that scores as ``search`` does.
"""

from __future__ import annotations

from chapter_lib.chapter15 import questions, search
from chapter_lib.exercises.harness import report, run_case
from chapter_lib.exercises.solution_5 import one_in_ten_corpus

__all__ = ["check_rank_then_filter"]

DEPTHS = (1, 3, 10, 90)


def check_rank_then_filter(rank_then_filter_fn):
    """Reader check for exercise 5: rank every document, keep the top ``k``, then filter.

    Passes on a rank-then-filter variant with the chapter's score and tiebreak; fails on
    the chapter's :func:`search`, which filters before it ranks (on a corpus where one
    document in ten is authorized, the variant returns short lists where ``search``
    returns full ones: that gap is what the exercise measures).

    Args:
        rank_then_filter_fn: ``rank_then_filter_fn(docs, query, groups, k=3)`` returning
            documents.

    Prints its verdict first, then one line per failing case (see
    :func:`chapter_lib.exercises.harness.report`); returns nothing.
    """
    docs = one_in_ten_corpus()
    qs = questions()
    everyone = frozenset().union(*(d.groups for d in docs))  # a caller who may read every document

    def ranked_then_filtered(text, groups, k):
        # The chapter's ranking over every document (as seen by a caller who may read all
        # of them), cut at k, and only then the caller's filter.
        return [d.id for d in search(docs, text, everyone, k=k) if d.groups & groups]

    def ids(text, groups, k):
        return [d.id for d in rank_then_filter_fn(docs, text, groups, k=k)]

    def never_unauthorized():
        for _, text, groups, *_ in qs:
            for k in DEPTHS:
                readable = {d.id for d in docs if d.groups & groups}
                bad = [i for i in ids(text, groups, k) if i not in readable]
                if bad:
                    return False, f"returned {bad}, which the caller may not read, for {text!r} at k={k}"
        return True, "no unauthorized document is ever returned"

    def same_ranking():
        for _, text, _groups, *_ in qs:
            for k in DEPTHS:
                want, got = [d.id for d in search(docs, text, everyone, k=k)], ids(text, everyone, k)
                if got != want:
                    return False, (f"for a caller who may read everything, {text!r} at k={k} gives {got}; "
                                   f"the chapter's score and id tiebreak give {want}")
        return True, "for a caller who may read everything it ranks exactly as search does"

    def ranks_before_filtering():
        for _, text, groups, *_ in qs:
            for k in DEPTHS:
                want, got = ranked_then_filtered(text, groups, k), ids(text, groups, k)
                if got != want:
                    short = " (it filtered first: authorized documents from below the top k filled the slots)" if len(got) > len(want) else ""
                    return False, (f"for {text!r} at k={k} it returns {got}; ranking all {len(docs)} documents, "
                                   f"keeping the top {k} and then dropping what the caller may not read "
                                   f"leaves {want}{short}")
        return True, "the top k of all documents, then only what the caller may read"

    cases = [
        ("never returns an unauthorized document", never_unauthorized),
        ("the chapter's score and tiebreak", same_ranking),
        ("ranks every document, then filters", ranks_before_filtering),
    ]
    report(5, "check_rank_then_filter", [run_case(n, c) for n, c in cases])
