"""Section 15.11, Exercises: the worked solutions' claims, and the reader checks.

Every number the page's written answers state is asserted here from the solution code
in ``chapter_lib/exercises/`` (ours, not the chapter's: the solution modules generated
from the page's ``# @solution N`` cells), and each reader check is shown to pass on the
worked solution and to fail, naming the right case, on the chapter's unmodified function
where the exercise is about changing it.
"""

import contextlib
import io
import itertools
import re

import jupytext
import pytest

from chapter_lib import chapter15
from chapter_lib import exercises as ex
from chapter_lib.chapter15 import (
    CUES, agentic, assess, corpus, hardened_agent, naive_agent, one_shot, questions, search,
)
from tools.pipeline.pages import ROOT

PAGE = ROOT / "book" / "15_11_exercises.md"
ENG = frozenset({"engineering"})
Q = ex.AURORA_REGION_QUERY

# The seven exercise texts exactly as the chapter gives them (markup: inline code only).
EXERCISE_TEXTS = [
    "Read the traces side by side. Run `q5` (a two-hop question) through both `one_shot` (at `k=3`) and `agentic`, and print both traces. Explain precisely which document one-shot is missing and why the loop’s second search finds it. Then raise one-shot’s k until it succeeds and report how many distractor documents entered its context.",  # noqa: E501
    "Move the knee. Add a four-hop question to `questions()` by extending the corpus with a new entity beyond us-east-2. Re-run the budget sweep in Section 15.4 and report the new knee. What does the accuracy-versus-budget curve look like on a workload of only one-hop questions, and what does that say about when the planner is pure overhead?",  # noqa: E501
    "Strengthen the evidence gate. The `assess` verifier accepts any extracted triple. Insert a second trusted document giving Aurora a different region, retrieve both, and extend `assess` to return a `conflict` action instead of `cite` when supported triples disagree. Add a resolution policy — source precedence, freshness, or escalation — and show it never falls back to document order.",  # noqa: E501
    "Poison the graph. Change `d10`’s `trusted` flag to `True` and rerun the security cells. Which region does the hardened agent now believe? Trace exactly where the defense failed, then add a second control (for example, requiring the support span to occur verbatim in a document whose source URI is on an allowlist) so a single mislabeled trust flag no longer decides the answer.",  # noqa: E501
    "Measure an access-control recall failure. Extend the corpus so that only one in ten documents is authorized for the caller. Compare filter-before-ranking (the built-in `search`) with a rank-then-filter variant that scores all documents and drops unauthorized ones afterward, at a fixed retrieval depth. Plot authorized recall against depth for both and state when a physically partitioned index becomes necessary.",  # noqa: E501
    "Route before you retrieve. Write a tiny router that labels each question in `questions()` as `direct`, `multi_hop`, or `restricted` from cheap features (question length, entity count, caller groups) and dispatches to `one_shot`, `agentic`, or an immediate abstention. Measure total calls and accuracy against always-agentic, and report the cost of each routing mistake — confusing direct for `multi_hop` wastes calls, while the reverse produces an unsupported answer.",  # noqa: E501
    "Compare context strategies at equal quality. Using `token_count`, design an experiment over the corpus that pits long context, RAG, and CAG at a fixed target accuracy on the multi-hop question. Estimate per-query token cost, one-time prefill cost, and the invalidation event each approach must handle when a document changes. State which strategy you would ship and the corpus property that would flip your choice.",  # noqa: E501
]


@pytest.fixture(scope="module")
def page_text():
    return PAGE.read_text()


def prose(page_text):
    """The page's markdown, with whitespace and emphasis markers collapsed."""
    return re.sub(r"\s+", " ", page_text.replace("**", ""))


