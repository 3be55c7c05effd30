"""The sandbox's Python side (ours): runs a student's cells, then calls their functions as a check asks.

Loaded by child.mjs into the sandbox's Pyodide before any student cell, with wire.py (the
encoding the judge shares). Nothing here decides a verdict and nothing here is trusted
after the first student cell has run: a student's code can change any of it (and the
check's copy, and ``chapter_lib``), which can only change what the record says their
functions answered, as a function of their own could. The judge (runnable_book/grade/judge.py)
calls the grader's own check on that record, outside the sandbox.

Cells run as the page runs them (runnable_book/sphinx_ext/runner/page_python.py): IPython's way of
showing the last expression's value, top-level ``await``, matplotlib & co. loaded on a
cell's first import of them (child.mjs loads the wheels; here the backend is Agg: nothing is
shown). Where the page refuses IPython's magics and shell lines, a notebook runs them: here
they are skipped, each line replaced by ``pass`` and noted in the cell's output, so the rest
of the cell runs as it would in JupyterLab.
"""

import ast
import builtins
import json
import linecache
import os
import re
import sys
import traceback
import types

from pyodide.code import CodeRunner, find_imports

import call_forms
import wire

# Packages the sandbox serves, loaded on a cell's first import of them (as the page does).
ON_IMPORT = {"matplotlib": "matplotlib", "pylab": "matplotlib", "mpl_toolkits": "matplotlib",
             "numpy": "numpy", "PIL": "pillow"}
OUTPUT_LIMIT = 4000  # characters of a step's output kept for the report
CALLS_LIMIT = 20_000  # calls of the student's functions recorded in one check
os.environ["MPLBACKEND"] = "Agg"
namespace = sys.modules["__main__"].__dict__


class Output:
    """A step's stdout and stderr, kept up to OUTPUT_LIMIT characters."""

    def __init__(self):
        self.parts, self.size, self.cut = [], 0, False

    def write(self, text):
        text = str(text)
        room = OUTPUT_LIMIT - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        if len(text) > max(room, 0):
            self.cut = True
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    @property
    def text(self):
        return "".join(self.parts) + ("\n[… more output not kept]" if self.cut else "")


class Capture:
    def __enter__(self):
        self.output = Output()
        self.saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = self.output
        return self.output

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.saved
        return False


def no_input(prompt=""):
    raise EOFError("input() has no one to answer it while the grader runs the notebook; "
                   "put the value in the code instead")


builtins.input = no_input


def no_shell(command):
    raise OSError("shell commands do not run when grading (os.system)")


# Pyodide under Node implements os.system with Node's child_process: the permission model
# refuses it, and Pyodide takes that refusal as fatal. Refused here first, as an OSError.
os.system = no_shell

# A minimal IPython, as in the page (IPython itself is not in Pyodide).
ipython = types.ModuleType("IPython")
ipython_display = types.ModuleType("IPython.display")


class DisplayObject:
    def __init__(self, data=None):
        self.data = data


class Markdown(DisplayObject):
    def _repr_markdown_(self):
        return self.data


def display(*values):
    for value in values:
        print(repr(value))


ipython_display.DisplayObject, ipython_display.Markdown, ipython_display.display = DisplayObject, Markdown, display
ipython.display, ipython.get_ipython = ipython_display, (lambda: None)
sys.modules.update({"IPython": ipython, "IPython.display": ipython_display})
builtins.display = display


def use_library(files_json: str) -> str:
    """Put the grader's own chapter_lib in place of the one in Python's memory at start.

    The memory snapshot the sandbox starts from has the book's chapter_lib package imported;
    the grader's copy (its files, sent with the job) replaces it, its packages and chapters'
    modules imported here, before any student's code runs (the package itself imports a
    chapter's module only on first use), so the sandbox runs exactly the source the judge's
    checks come from."""
    files = json.loads(files_json)
    for name in [n for n in sys.modules if n == "chapter_lib" or n.startswith("chapter_lib.")]:
        del sys.modules[name]
    root = "/grader/lib"
    for path, text in files.items():
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    sys.path.insert(0, root)
    import importlib

    importlib.invalidate_caches()
    # Every package of it, the exercise packages' checks and everything they import among them.
    for path in sorted(files):
        if path.endswith("/__init__.py"):
            importlib.import_module(path[: -len("/__init__.py")].replace("/", "."))
    # And every chapter's module, which the package imports on a name's first use otherwise.
    exec("from chapter_lib import *", {})
    import chapter_lib

    return chapter_lib.__file__


