"""Worked solutions and reader checks for Section 15.11, Exercises.

OURS, NOT THE CHAPTER'S. This module is hand-written for the exercise page
(``book/15_11_exercises.md``) and its tests (``tests/test_exercises.py``). It is NOT
generated: ``make lib`` writes only ``chapter15.py`` and never touches this file.
Nothing here is the chapter's code; the chapter's code is imported from
:mod:`chapter_lib.chapter15` and never changed. Every solution extends a *copy* (of the
corpus, of the question set, or of a function's globals, see :func:`chapter_code_with`),
so every other page prints exactly what the chapter printed.

Reader checks
-------------
Exercises 3 to 6 ask for code. Each has a check a reader can call on their own
function: :func:`check_conflict_policy` (3), :func:`check_second_control` (4),
:func:`check_filter_before_ranking` (5) and :func:`check_router` (6). All four follow
one convention:

* a check runs every one of its cases, even after one has failed;
* when every case passes it prints one ``ok`` line per case and returns ``None``;
* when any case fails it raises ``AssertionError``; the message lists every case,
  marks the failing ones ``FAIL`` and says in plain words what went wrong.

An exception raised by the reader's function inside a case fails that case, and the
message names the exception.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
import types
from dataclasses import dataclass

from chapter_lib import chapter15
from chapter_lib.chapter15 import (
    CUES,
    Doc,
    Result,
    Verdict,
    agentic,
    assess,
    build_graph,
    corpus,
    extract_facts,
    local_search,
    one_shot,
    questions,
    score,
    search,
    token_count,
    tokenize,
)

ENG = frozenset({"engineering"})
FINANCE = frozenset({"finance"})
AURORA_REGION_QUERY = "What region does Aurora run in?"  # the attack question of Section 15.9


# --------------------------------------------------------------------------
# Shared: checks, copies of the chapter's code, showing source
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    """One case of a reader check: its name, whether it passed, and why."""

    name: str
    ok: bool
    why: str


def _run_case(name, case):
    """Run ``case()`` -> ``(ok, why)``; an exception fails the case and is named."""
    try:
        ok, why = case()
    except Exception as err:  # the reader's function may raise anything
        return CaseResult(name, False, f"raised {type(err).__name__}: {err}")
    return CaseResult(name, bool(ok), why)


def _report(check_name: str, results: list[CaseResult]) -> None:
    """Print the verdict when every case passed; otherwise raise it (the convention)."""
    lines = [f"  {'ok  ' if r.ok else 'FAIL'} {r.name}: {r.why}" for r in results]
    failed = [r for r in results if not r.ok]
    if failed:
        head = f"{check_name}: {len(failed)} of {len(results)} cases fail"
        raise AssertionError("\n".join([head] + lines))
    print("\n".join([f"{check_name}: all {len(results)} cases pass"] + lines))


def chapter_code_with(**overrides) -> types.SimpleNamespace:
    """The chapter's functions, line for line, bound to a copy of their globals.

    Every function of :mod:`chapter_lib.chapter15` is re-created from its own code
    object over a *copy* of the module's globals in which ``overrides`` replace some
    names (a longer ``CUES`` table, another ``_is_entity``, a recording ``search``).
    Functions that call each other call the copies, so the override reaches the whole
    chain (``agentic`` -> ``facts_from`` -> ``extract_facts`` -> ``CUES``). The
    chapter's module is not touched: other pages and later cells see the original.

    Returns:
        A namespace holding every name of the chapter module, copies for functions.
    """
    original = vars(chapter15)
    namespace = dict(original)
    namespace.update(overrides)
    for name, value in original.items():
        if name in overrides or not isinstance(value, types.FunctionType):
            continue
        if value.__globals__ is not original:
            continue
        copy = types.FunctionType(value.__code__, namespace, value.__name__,
                                  value.__defaults__, value.__closure__)
        copy.__kwdefaults__ = value.__kwdefaults__
        copy.__doc__ = value.__doc__
        namespace[name] = copy
    return types.SimpleNamespace(**namespace)


def show_source(*objects):
    """Display the source of our solution functions as a highlighted Python block."""
    from IPython.display import Markdown

    code = "\n\n".join(inspect.getsource(obj).rstrip() for obj in objects)
    return Markdown(f"```python\n{code}\n```")


def _table(header, rows):
    """A fixed-width text table (deterministic, so nbval can compare it)."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for number, row in enumerate(cells):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if number == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def print_table(header, rows):
    """Print rows under a header as a fixed-width text table."""
    print(_table(header, rows))


