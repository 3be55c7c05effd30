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


def _described(error) -> list:
    try:
        message = str(error)
    except BaseException:
        message = "(its message could not be read)"
    return [type(error).__name__, message[:1000]]


def handed_functions(candidates, parameters, namespace):
    """The functions the student handed to the check, in the order of its ``parameters``: from the
    first of ``candidates`` (argument lists as written: the student's own calls of the check,
    last first, then the start cell's names) that evaluates in the notebook's ``namespace`` and
    fits the parameters. Returns ``(functions, index used)``, or ``(None, problem)``: a dict
    saying which names are ``missing`` or which call was ``unevaluable``."""
    problems = []
    for index, arguments in enumerate(candidates):
        try:
            code = compile(expression(arguments), "<the check's call>", "eval")
            args, kwargs = eval(code, namespace, {COLLECT: collect})
        except NameError as error:
            problems.append({"missing": [getattr(error, "name", None) or arguments]})
            continue
        except BaseException as error:  # the student's own code, evaluated: anything
            problems.append({"unevaluable": [arguments, *_described(error)]})
            continue
        bound = bind(parameters, args, kwargs)
        if isinstance(bound, str):
            problems.append({"unevaluable": [arguments, "TypeError", bound]})
            continue
        return bound, index
    # None evaluates: the student's own call that could not, if it says more than a missing name;
    # else the last candidate's (the start cell's names: not defined, or never attempted).
    return None, next((p for p in problems if "unevaluable" in p), problems[-1] if problems else {"missing": ["?"]})