def check_output(check, fn, *args) -> list[str]:
    """What a reader check prints, as lines (it raises nothing)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        assert check(fn, *args) is None, "a check returns nothing (a value would be shown under the cell)"
    return printed.getvalue().splitlines()


def failing_cases(check, fn, *args):
    """Run a reader check expected to fail; return its failing cases' lines.

    The verdict comes first: its first line says FAIL, then come the failing cases."""
    lines = check_output(check, fn, *args)
    assert lines[0].startswith("FAIL  exercise "), lines[0]
    fails = [line.strip() for line in lines[1:] if line.startswith("  FAIL ")]
    assert lines[1:1 + len(fails)] == ["  " + f for f in fails], "failing cases come right after the verdict"
    return fails


def passes(check, fn, *args) -> bool:
    lines = check_output(check, fn, *args)
    return lines[0].startswith("PASS  exercise ") and all(line.startswith("  ok ") for line in lines[1:])


# --------------------------------------------------------------------------
# The page and the module
# --------------------------------------------------------------------------


def test_the_package_says_it_is_ours_and_which_modules_are_generated():
    assert "(ours)" in ex.__doc__ and "GENERATED from the ``# @solution N`` cells" in ex.__doc__
    folder = ROOT / "chapter_lib" / "exercises"
    for n in range(1, 8):
        assert (folder / f"solution_{n}.py").read_text().startswith("# AUTOGENERATED by tools/pipeline/build_lib.py")
    for name in ("common", "fixtures", "check_3", "check_4", "check_5", "check_6"):
        text = (folder / f"{name}.py").read_text()
        assert not text.startswith("# AUTOGENERATED") and "hand-written" in text.split('"""')[1]
    assert "exercises" not in (ROOT / "chapter_lib" / "chapter15.py").read_text()


def test_no_module_is_longer_than_a_sitting():
    for module in (ROOT / "chapter_lib" / "exercises").glob("*.py"):
        assert len(module.read_text().splitlines()) <= 200, module.name


def test_worked_solutions_are_code_on_the_page_not_printed_source(page_text):
    assert "show_source" not in page_text and "inspect.getsource" not in page_text
    parts = exercise_parts()
    for n, part in parts.items():
        defining = [c for c in part["code"] if c.source.startswith(f"# @solution {n}\n")]
        assert defining, f"exercise {n}: no `# @solution {n}` cell"
        assert all(re.search(r"^(def|class) ", c.source, re.M) for c in defining)
        assert all("hide-cell" in c.metadata.get("tags", []) for c in defining)


def test_every_exercise_has_hints_before_its_worked_solution():
    parts = exercise_parts()
    for n, part in parts.items():
        hints = re.findall(rf"\{{dropdown\}} Hint (\d) of (\d) for exercise {n}\n", part["markdown_before_solution"])
        assert hints, f"exercise {n} has no hint before its worked solution"
        total = int(hints[0][1])
        assert 1 <= total <= 3 and [int(h) for h, _ in hints] == list(range(1, total + 1))


def test_the_seven_exercise_texts_are_the_chapters_word_for_word(page_text):
    sections = re.split(r"^## Exercise (\d)\n", page_text, flags=re.M)
    numbers, bodies = sections[1::2], sections[2::2]
    assert numbers == [str(n) for n in range(1, 8)]
    for text, body in zip(EXERCISE_TEXTS, bodies):
        assert body.lstrip("\n").split("\n\n")[0] == text


def exercise_parts():
    """Per exercise number: its code cells and its markdown, in page order."""
    parts, current = {}, None
    for cell in jupytext.read(PAGE, fmt="md:myst").cells:
        if cell.cell_type == "code":
            parts[current]["code"].append(cell)
            continue
        for chunk in re.split(r"^(?=## Exercise \d\n)", cell.source, flags=re.M):
            heading = re.match(r"## Exercise (\d)\n", chunk)
            if heading:
                current = int(heading.group(1))
                parts[current] = {"code": [], "markdown": "", "markdown_before_solution": ""}
            if current is not None:
                parts[current]["markdown"] += chunk + "\n"
                if not any("hide-cell" in c.metadata.get("tags", []) for c in parts[current]["code"]):
                    parts[current]["markdown_before_solution"] += chunk + "\n"
    return parts