# --------------------------------------------------------------------------
# Exercise 1: the traces side by side
# --------------------------------------------------------------------------


def question(qid, qs=None):
    """The ``(id, text, groups, start, goal, expected)`` tuple of one question."""
    return next(q for q in (qs or questions()) if q[0] == qid)


def provenance_path(docs, q):
    """Ids of the documents on the answer's citation path (graph walk of Section 15.6)."""
    _, _, groups, start, goal, _ = q
    _, path = local_search(build_graph(docs, groups), start, goal)
    return [did for (_, _, _, did) in path]


def smallest_answering_k(docs, q, ks=range(1, 11)):
    """The smallest one-shot ``k`` that answers ``q`` correctly, or None."""
    _, text, groups, start, goal, expected = q
    for k in ks:
        answer = one_shot(docs, text, groups, start, goal, k=k).answer
        if expected is not None and score(answer, expected):
            return k
    return None


def context_breakdown(docs, q, k):
    """What one-shot at depth ``k`` drags into context: chain documents and distractors."""
    _, text, groups, *_ = q
    hits = [d.id for d in search(docs, text, groups, k=k)]
    chain = provenance_path(docs, q)
    return {
        "retrieved": hits,
        "chain": [d for d in hits if d in chain],
        "missing": [d for d in chain if d not in hits],
        "distractors": [d for d in hits if d not in chain],
    }


def overlap_scores(docs, text, groups):
    """Each authorized document's token-overlap score for a query (search's sort key)."""
    q = set(tokenize(text))
    return {d.id: sum(1 for t in tokenize(d.text) if t in q) for d in docs if d.groups & groups}


# --------------------------------------------------------------------------
# Exercise 2: move the knee
# --------------------------------------------------------------------------

# Every relation the chapter's reader knows is already asked about from Falcon by
# q1..q6, and a question is identified by its (start, goal) pair. A four-hop question
# from Falcon therefore needs a relation of its own, and the stub reader needs a cue.
FAILOVER_CUE = ("fails over to", "failover")
FOUR_HOP_DOC = Doc("d11", "us-east-2 fails over to us-west-2.", ENG)
FOUR_HOP_QUESTION = ("q7", "Which region does Falcon's telemetry fail over to?", ENG,
                     "Falcon", "failover", "us-west-2")
ONE_HOP_IDS = ("q1", "q2", "q4")  # the one-hop lookups of questions()


def four_hop_corpus():
    """A copy of the corpus with d11, the hop beyond us-east-2."""
    return corpus() + (FOUR_HOP_DOC,)


def four_hop_questions():
    """A copy of the question set with q7, a four-hop question."""
    return questions() + (FOUR_HOP_QUESTION,)


def one_hop_questions():
    """Only the one-hop lookups of questions()."""
    return tuple(q for q in questions() if q[0] in ONE_HOP_IDS)


def four_hop_code():
    """The chapter's code, unchanged, reading with one more cue: ``fails over to``."""
    return chapter_code_with(CUES=CUES + (FAILOVER_CUE,))


def is_single_token(name):
    """A looser entity test than the chapter's ``_is_entity``: any one-token name.

    The chapter's test also asks for a capital first letter, which lower-case
    identifiers such as ``us-east-2`` never have.
    """
    return len(name.split()) == 1


def four_hop_code_any_token():
    """As :func:`four_hop_code`, and the loop also queues lower-case identifiers."""
    return chapter_code_with(CUES=CUES + (FAILOVER_CUE,), _is_entity=is_single_token)


