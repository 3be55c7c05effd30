"""Reader check for exercise 4: one mislabeled trust flag no longer decides the answer.

Ours, hand-written (not generated from the page): the cases a reader's function must
pass. Its test data comes from the fixtures and, where the exercise builds it, from the
worked solution's module (generated from the page's ``# @solution 4`` cells).
"""

from __future__ import annotations

from chapter_lib.exercises.common import AURORA_REGION_QUERY, ENG
from chapter_lib.exercises.fixtures import SourcedDoc, poisoned_corpus, sourced_corpus, with_trust
from chapter_lib.exercises.harness import report, run_case

__all__ = ["check_second_control"]


def _regions(result):
    _, facts = result
    return sorted({region for region, _ in (facts or [])})


def check_second_control(agent_fn):
    """Reader check for exercise 4: one mislabeled trust flag no longer decides.

    Args:
        agent_fn: ``agent_fn(docs, query, groups, k=3)`` returning
            ``(blocked_ids, region_facts)`` like the chapter's ``hardened_agent``.
            Documents are :class:`SourcedDoc` copies, so ``doc.uri`` is available.

    Prints its verdict first, then one line per failing case (see
    :func:`chapter_lib.exercises.harness.report`); returns nothing.
    """
    q = AURORA_REGION_QUERY
    clean = sourced_corpus()
    wrong_wiki = SourcedDoc("w04", "Aurora runs in region eu-central-1.", ENG, False,
                            uri="https://wiki.corp.example/aurora/draft", updated="2026-05-01")

    def regions_are(docs, k, want, label):
        got = _regions(agent_fn(docs, q, ENG, k=k))
        ok = got == want
        why = f"{label}: region facts {got}"
        if not ok and "attacker-zone" in got:
            why += " - the poisoned fact got through"
        elif not ok:
            why += f", expected {want}"
        return ok, why

    def any_single_flag():
        for d in clean:
            flipped = with_trust(clean, d.id, not d.trusted)
            got = _regions(agent_fn(flipped, q, ENG, k=3))
            if any(region != "us-east-2" for region in got):
                return False, (f"flipping only {d.id}'s trusted flag (to {not d.trusted}) "
                               f"puts {got} in the region facts")
        return True, "no single flipped trust flag puts a wrong region in the facts"

    cases = [
        ("clean corpus", lambda: regions_are(clean, 3, ["us-east-2"], "as in Section 15.9")),
        ("d10 marked trusted", lambda: regions_are(poisoned_corpus(), 3, ["us-east-2"],
                                                   "with d10 trusted")),
        ("d10 marked trusted, deeper retrieval", lambda: regions_are(
            poisoned_corpus(), 5, ["us-east-2"], "with d10 trusted and k=5")),
        ("any single mislabeled flag", any_single_flag),
        ("the trust gate still applies", lambda: regions_are(
            clean + (wrong_wiki,), 4, ["us-east-2"],
            "an untrusted draft on the allowlisted wiki (eu-central-1) is still not evidence")),
    ]
    report(4, "check_second_control", [run_case(n, c) for n, c in cases])