def test_each_exercise_has_a_visible_start_cell_then_a_hidden_solution_and_an_answer():
    parts = exercise_parts()
    assert list(parts) == list(range(1, 8))
    for n, part in parts.items():
        start, solution = part["code"][0], part["code"][1:]
        assert start.source.startswith(f"# Exercise {n}: start here")
        assert "hide-cell" not in start.metadata.get("tags", [])
        assert solution and all("hide-cell" in c.metadata.get("tags", []) for c in solution)
        assert all(c.metadata["mystnb"]["code_prompt_show"].startswith(f"Worked solution {n}")
                   for c in solution)
        # the start cell imports nothing that gives the answer away
        assert not re.search(r"import[^\n]*\b(assess_passages|resolve_conflict|hardened_agent_two_controls|"
                             r"rank_then_filter|route_question|four_hop_|context_strategy_costs)", start.source)
        assert f"{{dropdown}} Worked solution {n}: the answer in words" in part["markdown"]


def test_the_figures_asked_for_are_named_and_captioned():
    nb = jupytext.read(PAGE, fmt="md:myst")
    figures = {c.metadata["mystnb"]["figure"]["name"]: c for c in nb.cells
               if c.cell_type == "code" and "figure" in c.metadata.get("mystnb", {})}
    assert set(figures) == {"fig-ex2-budget", "fig-ex5-recall"}
    for cell in figures.values():
        assert cell.metadata["mystnb"]["image"]["alt"] and cell.metadata["mystnb"]["figure"]["caption"]
        assert cell.source.rstrip().endswith("plt.show()")


def test_solutions_change_nothing_of_the_chapter():
    before = (len(corpus()), questions(), CUES, chapter15._is_entity("us-east-2"))
    ex.four_hop_code_any_token().agentic(ex.four_hop_corpus(), *ex.FOUR_HOP_QUESTION[1:5])
    ex.loop_prompts(corpus(), ex.question("q3"))
    ex.check_router(ex.route_question)
    assert (len(corpus()), questions(), CUES, chapter15._is_entity("us-east-2")) == before
    assert chapter15.agentic is agentic and chapter15.search is search


def test_copies_of_the_chapters_code_behave_like_it():
    copy = ex.chapter_code_with()
    assert copy.agentic is not agentic
    for _, text, groups, start, goal, _ in questions():
        assert copy.agentic(corpus(), text, groups, start, goal) == agentic(corpus(), text, groups, start, goal)
        assert copy.one_shot(corpus(), text, groups, start, goal) == one_shot(corpus(), text, groups, start, goal)


def test_a_check_that_fails_names_each_case_and_a_raising_function_fails_its_cases(capsys):
    ex.check_router(ex.route_question)
    assert capsys.readouterr().out.startswith("PASS  exercise 6 (check_router): all 9 cases pass\n")

    def broken(text, groups):
        raise RuntimeError("not written yet")

    fails = failing_cases(ex.check_router, broken)
    assert len(fails) == 9 and all("raised RuntimeError: not written yet" in f for f in fails)
    # The verdict first, then the reader's own frames: none of the check's.
    ex.check_router(broken)
    out, err = capsys.readouterr()
    assert out.startswith("FAIL  exercise 6 (check_router): 9 of 9 cases fail\n")
    assert "Traceback" in err and "in broken" in err and 'raise RuntimeError("not written yet")' in err
    assert "chapter_lib/exercises" not in err, err


def test_a_wrong_function_gets_a_verdict_and_no_traceback(capsys):
    def wrong(text, groups):
        return "direct"

    ex.check_router(wrong)
    out, err = capsys.readouterr()
    assert out.startswith("FAIL  exercise 6 (check_router): ") and err == ""


# --------------------------------------------------------------------------
# Exercise 1
# --------------------------------------------------------------------------