@dataclass(frozen=True)
class SweepPoint:
    budget: int
    correct: int
    questions: int
    calls: int

    @property
    def accuracy(self):
        return self.correct / self.questions

    @property
    def mean_calls(self):
        return self.calls / self.questions


def budget_sweep(agentic_fn, docs, qs, budgets=range(1, 7)):
    """Section 15.4's budget sweep for any loop, corpus and question set."""
    points = []
    for budget in budgets:
        correct = calls = 0
        for _, text, groups, start, goal, expected in qs:
            r = agentic_fn(docs, text, groups, start, goal, budget=budget)
            correct += score(r.answer, expected)
            calls += r.searches
        points.append(SweepPoint(budget, correct, len(qs), calls))
    return points


def knee(points):
    """The smallest budget at which accuracy reaches its maximum over the sweep."""
    best = max(p.correct for p in points)
    return min(p.budget for p in points if p.correct == best)


# --------------------------------------------------------------------------
# Provenance for exercises 3 and 4: a Doc that also says where it came from
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SourcedDoc(Doc):
    """A chapter :class:`Doc` plus where its text came from and when it was updated.

    ``uri`` names the source system; ``updated`` is an ISO date. The chapter's
    functions accept it anywhere they accept a Doc.
    """

    uri: str = ""
    updated: str = ""


# Where each chapter document came from (ours: the chapter's Doc has no such fields).
CORPUS_SOURCES = {
    "d01": ("cmdb://projects/falcon", "2025-09-12"),
    "d02": ("cmdb://systems/atlas", "2025-10-01"),
    "d03": ("cmdb://systems/aurora", "2025-11-03"),
    "d04": ("https://wiki.corp.example/falcon/release", "2026-01-15"),
    "d05": ("https://wiki.corp.example/falcon/dashboard", "2026-02-02"),
    "d06": ("https://wiki.corp.example/telemetry/deprecations", "2024-05-20"),
    "d07": ("https://wiki.corp.example/falcon/reviews", "2026-03-06"),
    "d08": ("https://wiki.corp.example/globex/codenames", "2025-07-14"),
    "d09": ("https://finance.corp.example/budgets/falcon", "2026-01-05"),
    "d10": ("upload://inbox/note-4411.txt", "2026-06-30"),
}
# Sources whose text may vouch for a fact (exercise 4), highest precedence first
# (exercise 3): the CMDB is the system of record, the wiki is edited by hand.
ALLOWLIST = ("cmdb://", "https://wiki.corp.example/")
SOURCE_PRECEDENCE = {"cmdb://": 2, "https://wiki.corp.example/": 1}


def sourced(doc, uri, updated, **changes):
    """A :class:`SourcedDoc` copy of a chapter doc (optionally with fields changed)."""
    fields = {f.name: getattr(doc, f.name) for f in dataclasses.fields(Doc)}
    fields.update(changes)
    return SourcedDoc(**fields, uri=uri, updated=updated)


def sourced_corpus(docs=None):
    """A copy of the corpus in which every document carries its source URI and date."""
    return tuple(sourced(d, *CORPUS_SOURCES[d.id]) for d in (docs or corpus()))


def with_trust(docs, doc_id, trusted):
    """A copy of ``docs`` with one document's ``trusted`` flag set to ``trusted``."""
    return tuple(dataclasses.replace(d, trusted=trusted) if d.id == doc_id else d for d in docs)


# --------------------------------------------------------------------------
# Exercise 3: strengthen the evidence gate
# --------------------------------------------------------------------------

CONFLICTING_DOC = SourcedDoc(
    "d12", "Aurora runs in region eu-central-1.", ENG, True,
    uri="https://wiki.corp.example/aurora/migration-plan", updated="2026-04-20")


def conflict_corpus():
    """A copy of the sourced corpus with d12: a second trusted region for Aurora."""
    return sourced_corpus() + (CONFLICTING_DOC,)


