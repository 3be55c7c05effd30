"""Reader check for exercise 3: a ``conflict`` verdict and a resolution that ignores document order.

Ours, hand-written (not generated from the page): the cases a reader's function must
pass. Its test data comes from the fixtures and, where the exercise builds it, from the
worked solution's module (generated from the page's ``# @solution 3`` cells).
"""

from __future__ import annotations

import itertools

from chapter_lib.chapter15 import corpus
from chapter_lib.exercises.common import AURORA_REGION_QUERY, ENG
from chapter_lib.exercises.harness import report, run_case
from chapter_lib.exercises.fixtures import CORPUS_SOURCES, SourcedDoc, sourced
from chapter_lib.exercises.solution_3 import CONFLICTING_DOC

__all__ = ["check_conflict_policy"]


def _triple_of(result):
    """``(action, triple)`` as the check compares outcomes, the same under any PYTHONHASHSEED.

    A ``conflict`` verdict or an ``escalate`` resolution names its candidates in whatever
    order the reader's code keeps them, and the order of a set changes with the hash seed
    (hint 1 suggests a set): candidates are compared sorted. A single triple there (one
    side of the conflict, picked as the set happened to list it) means nothing yet, so it
    is not compared at all; a ``cite`` is compared exactly.
    """
    action, triple = getattr(result, "action", None), getattr(result, "triple", None)
    if action in ("conflict", "escalate"):
        many = isinstance(triple, (list, tuple, set, frozenset)) and all(isinstance(t, tuple) for t in triple)
        return action, tuple(sorted(triple)) if many and triple else None
    return action, triple


def check_conflict_policy(assess_fn, resolve_fn):
    """Reader check for exercise 3: a ``conflict`` action and an order-free resolution.

    Args:
        assess_fn: ``assess_fn(passages, query, subject, relation)`` returning a
            :class:`Verdict` (or anything with ``action`` and ``triple``).
        resolve_fn: ``resolve_fn(verdict, passages)`` returning something with
            ``action`` (``cite`` or ``escalate``) and, for ``cite``, ``triple``.

    Prints its verdict first, then one line per failing case (see
    :func:`chapter_lib.exercises.harness.report`); returns nothing.
    """
    q, subject, relation = AURORA_REGION_QUERY, "Aurora", "region"
    cmdb = sourced(corpus()[2], *CORPUS_SOURCES["d03"])  # d03: us-east-2, from the CMDB
    wiki_new = CONFLICTING_DOC  # d12: eu-central-1, wiki, 2026-04-20
    wiki_copy = SourcedDoc("w01", "Aurora runs in region us-east-2.", ENG, True,
                           uri="https://wiki.corp.example/aurora", updated="2026-02-01")
    wiki_old = SourcedDoc("w02", "Aurora runs in region ap-south-1.", ENG, True,
                          uri="https://wiki.corp.example/aurora/history", updated="2024-08-30")
    wiki_same_day = SourcedDoc("w03", "Aurora runs in region sa-east-1.", ENG, True,
                               uri="https://wiki.corp.example/aurora/dr", updated="2026-04-20")
    east, central = ("Aurora", "region", "us-east-2"), ("Aurora", "region", "eu-central-1")
    conflict_sets = {
        "CMDB against newer wiki": [cmdb, wiki_new],
        "two wiki pages of different dates": [wiki_new, wiki_old],
        "two wiki pages of the same date": [wiki_new, wiki_same_day],
    }

    def grade(passages):
        return assess_fn(list(passages), q, subject, relation)

    def single():
        v = grade([cmdb])
        return (v.action == "cite" and v.triple == east,
                f"one supported passage gives action {v.action!r}, triple {v.triple}")

    def agree():
        v = grade([cmdb, wiki_copy])
        return (v.action == "cite" and v.triple == east,
                f"two passages both saying us-east-2 give {v.action!r} "
                f"(agreement is not a conflict)")

    def disagree():
        v = grade([cmdb, wiki_new])
        if v.action == "conflict":
            return True, "us-east-2 (d03) against eu-central-1 (d12) gives 'conflict'"
        return False, (f"us-east-2 (d03) against eu-central-1 (d12) gives {v.action!r} with "
                       f"{v.triple}: one side was picked instead of flagging the disagreement")

    def order_free_verdict():
        a, b = grade([cmdb, wiki_new]), grade([wiki_new, cmdb])
        if _triple_of(a) == _triple_of(b):
            return True, "the verdict is the same whichever passage comes first"
        return False, (f"the verdict depends on passage order: d03 first gives "
                       f"{_triple_of(a)}, d12 first gives {_triple_of(b)}")

    def unsupported():
        falcon_q = "Which region is Project Falcon in?"
        v = assess_fn([corpus()[4], corpus()[6]], falcon_q, "Falcon", "region")
        return (v.action not in ("cite", "conflict"),
                f"passages that state no Falcon region give {v.action!r}")

    def resolutions(name):
        passages = conflict_sets[name]
        outcomes = {}
        for order in itertools.permutations(passages):
            verdict = grade(order)
            if verdict.action != "conflict":
                return None, (f"could not run: assess_fn gave {verdict.action!r} "
                              f"instead of 'conflict'")
            outcomes[tuple(d.id for d in order)] = _triple_of(resolve_fn(verdict, list(order)))
        return outcomes, ""

    def order_free_resolution():
        for name in conflict_sets:
            outcomes, why = resolutions(name)
            if outcomes is None:
                return False, why
            if len(set(outcomes.values())) > 1:
                shown = "; ".join(f"order {'/'.join(k)} -> {v}" for k, v in outcomes.items())
                return False, f"{name}: the resolution falls back to document order ({shown})"
        return True, "every conflict resolves the same way in every passage order"

    def picks_a_candidate():
        outcomes, why = resolutions("CMDB against newer wiki")
        if outcomes is None:
            return False, why
        action, triple = next(iter(outcomes.values()))
        ok = action == "escalate" or (action == "cite" and triple in (east, central))
        shown = f" {triple}" if action == "cite" else ""
        return ok, f"CMDB against newer wiki resolves to {action!r}{shown}"

    def full_tie_escalates():
        outcomes, why = resolutions("two wiki pages of the same date")
        if outcomes is None:
            return False, why
        action, triple = next(iter(outcomes.values()))
        if action == "escalate":
            return True, "same source class, same date: escalates instead of guessing"
        return False, (f"same source class and same date, yet it gives {action!r} {triple}: "
                       f"nothing but order or id can have chosen it")

    cases = [
        ("one supported passage cites", single),
        ("agreeing passages cite", agree),
        ("disagreeing passages give 'conflict'", disagree),
        ("the verdict ignores passage order", order_free_verdict),
        ("no support is not a citation", unsupported),
        ("the resolution ignores passage order", order_free_resolution),
        ("a resolution cites a candidate or escalates", picks_a_candidate),
        ("a full tie escalates", full_tie_escalates),
    ]
    report(3, "check_conflict_policy", [run_case(n, c) for n, c in cases])