def test_exercise_1_one_shot_misses_both_chain_documents_and_the_second_search_finds_d02(page_text):
    q5 = ex.question("q5")
    at3 = ex.context_breakdown(corpus(), q5, 3)
    assert at3["retrieved"] == ["d05", "d07", "d08"] and at3["missing"] == ["d01", "d02"]
    scores = ex.overlap_scores(corpus(), q5[1], ENG)
    assert {scores[d] for d in ("d05", "d07", "d08")} == {3} and {scores[d] for d in ("d01", "d02", "d06")} == {2}
    calls, result = ex.loop_prompts(corpus(), q5)
    assert calls == [("Falcon", ["d01", "d04"]), ("Atlas", ["d01", "d02"])]
    assert "Atlas" not in q5[1] and result.answer == "Aurora" and result.docs_read == 4
    k = ex.smallest_answering_k(corpus(), q5)
    seen = ex.context_breakdown(corpus(), q5, k)
    assert k == 5 and seen["distractors"] == ["d05", "d07", "d08"]
    text = prose(page_text)
    assert "One-shot first answers at `k=5`, and by then three distractors" in text


# --------------------------------------------------------------------------
# Exercise 2
# --------------------------------------------------------------------------


def test_exercise_2_every_relation_is_already_asked_so_the_fourth_hop_needs_a_new_cue():
    asked = {(q[3], q[4]) for q in questions()}
    assert asked == {("Falcon", relation) for _, relation in CUES}
    assert chapter15.extract_facts(ex.FOUR_HOP_DOC) == ()
    assert ex.four_hop_code().extract_facts(ex.FOUR_HOP_DOC) == (("us-east-2", "failover", "us-west-2"),)


def test_exercise_2_the_chapters_loop_cannot_reach_the_fourth_hop_at_any_budget():
    code, docs = ex.four_hop_code(), ex.four_hop_corpus()
    _, text, groups, start, goal, _ = ex.FOUR_HOP_QUESTION
    assert chapter15._is_entity("us-east-2") is False
    for budget in range(1, 9):
        r = code.agentic(docs, text, groups, start, goal, budget=budget)
        assert r.answer is None
        assert not any(line.startswith("search(us-east-2)") for line in r.trace)
    r = code.agentic(docs, text, groups, start, goal, budget=8)
    assert r.searches == 3 and r.trace[-1] == "abstain"  # the frontier emptied: not the budget


def test_exercise_2_the_knee_and_the_curves(page_text):
    docs4, qs4 = ex.four_hop_corpus(), ex.four_hop_questions()
    chapter = ex.budget_sweep(agentic, corpus(), questions())
    with_cue = ex.budget_sweep(ex.four_hop_code().agentic, docs4, qs4)
    any_token = ex.budget_sweep(ex.four_hop_code_any_token().agentic, docs4, qs4)
    one_hop = ex.budget_sweep(agentic, corpus(), ex.one_hop_questions())
    assert ex.knee(chapter) == 3 and chapter[-1].accuracy == 1.0  # Section 15.4, unchanged
    assert ex.knee(with_cue) == 3 and max(p.correct for p in with_cue) == 6 and round(with_cue[-1].accuracy, 2) == 0.86
    assert ex.knee(any_token) == 4 and any_token[3].accuracy == 1.0
    assert [round(p.mean_calls, 2) for p in any_token[2:5]] == [2.0, 2.29, 2.43]
    assert ex.knee(one_hop) == 1 and all(p.accuracy == 1.0 and p.mean_calls == 1.0 for p in one_hop)
    r = ex.four_hop_code_any_token().agentic(docs4, *ex.FOUR_HOP_QUESTION[1:5])  # default budget=4, k=2
    assert r.answer == "us-west-2" and r.searches == 4 and "search(us-east-2) -> ['d03', 'd11']" in r.trace
    q6 = ex.four_hop_code_any_token().agentic(docs4, *ex.question("q6")[1:5], budget=6)
    assert q6.answer is None and q6.searches == 5
    text = prose(page_text)
    assert "the knee moves to B=4 at accuracy 1.00" in text and "ceiling drops to 0.86 (6 of 7)" in text
    assert "mean calls rise from 2.00 to 2.29 at B=4 and 2.43 at B=5" in text