def assess_passages(passages, query, subject, relation):
    """Grade retrieved passages together; disagreement is ``conflict``, not ``cite``.

    Each passage is graded by the chapter's own :func:`assess`. If the supported
    triples all agree the verdict cites them (every supporting passage is named);
    if they disagree the action is ``conflict`` and ``triple`` holds every distinct
    candidate. The verdict is computed from sets, so it is the same for every order
    of ``passages``.

    Returns:
        A chapter :class:`Verdict`; ``passage`` is the comma-joined ids it rests on.
    """
    verdicts = [assess(d, query, subject, relation) for d in passages]
    supported = [v for v in verdicts if v.action == "cite"]
    if not supported:
        relevant = any(v.relevant for v in verdicts)
        ids = ",".join(sorted(v.passage for v in verdicts))
        return Verdict(ids, relevant, False, None, "reformulate" if relevant else "discard")
    ids = ",".join(sorted(v.passage for v in supported))
    relevant = any(v.relevant for v in supported)
    candidates = sorted({v.triple for v in supported})
    if len(candidates) == 1:
        return Verdict(ids, relevant, True, candidates[0], "cite")
    return Verdict(ids, relevant, True, tuple(candidates), "conflict")


@dataclass(frozen=True)
class Resolution:
    """How a conflict was settled: ``cite`` one triple, or ``escalate`` to a person."""

    action: str
    triple: object
    passage: str
    reason: str


def source_rank(doc, precedence=SOURCE_PRECEDENCE):
    """The precedence of a document's source (0 when unknown or unsourced)."""
    uri = getattr(doc, "uri", "")
    ranks = [rank for prefix, rank in precedence.items() if uri.startswith(prefix)]
    return max(ranks, default=0)


def resolve_conflict(verdict, passages, precedence=SOURCE_PRECEDENCE):
    """Settle a ``conflict`` verdict: source precedence, then freshness, else escalate.

    1. Source precedence: the candidate backed by the highest-ranked source wins
       (the CMDB, the system of record, outranks the hand-edited wiki).
    2. Freshness, only among candidates tied on precedence: the most recently
       updated source wins.
    3. Escalation: if candidates are still tied, nothing here can tell them apart,
       so no answer is cited. Document order and document ids are never consulted.

    Returns:
        A :class:`Resolution`; non-conflict verdicts pass through as they are.
    """
    if verdict.action != "conflict":
        return Resolution(verdict.action, verdict.triple, verdict.passage, "no conflict")
    support = {}
    for d in passages:
        for triple in extract_facts(d):
            if triple in verdict.triple:
                support.setdefault(triple, []).append(d)

    def best(triple, key):
        return max(key(d) for d in support[triple])

    tied = sorted(support)
    for rule, key in (("source precedence", lambda d: source_rank(d, precedence)),
                      ("freshness", lambda d: getattr(d, "updated", ""))):
        top = max(best(t, key) for t in tied)
        winners = [t for t in tied if best(t, key) == top]
        if len(winners) == 1:
            (winner,) = winners
            ids = ",".join(sorted(d.id for d in support[winner] if key(d) == top))
            return Resolution("cite", winner, ids, rule)
        tied = winners
    ids = ",".join(sorted(d.id for t in tied for d in support[t]))
    return Resolution("escalate", tuple(tied), ids, "tied on precedence and freshness")


def assess_in_document_order(passages, query, subject, relation):
    """The chapter's ``assess``, unmodified, applied passage by passage in retrieval order.

    The first passage it grades ``cite`` wins, which is what the loop does with
    ``table[(entity, goal)][0]``. This is the baseline exercise 3 asks to replace.
    """
    verdicts = [assess(d, query, subject, relation) for d in passages]
    return next((v for v in verdicts if v.action == "cite"), verdicts[0])


def first_in_document_order(verdict, passages):
    """A 'policy' that settles a conflict by citing whichever passage came first."""
    for d in passages:
        for triple in extract_facts(d):
            if verdict.action == "conflict" and triple in verdict.triple:
                return Resolution("cite", triple, d.id, "document order")
    return Resolution(verdict.action, verdict.triple, verdict.passage, "no conflict")