MAGIC = re.compile(r"^(\s*)(%%?|!!?)")


def without_magics(source):
    """The cell with IPython's magic and shell lines replaced by ``pass`` (and which they were);
    a cell that compiles as Python is left as it is."""
    try:
        compile(source, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST)
        return source, []
    except (SyntaxError, ValueError):
        pass
    lines, skipped = [], []
    for line in source.split("\n"):
        found = MAGIC.match(line)
        if found and not line.lstrip().startswith(("%=", "!=")):
            skipped.append(line.strip())
            lines.append(found.group(1) + "pass")
        else:
            lines.append(line)
    return "\n".join(lines), skipped


def packages_for(source) -> list:
    """The served packages a cell imports that this Python has not loaded yet."""
    try:
        imported = {name.split(".")[0] for name in find_imports(without_magics(source)[0])}
    except SyntaxError:
        return []
    wanted = {ON_IMPORT[name] for name in imported if name in ON_IMPORT}
    return sorted(name for name in wanted if name not in loaded)


loaded = set()


def mark_loaded(names):
    """After child.mjs loaded packages: note them, and import what a figure cell imports first
    (matplotlib with the Agg backend, pyplot), so the cell's own time limit does not pay for it."""
    loaded.update(names)
    if "matplotlib" in names:
        import logging

        import matplotlib

        matplotlib.use("Agg")
        logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
        import matplotlib.pyplot  # noqa: F401


def _traceback(error, filename):
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    shown = traceback.TracebackException(type(error), error, tb)
    shown.stack = traceback.StackSummary.from_list([f for f in shown.stack if f.filename != "<exec>"])
    return "".join(shown.format())