# --------------------------------------------------------------------------
# Exercise 3
# --------------------------------------------------------------------------


def test_exercise_3_the_conflict_case_returns_a_conflict_and_resolves_by_precedence():
    hits = search(ex.conflict_corpus(), Q, ENG, k=3)
    passages = [d for d in hits if d.trusted]
    assert [d.id for d in hits] == ["d03", "d10", "d12"] and [d.id for d in passages] == ["d03", "d12"]
    assert [assess(d, Q, "Aurora", "region").action for d in passages] == ["cite", "cite"]
    verdict = ex.assess_passages(passages, Q, "Aurora", "region")
    assert verdict.action == "conflict" and len(verdict.triple) == 2
    resolution = ex.resolve_conflict(verdict, passages)
    assert (resolution.action, resolution.triple[2], resolution.reason) == ("cite", "us-east-2", "source precedence")
    freshness_only = ex.resolve_conflict(verdict, passages, precedence={})
    assert (freshness_only.triple[2], freshness_only.reason) == ("eu-central-1", "freshness")


def test_exercise_3_the_resolution_never_depends_on_document_order():
    passages = [d for d in search(ex.conflict_corpus(), Q, ENG, k=4) if d.trusted]
    outcomes = {ex.resolve_conflict(ex.assess_passages(list(p), Q, "Aurora", "region"), list(p))
                for p in itertools.permutations(passages)}
    assert len(outcomes) == 1
    # ...while the chapter's loop cites whichever passage comes first
    table_first = {chapter15.facts_from(p)[("Aurora", "region")][0][0] for p in itertools.permutations(passages)}
    assert table_first == {"us-east-2", "eu-central-1"}


def test_exercise_3_check_passes_on_the_solution_and_fails_on_the_chapters_assess():
    assert passes(ex.check_conflict_policy, ex.assess_passages, ex.resolve_conflict)
    fails = failing_cases(ex.check_conflict_policy, ex.assess_in_document_order, ex.first_in_document_order)
    assert any("disagreeing passages give 'conflict'" in f and "gives 'cite'" in f for f in fails)
    assert any("the verdict ignores passage order" in f for f in fails)
    # a conflict action alone is not enough: the policy may not fall back to order
    fails = failing_cases(ex.check_conflict_policy, ex.assess_passages, ex.first_in_document_order)
    assert [f.split(":")[0].strip() for f in fails] == [
        "FAIL the resolution ignores passage order", "FAIL a full tie escalates"]


# --------------------------------------------------------------------------
# Exercise 4
# --------------------------------------------------------------------------


def test_exercise_4_with_d10_trusted_attacker_zone_reaches_the_hardened_agent():
    blocked, facts = hardened_agent(ex.poisoned_corpus(), Q, ENG)
    assert blocked == [] and facts == [("us-east-2", "d03"), ("attacker-zone", "d10")]
    executed, _ = naive_agent(ex.poisoned_corpus(), Q, ENG)
    assert {did for did, _ in executed} == {"d10"}
    assert [d.id for d in search(ex.poisoned_corpus(), Q, ENG, k=3)] == ["d03", "d10", "d02"]
    # unpoisoned, the chapter's agent is as Section 15.9 printed
    assert hardened_agent(ex.sourced_corpus(), Q, ENG) == (["d10"], [("us-east-2", "d03")])