def _triple_of(result):
    return (getattr(result, "action", None), getattr(result, "triple", None))


def check_conflict_policy(assess_fn, resolve_fn):
    """Reader check for exercise 3: a ``conflict`` action and an order-free resolution.

    Args:
        assess_fn: ``assess_fn(passages, query, subject, relation)`` returning a
            :class:`Verdict` (or anything with ``action`` and ``triple``).
        resolve_fn: ``resolve_fn(verdict, passages)`` returning something with
            ``action`` (``cite`` or ``escalate``) and, for ``cite``, ``triple``.

    Raises:
        AssertionError: naming every failing case (see the module's convention).
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
    _report("check_conflict_policy", [_run_case(n, c) for n, c in cases])


# --------------------------------------------------------------------------
# Exercise 4: poison the graph
# --------------------------------------------------------------------------


def poisoned_corpus():
    """A copy of the sourced corpus in which d10 is (wrongly) marked trusted."""
    return with_trust(sourced_corpus(), "d10", True)


def on_allowlist(doc, allowlist=ALLOWLIST):
    """Whether a document's source URI starts with an allowlisted prefix."""
    return any(getattr(doc, "uri", "").startswith(prefix) for prefix in allowlist)


def support_span(doc, triple):
    """The sentence of ``doc`` from which the reader extracts ``triple`` (or None)."""
    for sentence in re.split(r"[.\n]", doc.text):
        if triple in extract_facts(Doc(doc.id, sentence, doc.groups)):
            return sentence.strip()
    return None


def hardened_agent_two_controls(docs, query, groups, k=3, allowlist=ALLOWLIST):
    """The hardened agent plus a second, independent control on every region fact.

    Control 1 is the chapter's integrity gate: untrusted documents are dropped.
    Control 2 asks where the words come from: a fact counts only if the sentence
    that states it occurs verbatim in a retrieved document whose source URI is on
    the allowlist. A wrong trust flag on an upload therefore no longer makes its
    claim evidence: nothing on the allowlist says it.

    Returns:
        ``(blocked_ids, region_facts)``, the same shape as ``hardened_agent``.
    """
    hits = search(docs, query, groups, k=k)
    admitted = [d for d in hits if d.trusted]
    blocked = [d.id for d in hits if not d.trusted]
    vouching = [d.text for d in hits if on_allowlist(d, allowlist)]
    region_facts = []
    for d in admitted:
        for triple in extract_facts(d):
            if triple[:2] != ("Aurora", "region"):
                continue
            span = support_span(d, triple)
            if any(span in text for text in vouching):
                region_facts.append((triple[2], d.id))
            elif d.id not in blocked:
                blocked.append(d.id)
    return blocked, region_facts or None


def _regions(result):
    _, facts = result
    return sorted({region for region, _ in (facts or [])})


