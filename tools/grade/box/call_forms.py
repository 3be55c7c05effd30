"""How a check's call hands over the student's functions (ours; both sides of the sandbox).

A student hands their functions to a check in any form Python allows: ``check_router(router)``,
``check_router(lambda text, groups: route(text, groups))``, ``check_router(router=r)``,
``check_router(*fns)``, ``check_router(functools.partial(route, k=3))``, ``check_router(agent.route)``.
The grader takes the call's argument list as the student wrote it (its source text), the
sandbox evaluates it in the notebook's namespace after every cell ran (harness.py), and
:func:`bind` puts what it gives in the order of the check's parameters, as Python would.
Loaded by the sandbox's Python from this file's text, like wire.py; imported by the grader's tests.
"""

COLLECT = "__grader_collect__"


def collect(*args, **kwargs):
    """What a call's argument list evaluates to: ``(args, kwargs)``."""
    return args, kwargs


def expression(arguments: str) -> str:
    """The expression the sandbox evaluates for a call's argument list (its source text)."""
    return f"{COLLECT}(\n{arguments}\n)"


def bind(parameters, args, kwargs):
    """The functions in the order of the check's ``parameters``, or a sentence saying why the call
    does not fit them (as Python's own TypeError would)."""
    if len(args) > len(parameters):
        return f"it passes {len(args)} functions by position; the check takes {len(parameters)}"
    bound = dict(zip(parameters, args))
    for name, value in kwargs.items():
        if name not in parameters:
            return f"the check has no parameter {name!r} (its parameters: {', '.join(parameters)})"
        if name in bound:
            return f"it gives {name!r} twice"
        bound[name] = value
    missing = [p for p in parameters if p not in bound]
    if missing:
        return f"it does not give {', '.join(missing)}"
    return [bound[p] for p in parameters]