def test_exercise_4_with_the_second_control_it_does_not():
    assert ex.hardened_agent_two_controls(ex.poisoned_corpus(), Q, ENG) == (["d10"], [("us-east-2", "d03")])
    assert ex.hardened_agent_two_controls(ex.sourced_corpus(), Q, ENG) == (["d10"], [("us-east-2", "d03")])
    # the controls fail closed: a wrong flag on the real record loses the answer, never swaps it
    assert ex.hardened_agent_two_controls(ex.with_trust(ex.sourced_corpus(), "d03", False), Q, ENG)[1] is None


def test_exercise_4_check_passes_on_the_solution_and_fails_on_the_chapters_agent():
    assert passes(ex.check_second_control, ex.hardened_agent_two_controls)
    fails = failing_cases(ex.check_second_control, hardened_agent)
    assert [f.split(":")[0].strip() for f in fails] == [
        "FAIL d10 marked trusted", "FAIL d10 marked trusted, deeper retrieval", "FAIL any single mislabeled flag"]
    assert "the poisoned fact got through" in fails[0]

    def allowlist_only(docs, query, groups, k=3):  # replaces the trust gate instead of adding to it
        hits = [d for d in search(docs, query, groups, k=k) if ex.on_allowlist(d)]
        return [], chapter15.facts_from(hits).get(("Aurora", "region"))

    fails = failing_cases(ex.check_second_control, allowlist_only)
    assert [f.split(":")[0].strip() for f in fails] == ["FAIL the trust gate still applies"]


# --------------------------------------------------------------------------
# Exercise 5
# --------------------------------------------------------------------------


def test_exercise_5_one_document_in_ten_is_authorized():
    docs = ex.one_in_ten_corpus()
    assert len(docs) == 90 and sum(1 for d in docs if d.groups & ENG) == 9
    assert len({d.id for d in docs}) == 90 and docs[:10] == corpus()


def test_exercise_5_filter_before_ranking_recalls_at_least_as_much_at_every_depth(page_text):
    docs = ex.one_in_ten_corpus()
    curves = ex.recall_curves(docs, range(1, 91))
    assert all(before >= after for _, before, after in curves)
    recall = {k: (before, after) for k, before, after in curves}
    assert [round(x, 2) for x in recall[3]] == [0.51, 0.11]  # the gap at the fixed depth k=3
    assert {round(recall[k][1], 2) for k in range(1, 6)} == {0.11}
    assert round(recall[10][1], 2) == 0.58 and round(recall[20][1], 2) == 0.85
    full = [min(k for k, b, a in curves if x(b, a) == 1.0) for x in (lambda b, a: b, lambda b, a: a)]
    assert full == [9, 52]
    returned = sum(len(ex.rank_then_filter(docs, q[1], q[2], k=3)) for q in questions()) / 6
    assert round(returned, 2) == 0.67
    text = prose(page_text)
    assert "it is 0.51 against 0.11" in text and "Rank-then-filter needs depth 52" in text


def test_exercise_5_check_passes_on_rank_then_filter_and_fails_on_the_chapters_search():
    # The exercise asks for the rank-then-filter variant, so that is what its check is about.
    assert passes(ex.check_rank_then_filter, ex.rank_then_filter)
    fails = failing_cases(ex.check_rank_then_filter, search)
    assert [f.split(":")[0].strip() for f in fails] == ["FAIL ranks every document, then filters"]
    assert "it filtered first" in fails[0]

    def other_tiebreak(docs, query, groups, k=3):  # ranks first, but equal scores go to the highest id
        q = set(chapter15.tokenize(query))
        overlap = {d.id: sum(1 for t in chapter15.tokenize(d.text) if t in q) for d in docs}
        scored = sorted((d for d in docs if overlap[d.id]), key=lambda d: (overlap[d.id], d.id), reverse=True)
        return tuple(d for d in scored[:k] if d.groups & groups)

    names = [f.split(":")[0].strip() for f in failing_cases(ex.check_rank_then_filter, other_tiebreak)]
    assert "FAIL the chapter's score and tiebreak" in names


# --------------------------------------------------------------------------
# Exercise 6
# --------------------------------------------------------------------------