def check_second_control(agent_fn):
    """Reader check for exercise 4: one mislabeled trust flag no longer decides.

    Args:
        agent_fn: ``agent_fn(docs, query, groups, k=3)`` returning
            ``(blocked_ids, region_facts)`` like the chapter's ``hardened_agent``.
            Documents are :class:`SourcedDoc` copies, so ``doc.uri`` is available.

    Raises:
        AssertionError: naming every failing case (see the module's convention).
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
    _report("check_second_control", [_run_case(n, c) for n, c in cases])


# --------------------------------------------------------------------------
# Exercise 5: an access-control recall failure
# --------------------------------------------------------------------------

OTHER_UNITS = ("Finance", "Legal", "Sales", "People", "Marketing")
# What other departments write: some about the same project in the same words, most
# about their own business. Sixteen kinds of note, five departments: 80 documents.
OTHER_TEMPLATES = (
    "{unit} note {n}: Project Falcon costs for the {unit} review.",
    "{unit} memo {n}: who owns the Falcon release gate?",
    "{unit} ticket {n}: what does Falcon depend on?",
    "{unit} report {n}: which system stores telemetry for Falcon?",
    "{unit} summary {n}: the Falcon annual budget was approved.",
    "{unit} minutes {n}: region expansion is planned for next year.",
    "{unit} policy {n}: telemetry retention follows the {unit} standard.",
    "{unit} email {n}: the project owner is out on Friday.",
    "{unit} checklist {n}: the release review needs two approvals.",
    "{unit} digest {n}: what is new in the {unit} portal?",
    "{unit} faq {n}: which region is the {unit} office in?",
    "{unit} plan {n}: Project Osprey depends on a new vendor.",
    "{unit} log {n}: the dashboard for Osprey charts latency.",
    "{unit} brief {n}: an annual audit is scheduled.",
    "{unit} notice {n}: storage for old records was archived.",
    "{unit} update {n}: the system migration is complete.",
)


def one_in_ten_corpus(extra=80):
    """A copy of the corpus where one document in ten is readable by engineering.

    The chapter's ten documents (nine readable by engineering) plus ``extra``
    documents owned by other departments that reuse the questions' vocabulary.
    With the default 80, engineering may read 9 of 90 documents.
    """
    others = []
    for i in range(extra):
        unit = OTHER_UNITS[i % len(OTHER_UNITS)]
        template = OTHER_TEMPLATES[(i // len(OTHER_UNITS)) % len(OTHER_TEMPLATES)]
        text = template.format(unit=unit, n=i + 1)
        others.append(Doc(f"u{i + 1:03d}", text, frozenset({unit.lower()})))
    return corpus() + tuple(others)


def rank_then_filter(docs, query, groups, k=3):
    """Score every document, keep the top ``k``, then drop what the caller may not read.

    Same score and tiebreak as the chapter's :func:`search`; only the order of the
    two steps differs. Unauthorized documents can take result slots and then leave
    them empty.
    """
    q = set(tokenize(query))
    scored = sorted(docs, key=lambda d: (-sum(1 for t in tokenize(d.text) if t in q), d.id))
    top = tuple(d for d in scored if q & set(tokenize(d.text)))[:k]
    return tuple(d for d in top if d.groups & groups)


def authorized_relevant(docs, query, groups):
    """The documents the caller may read that share a token with the query."""
    q = set(tokenize(query))
    return [d for d in docs if d.groups & groups and q & set(tokenize(d.text))]


def authorized_recall(search_fn, docs, query, groups, k):
    """Share of the caller's matching authorized documents found in the top ``k``."""
    relevant = {d.id for d in authorized_relevant(docs, query, groups)}
    found = {d.id for d in search_fn(docs, query, groups, k=k)}
    return len(found & relevant) / len(relevant) if relevant else 1.0


def mean_authorized_recall(search_fn, docs, k, qs=None):
    """Authorized recall at depth ``k``, averaged over the question set."""
    qs = qs or questions()
    recalls = [authorized_recall(search_fn, docs, text, groups, k) for _, text, groups, *_ in qs]
    return sum(recalls) / len(recalls)


def recall_curves(docs, depths):
    """``(depth, filter_before_ranking, rank_then_filter)`` mean recall rows."""
    return [(k, mean_authorized_recall(search, docs, k),
             mean_authorized_recall(rank_then_filter, docs, k)) for k in depths]


