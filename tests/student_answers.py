"""A student's own right answer to exercise 3 (written as a student would, not the worked
solution), shared by the page's test (tests/test_exercise_progress.py: the page marks it done)
and the grader's (tests/test_grade.py: the grader passes it), so both judge the same code."""

EXERCISE_3_RIGHT = '''

def my_assess(passages, query, subject, relation):
    verdicts = [assess(d, query, subject, relation) for d in passages]
    supported = sorted({v.triple for v in verdicts if v.action == "cite"})
    ids = ",".join(sorted(v.passage for v in verdicts))
    if not supported:
        relevant = any(v.relevant for v in verdicts)
        return Verdict(ids, relevant, False, None, "reformulate" if relevant else "discard")
    if len(supported) == 1:
        return Verdict(ids, True, True, supported[0], "cite")
    return Verdict(ids, True, True, tuple(supported), "conflict")


def my_resolve(verdict, passages):
    if verdict.action != "conflict":
        return verdict
    ranked = sorted(passages, key=lambda d: (d.uri.startswith("cmdb://"), d.updated), reverse=True)
    best, second = ranked[0], ranked[1]
    if (best.uri.startswith("cmdb://"), best.updated) == (second.uri.startswith("cmdb://"), second.updated):
        return type("Resolution", (), {"action": "escalate", "triple": verdict.triple})()
    triple = next(t for t in extract_facts(best) if t in verdict.triple)
    return type("Resolution", (), {"action": "cite", "triple": triple})()
'''