def test_exercise_6_the_router_against_always_agentic(page_text):
    routed, baseline = ex.evaluate_router(ex.route_question), ex.evaluate_router(ex.always_agentic)
    assert [r.label for r in routed] == [ex.GOLD_ROUTES[q[0]] for q in questions()]
    assert (sum(r.ok for r in routed), sum(r.calls for r in routed), sum(r.reads for r in routed)) == (6, 8, 19)
    assert (sum(r.ok for r in baseline), sum(r.calls for r in baseline), sum(r.reads for r in baseline)) == (6, 11, 22)
    text = prose(page_text)
    assert "8 search calls at accuracy 6/6" in text and "11 calls at 6/6" in text


def test_exercise_6_the_cost_of_each_routing_mistake():
    costs = {(qid, wrong): (calls, reads, result) for qid, _, wrong, calls, reads, result
             in ex.routing_mistake_costs()}
    for qid in ("q1", "q2", "q4"):  # direct sent to the loop: no search wasted, one passage fewer
        assert costs[(qid, "multi_hop")] == (0, -1, "correct")
    for qid in ("q3", "q5"):  # multi-hop sent to one-shot: an abstention, not an unsupported answer
        assert costs[(qid, "direct")][2] == "missed"
    assert costs[("q6", "multi_hop")][:1] == (3,) and costs[("q6", "direct")][:1] == (1,)
    assert all(result != "wrong answer" for *_, result in costs.values())


def test_exercise_6_check_passes_on_the_router_and_fails_on_always_agentic():
    assert passes(ex.check_router, ex.route_question)
    fails = failing_cases(ex.check_router, ex.always_agentic)
    names = [f.split(":")[0].strip() for f in fails]
    assert names == ["FAIL q1 is direct", "FAIL q2 is direct", "FAIL q4 is direct", "FAIL q6 is restricted",
                     "FAIL fewer calls than always-agentic"]
    assert "+3 search call(s)" in fails[3]

    def ignores_groups(text, groups):
        return "restricted" if "budget" in text else ex.route_question(text, groups)

    fails = failing_cases(ex.check_router, ignores_groups)
    assert [f.split(":")[0].strip() for f in fails] == ["FAIL caller groups decide 'restricted'"]


# --------------------------------------------------------------------------
# Exercise 7
# --------------------------------------------------------------------------


def test_exercise_7_token_costs_at_equal_quality(page_text):
    costs = {c.name: c for c in ex.context_strategy_costs(corpus(), qid="q3", changed="d03")}
    assert list(costs) == ["long context", "RAG one-shot k=7", "RAG agentic loop", "CAG"]
    assert all(c.correct for c in costs.values())
    table = {name: (c.calls, c.per_query_tokens, c.prefill_tokens, c.invalidation_tokens)
             for name, c in costs.items()}
    assert table == {"long context": (1, 73, 0, 0), "RAG one-shot k=7": (1, 66, 0, 5),
                     "RAG agentic loop": (3, 49, 0, 5), "CAG": (1, 7, 66, 49)}
    assert one_shot(corpus(), *ex.question("q3")[1:5], k=6).answer is None  # k=7 is the cheapest one-shot
    listed = list(costs.values())
    assert [ex.cag_break_even(listed, r) for r in list(costs)[:3]] == [1, 1, 2]
    worst = ex.context_strategy_costs(corpus(), qid="q3", changed="d01")[-1]
    assert worst.invalidation_tokens == 66 and ex.cag_break_even(listed[:3] + [worst], "RAG agentic loop") == 2
    # at n = 1 the loop is cheaper than CAG: the property that flips the choice
    assert ex.tokens_per_change(costs["RAG agentic loop"], 1) < ex.tokens_per_change(costs["CAG"], 1)
    text = prose(page_text)
    assert "CAG costs 7n + 49 and the loop 49n + 5" in text and "CAG wins from n = 2" in text