async def run_cell(source, filename) -> str:
    """Run one cell in the notebook's namespace. Returns JSON: ok, error (its last line), output."""
    code, skipped = without_magics(source)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    result = {"ok": False, "error": None}
    with Capture() as output:
        for line in skipped:
            print(f"[grader: skipped {line!r}: magics and shell commands do not run when grading]")
        try:
            runner = CodeRunner(code, filename=filename, return_mode="last_expr", quiet_trailing_semicolon=True,
                                flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            runner.compile()
            value = await runner.run_async(namespace)
            if value is not None:
                print(repr(value))
            result["ok"] = True
        except BaseException as error:  # the cell's own error, as a notebook shows it
            try:
                text = _traceback(error, filename)
            except BaseException:
                text = f"{type(error).__name__}\n"
            sys.stderr.write(text)
            last = text.strip().splitlines()[-1] if text.strip() else type(error).__name__
            result["error"] = last[:500]
    try:
        import matplotlib.pyplot as plt  # figures a cell drew and left open are closed, as a notebook does

        if "matplotlib.pyplot" in sys.modules:
            plt.close("all")
    except BaseException:
        pass
    result["output"] = output.text
    return json.dumps(result)


class AnswerTooLarge(Exception):
    """The value a student's function returned is past the grader's limits."""


def _describe_raise(error):
    try:
        message = str(error)
    except BaseException:
        message = "(its message could not be read)"
    return [type(error).__name__, message[:1000], not isinstance(error, Exception)]


def handed_functions(spec):
    """The functions the student handed to the check (runnable_book/grade/box/call_forms.py)."""
    return call_forms.handed_functions(spec["candidates"], spec["parameters"], namespace)


class Recorder:
    """The student's functions as the check calls them: each call recorded (arguments, what came
    back or was raised, what it did to a list, dict or set it was given) for the judge to replay."""

    def __init__(self):
        self.calls, self.handles = [], []

    def wrap(self, slot, function):
        calls, handles = self.calls, self.handles

        def recorded(*args, **kwargs):
            key = wire.call_key(args, kwargs)
            if len(calls) >= CALLS_LIMIT:
                raise RuntimeError(f"the check called the function more than {CALLS_LIMIT:,} times")
            mutable = {i: wire.canonical(wire.encode(a)) for i, a in enumerate(args) if type(a) in (list, dict, set)}
            real_args = [wire.unwrap(a, handles) for a in args]
            real_kwargs = {k: wire.unwrap(v, handles) for k, v in kwargs.items()}
            entry = {"slot": slot, "key": key}
            try:
                result = function(*real_args, **real_kwargs)
                try:
                    entry["out"] = wire.encode(result, handles)
                    value = wire.decode(entry["out"])
                except wire.TooLarge as error:
                    raise AnswerTooLarge(f"the value returned is too large to grade ({error})") from None
            except BaseException as error:
                entry.pop("out", None)
                entry["raised"] = _describe_raise(error)
                _mutations(entry, args, mutable)
                calls.append(entry)
                raise
            _mutations(entry, args, mutable)
            calls.append(entry)
            return value

        recorded.__name__ = recorded.__qualname__ = str(getattr(function, "__name__", "function"))
        return recorded


def _mutations(entry, args, before):
    after = []
    for index, text in before.items():
        try:
            now = wire.encode(args[index])
            if wire.canonical(now) != text:
                after.append([index, now])
        except Exception:
            pass
    if after:
        entry["after"] = after


def run_check(spec_json) -> str:
    """Call the student's functions as a fresh copy of the grader's check asks, recording each call.

    ``spec``: the check's module name and source (the grader's own, as public as the book), the
    check's name and parameters, and the candidate calls (:func:`handed_functions`). Returns
    JSON: ``missing`` names (or ``unevaluable``: a call that raised), or ``calls`` (the record
    the judge replays), which candidate was ``used``, whether the check ran to its end, and
    what it printed here (for the report only: the judge's copy decides)."""
    spec = json.loads(spec_json)
    functions, used = handed_functions(spec)
    if functions is None:
        return json.dumps(used)
    module = types.ModuleType(spec["module"])
    module.__file__ = spec["filename"]
    linecache.cache[spec["filename"]] = (len(spec["source"]), None, spec["source"].splitlines(True), spec["filename"])
    recorder = Recorder()
    result = {"calls": recorder.calls, "finished": False, "used": used}
    with Capture() as output:
        try:
            exec(compile(spec["source"], spec["filename"], "exec"), module.__dict__)
            check = module.__dict__[spec["check"]]
            check(*[recorder.wrap(slot, f) for slot, f in enumerate(functions)])
            result["finished"] = True
        except BaseException as error:
            described = _describe_raise(error)
            result["stopped"] = f"{described[0]}: {described[1]}"
    result["printed"] = output.text
    return json.dumps(result)


# A calls step (the instructor's hidden cases): the grader, outside, runs the cases and sends
# only the arguments of each call the cases make; the sandbox calls the student's function on
# them and sends back what came of it. No case's name, expected answer or source is ever here.
served = {}


def start_calls(spec_json) -> str:
    """Evaluate the functions for a calls step. Returns JSON: ``ok`` and the candidate ``used``,
    or why not (as :func:`run_check`)."""
    spec = json.loads(spec_json)
    functions, used = handed_functions(spec)
    served.clear()
    if functions is None:
        return json.dumps(used)
    recorder = Recorder()
    served.update(recorder=recorder, functions=[recorder.wrap(slot, f) for slot, f in enumerate(functions)])
    return json.dumps({"ok": True, "used": used})


def make_calls(calls_json) -> str:
    """Make the calls the grader asks for, in order; returns the new entries of the record (what
    the functions printed is dropped: it could only tell the student about the hidden cases)."""
    recorder, functions = served["recorder"], served["functions"]
    before = len(recorder.calls)
    for call in json.loads(calls_json):
        try:
            slot = int(call["slot"])
            args = [wire.decode(a) for a in call.get("args", [])]
            kwargs = {str(k): wire.decode(v) for k, v in call.get("kwargs", [])}
        except Exception:
            continue
        if not 0 <= slot < len(functions):
            continue
        with Capture():
            try:
                functions[slot](*args, **kwargs)
            except BaseException:
                pass  # recorded, raised or not
    return json.dumps(recorder.calls[before:])


def finish_calls() -> str:
    recorder = served.get("recorder")
    served.clear()
    return json.dumps({"calls": recorder.calls if recorder else [], "finished": True})