def check_filter_before_ranking(search_fn):
    """Reader check for exercise 5: authorization must come before ranking.

    Passes on the chapter's :func:`search` (which filters first) and fails on a
    rank-then-filter variant: on a corpus where one document in ten is authorized,
    the latter returns near-empty result lists at a fixed depth.

    Args:
        search_fn: ``search_fn(docs, query, groups, k=3)`` returning documents.

    Raises:
        AssertionError: naming every failing case (see the module's convention).
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
    _report("check_filter_before_ranking", [_run_case(n, c) for n, c in cases])


# --------------------------------------------------------------------------
# Exercise 6: route before you retrieve
# --------------------------------------------------------------------------

ROUTES = ("direct", "multi_hop", "restricted")
# Labels from questions()'s own description: one-hop lookups, a two-hop (q5) and a
# three-hop (q3) chain, and a permission-restricted question (q6).
GOLD_ROUTES = {"q1": "direct", "q2": "direct", "q3": "multi_hop",
               "q4": "direct", "q5": "multi_hop", "q6": "restricted"}
# A topic word, and the group that owns documents on it.
RESTRICTED_TOPICS = {"budget": "finance"}
MULTI_HOP_MIN_TOKENS = 7


def question_features(text, groups):
    """Cheap features of a question: no retrieval, no model call."""
    words = tokenize(text)
    return {
        "tokens": len(words),
        "entities": sum(1 for w in text.split()[1:] if w[:1].isupper()),
        "missing_groups": sorted({g for topic, g in RESTRICTED_TOPICS.items()
                                  if topic in words and g not in groups}),
    }


def route_question(text, groups):
    """Label a question ``direct``, ``multi_hop`` or ``restricted`` from cheap features.

    Restricted: it asks about a topic owned by a group the caller is not in.
    Multi-hop: it is long (at least ``MULTI_HOP_MIN_TOKENS`` tokens): questions that
    chain relations name more of them. Direct: everything else.
    """
    features = question_features(text, groups)
    if features["missing_groups"]:
        return "restricted"
    if features["tokens"] >= MULTI_HOP_MIN_TOKENS:
        return "multi_hop"
    return "direct"


def always_agentic(text, groups):
    """The baseline 'router': every question goes to the agentic loop."""
    return "multi_hop"


def dispatch(label, docs, text, groups, start, goal):
    """Run the strategy a route names; an abstention costs no search."""
    if label == "direct":
        return one_shot(docs, text, groups, start, goal, k=3)
    if label == "multi_hop":
        return agentic(docs, text, groups, start, goal)
    if label == "restricted":
        return Result(None, 0, 0, ("abstain: the caller may not read this topic",))
    raise ValueError(f"unknown route {label!r}; expected one of {ROUTES}")


@dataclass(frozen=True)
class Routed:
    qid: str
    label: str
    answer: object
    ok: bool
    calls: int
    reads: int


def evaluate_router(router_fn, docs=None, qs=None):
    """Route and answer every question; one :class:`Routed` row each."""
    docs, qs = docs or corpus(), qs or questions()
    rows = []
    for qid, text, groups, start, goal, expected in qs:
        label = router_fn(text, groups)
        r = dispatch(label, docs, text, groups, start, goal)
        ok = score(r.answer, expected)
        rows.append(Routed(qid, label, r.answer, ok, r.searches, r.docs_read))
    return rows


def outcome(answer, expected):
    """'correct', 'missed' (abstained when an answer existed) or 'wrong answer'."""
    if score(answer, expected):
        return "correct"
    return "missed" if answer is None else "wrong answer"


def routing_mistake_costs(docs=None, qs=None):
    """For every question and every wrong route: extra calls and what happens to the answer.

    Returns:
        Rows ``(qid, gold, wrong, extra_calls, extra_reads, outcome)``.
    """
    docs, qs = docs or corpus(), qs or questions()
    rows = []
    for qid, text, groups, start, goal, expected in qs:
        gold = GOLD_ROUTES[qid]
        right = dispatch(gold, docs, text, groups, start, goal)
        for wrong in ROUTES:
            if wrong == gold:
                continue
            r = dispatch(wrong, docs, text, groups, start, goal)
            rows.append((qid, gold, wrong, r.searches - right.searches,
                         r.docs_read - right.docs_read, outcome(r.answer, expected)))
    return rows


def check_router(router_fn):
    """Reader check for exercise 6: labels, dispatch accuracy, and calls saved.

    Args:
        router_fn: ``router_fn(text, groups)`` returning ``direct``, ``multi_hop``
            or ``restricted``.

    Raises:
        AssertionError: naming every failing case (see the module's convention).
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
    _report("check_router", [_run_case(n, c) for n, c in cases])


# --------------------------------------------------------------------------
# Exercise 7: context strategies at equal quality
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StrategyCost:
    """Token bill of one context strategy on one question, at the accuracy target."""

    name: str
    correct: bool
    calls: int
    per_query_tokens: int
    prefill_tokens: int
    invalidation: str
    invalidation_tokens: int


def loop_prompts(docs, q, **loop_kwargs):
    """The agentic loop's calls, as ``(query, [doc ids])`` per search, and its result.

    The chapter's ``agentic`` runs unchanged over a copy of its globals whose
    ``search`` records each call (see :func:`chapter_code_with`).
    """
    calls = []

    def recording_search(docs, query, groups, k=3):
        hits = search(docs, query, groups, k=k)
        calls.append((query, [d.id for d in hits]))
        return hits

    _, text, groups, start, goal, _ = q
    loop = chapter_code_with(search=recording_search).agentic
    result = loop(docs, text, groups, start, goal, **loop_kwargs)
    return calls, result


def context_strategy_costs(docs=None, qid="q3", changed="d03"):
    """Long context, RAG (one-shot and agentic) and CAG on one multi-hop question.

    The accuracy target is the correct answer. Long context and CAG hold every
    authorized trusted document (the reader walks the chain over all of them); RAG
    one-shot uses the smallest ``k`` that answers; the agentic loop runs as in 15.3.
    ``invalidation_tokens`` is what must be recomputed when document ``changed`` is
    edited: nothing for long context (the prompt is rebuilt every query), that one
    document for RAG's index, and for CAG the cached prefix from that document to the
    end of the window.
    """
    docs = docs or corpus()
    q = question(qid)
    _, text, groups, start, goal, expected = q
    context = [d for d in docs if d.groups & groups and d.trusted]
    corpus_tokens = sum(token_count(d.text) for d in context)
    qt = token_count(text)
    tokens = {d.id: token_count(d.text) for d in docs}
    full = one_shot(context, text, groups, start, goal, k=len(context))
    position = [d.id for d in context].index(changed)
    cag_rebuild = sum(tokens[d.id] for d in context[position:])

    k = smallest_answering_k(docs, q)
    rag = one_shot(docs, text, groups, start, goal, k=k)
    rag_docs = [d for d in search(docs, text, groups, k=k) if d.trusted]

    calls, loop = loop_prompts(docs, q)
    # every search is one prompt: the entity searched for and the passages it returned
    loop_tokens = sum(token_count(query) + sum(tokens[i] for i in ids) for query, ids in calls)

    return [
        StrategyCost("long context", score(full.answer, expected), 1, corpus_tokens + qt, 0,
                     "none: the next prompt holds the new text", 0),
        StrategyCost(f"RAG one-shot k={k}", score(rag.answer, expected), 1,
                     sum(token_count(d.text) for d in rag_docs) + qt, 0,
                     f"re-index {changed}", tokens[changed]),
        StrategyCost("RAG agentic loop", score(loop.answer, expected), len(calls),
                     loop_tokens, 0, f"re-index {changed}", tokens[changed]),
        StrategyCost("CAG", score(full.answer, expected), 1, qt, corpus_tokens,
                     f"re-prefill the cache from {changed} to the end", cag_rebuild),
    ]


def tokens_per_change(cost, queries_per_change):
    """Tokens spent between two document changes, in steady state.

    ``queries_per_change`` queries, then one invalidation; the one-time prefill is
    amortized away over many such cycles.
    """
    return queries_per_change * cost.per_query_tokens + cost.invalidation_tokens


def cag_break_even(costs, rival):
    """Fewest queries per document change at which CAG spends fewer tokens than ``rival``."""
    cag = next(c for c in costs if c.name == "CAG")
    other = next(c for c in costs if c.name == rival)
    return next((n for n in range(1, 10_000)
                 if tokens_per_change(cag, n) < tokens_per_change(other, n)), None)
