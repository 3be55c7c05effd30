"""The page's Python side of "Run in your browser" (ours): run once in the worker's Pyodide
before any cell (worker.mjs fetches it with the runtime).

It runs a cell as IPython would show it (CodeRunner: the last expression's value, not after a
";"), loads matplotlib & co. on a cell's first import of them, stands in for input() and
IPython.display, shows tracebacks in IPython's form and colours, naming each cell as the reader
sees it ("Cell In[3]", "your cell 1 (added)"), and says in one sentence what this page cannot do where Python alone would give a
bare SyntaxError or ModuleNotFoundError: %pip and !pip, other magics and shell commands,
micropip, a package the page does not serve, and the 32-bit page's limits of size and memory.
"""
import builtins, importlib.util, linecache, random, re, sys, time, traceback, types
from pyodide.code import CodeRunner, find_imports
from pyodide.ffi import JsException
import _browser_run

# The memory snapshot this Python may be restored from is made with fixed random bytes, so that
# the same library always makes the same snapshot (runnable_book/pipeline/python_snapshot.mjs): the
# random module's state is drawn afresh here, as a new interpreter's would be.
random.seed()

# Packages loaded on a cell's first import of them (worker.mjs, loadPackages), by the top-level
# name a cell imports: matplotlib (and what it needs) is served beside the runtime, not loaded
# with it, so a page without figures costs no more than before.
ON_IMPORT = {"matplotlib": "matplotlib", "pylab": "matplotlib", "mpl_toolkits": "matplotlib",
             "numpy": "numpy", "PIL": "pillow"}
figures = None  # the figure backend (runner/figures.py), once matplotlib is loaded

# What this page's Python has, and where the rest is: said whenever a cell asks for more.
HAS = ("its Python runs in your browser with the standard library, chapter_lib, matplotlib, "
       "numpy and pillow")
ELSEWHERE = "download the page as a notebook and run it in JupyterLab, Binder or Colab for that"

class NotAvailableHere(Exception):
    """Something this page's Python cannot do: install packages, run magics or shell commands."""

def not_available_here(source):
    """The one-sentence reason a cell that does not compile asks for what the page lacks
    (an IPython magic or a shell command on a line of its own), or None."""
    for line in source.splitlines():
        found = re.match(r"\s*([%!]{1,2})\s*(\w+)", line)
        if not found:
            continue
        mark, word = found.groups()
        if word in ("pip", "conda", "mamba", "micropip"):
            return (f"{mark}{word} install cannot run in this page: {HAS}, and cannot install packages "
                    f"({ELSEWHERE}).")
        if mark.startswith("!"):
            return f"Shell commands ({mark}{word}) cannot run in this page: {HAS}, and no shell ({ELSEWHERE})."
        return (f"IPython's {mark}{word} is not available in this page: {HAS}, and runs each cell as "
                f"plain Python ({ELSEWHERE}).")
    return None

def missing_module(error):
    """A ModuleNotFoundError for a package the page does not have, said in one sentence
    (Pyodide's own message would suggest micropip, which cannot install anything here)."""
    name = (error.name or "").split(".")[0]
    if not name or importlib.util.find_spec(name) is not None:
        return error  # a module inside a package that exists: Python's message is right
    if name == "micropip":
        text = f"micropip cannot be used in this page: {HAS}, and cannot install packages ({ELSEWHERE})."
    else:
        text = f"No module named {name!r} in this page: {HAS}, and cannot install others ({ELSEWHERE})."
    replaced = ModuleNotFoundError(text, name=name)
    replaced.__traceback__ = error.__traceback__
    return replaced

class PackageNotLoaded(Exception):
    """A package this page serves could not be loaded (offline and not stored, most often):
    worker.mjs words it in one sentence, in place of Pyodide's error for each wheel."""

def replay_artist_docs():
    """matplotlib's property lists as make assets recorded them (runner/artist_docs.py, in the
    first figure's zip), so its import does not write them again. Without the zip (an older
    build's cache), matplotlib makes them, as before."""
    try:
        import _browser_artist_docs
    except ImportError:
        return
    _browser_artist_docs.replay_recorded()

async def load_what_it_imports(source):
    """Load the served packages a cell imports before it runs (and the figure backend)."""
    global figures
    try:
        imported = {name.split(".")[0] for name in find_imports(source)}
    except SyntaxError:
        return  # compiling the cell reports it
    wanted = sorted({ON_IMPORT[name] for name in imported if name in ON_IMPORT})
    if wanted:
        try:
            await _browser_run.load_packages(wanted)
        except JsException as error:
            raise PackageNotLoaded(str(error).removeprefix("Error: ")) from None
    if figures is None and "matplotlib" in wanted:
        import logging
        replay_artist_docs()
        import matplotlib
        matplotlib.use("module://_browser_figures")
        _browser_run.mark("matplotlib imported")
        # matplotlib reads the font cache make assets built (loadMissing); without one that
        # fits, its import builds one and logs a warning saying so: a step of loading, not
        # the cell's output.
        font_log = logging.getLogger("matplotlib.font_manager")
        level = font_log.level
        font_log.setLevel(logging.ERROR)
        try:
            import matplotlib.font_manager
            _browser_run.mark("font cache read")
            import _browser_figures as figures
        finally:
            font_log.setLevel(level)
        figures.send = _browser_run.figure
        _browser_run.mark("pyplot and the backend imported")

class InputNotAvailable(Exception):
    """input() in the page: there is no keyboard for Python to read from here."""

RELOAD_ISOLATES = False  # worker.mjs: a reload of this page would let input() read the keyboard

def no_input(prompt=""):
    if RELOAD_ISOLATES:
        raise InputNotAvailable(
            "input() cannot read what you type in this page until it is reloaded: reload the page "
            "(your edits are kept) and input() shows a field under the cell for your answer.")
    raise InputNotAvailable(
        "input() cannot read what you type in this page: Python runs in the page without "
        "a keyboard to read from. Put the value in the code instead (for example "
        "name = \"Ada\" in place of name = input(\"Name? \")), or download the page as a "
        "notebook and run it in JupyterLab or Colab, where input() works.")

builtins.input = no_input

def page_input(prompt=""):
    """input() on a cross-origin isolated page (worker.mjs puts it in place): a field under the
    cell with the prompt; once answered, the prompt and the answer in the output, as Jupyter."""
    import _browser_input
    prompt = str(prompt)
    sys.stdout.flush()  # what the cell printed before, above the field
    line = _browser_input.read(prompt)  # (the field shows the prompt while it waits)
    if line is None:  # Stop while waiting
        raise KeyboardInterrupt
    sys.stdout.write(prompt + line + "\n")
    return line

_sleep = time.sleep

def page_sleep(seconds):
    """time.sleep on a cross-origin isolated page (worker.mjs puts it in place): Stop ends the
    wait with KeyboardInterrupt, as it ends a loop, and every variable is kept."""
    import _browser_input
    if not isinstance(seconds, (int, float)) or seconds < 0 or seconds != seconds:
        return _sleep(seconds)  # Python's own error for a bad argument
    if _browser_input.sleep(float(seconds)):
        raise KeyboardInterrupt

# IPython.display (IPython itself is not in the browser): display.py, installed by worker.mjs as
# _browser_display. A value is shown as a bundle of MIME types, as IPython's formatter makes it;
# a matplotlib figure as the figure backend sends it.
import _browser_display

_browser_display.publish = _browser_run.display
_browser_display.clear = _browser_run.clear
_browser_display.show_figure = lambda value: bool(figures and figures.show_value(value))

ipython = types.ModuleType("IPython")
ipython.display = _browser_display
ipython.get_ipython = lambda: None  # as outside an IPython shell (matplotlib asks)
ipython_core = types.ModuleType("IPython.core")
ipython_core.display = _browser_display
ipython.core = ipython_core
sys.modules.update({"IPython": ipython, "IPython.display": _browser_display, "IPython.core": ipython_core,
                    "IPython.core.display": _browser_display, "IPython.core.display_functions": _browser_display})
builtins.display = _browser_display.display

# The page's Python is 32-bit WebAssembly: no size or index reaches 2**31, and all of its memory
# is at most 4 GB. Python's own words for meeting either limit say nothing of why.
TOO_BIG_FOR_AN_INDEX = ("index-sized integer", "C ssize_t", "Py_ssize_t")

def beyond_the_page(error):
    """An OverflowError of the 2 GB index limit, or a MemoryError, with one sentence saying
    what this page's Python can hold; any other error as it is."""
    if isinstance(error, OverflowError) and any(words in str(error) for words in TOO_BIG_FOR_AN_INDEX):
        text = (f"{error}: this page's Python is 32-bit (WebAssembly), so no size or index can reach "
                f"2**31 (one object holds at most about 2 GB); {ELSEWHERE}.")
    elif isinstance(error, MemoryError):
        text = ((f"{error}: " if str(error) else "") + "this page's Python ran out of memory: in the browser "
                f"(32-bit WebAssembly) it has at most 4 GB in all and about 2 GB for one object; {ELSEWHERE}.")
    else:
        return error
    replaced = type(error)(text)
    replaced.__traceback__ = error.__traceback__
    return replaced

namespace = sys.modules["__main__"].__dict__
cell_names = set()  # the filenames cells ran under ("cell 3"): their frames are shown as cells

# A traceback as IPython shows one in JupyterLab, in its colours (ANSI, drawn by ansi.mjs): a
# rule, the exception's name and "Traceback (most recent call last)", then each frame as
# "Cell In[3], line 2" (a book cell: its number on the page; an added cell by its name) or
# "File path:line", with the lines up to the one that raised, and last the exception.
RED, GREEN, CYAN, BOLD_GREEN, RESET = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0;36m", "\x1b[1;32m", "\x1b[0m"
CONTEXT_LINES = 2  # shown above the one that raised

def ipython_traceback(shown):
    """The text IPython would show for a traceback.TracebackException (its chain too)."""
    if shown.__cause__ is not None:
        return (ipython_traceback(shown.__cause__)
                + "\nThe above exception was the direct cause of the following exception:\n\n" + frames_and_error(shown))
    if shown.__context__ is not None and not shown.__suppress_context__:
        return (ipython_traceback(shown.__context__)
                + "\nDuring handling of the above exception, another exception occurred:\n\n" + frames_and_error(shown))
    return frames_and_error(shown)

def frames_and_error(shown):
    stack = [frame for frame in shown.stack if frame.filename != "<exec>"]  # (not this runner's code)
    if not stack:  # a SyntaxError in the cell, or what the page cannot do: Python's own form
        return "".join(shown.format(chain=False))
    *before, last = list(shown.format_exception_only())
    head, colon, rest = last.partition(":")
    name = head.strip().rsplit(".", 1)[-1]
    out = [RED + "-" * 75 + RESET + "\n", f"{RED}{name}{RESET}{' ' * max(1, 42 - len(name))}Traceback (most recent call last)\n"]
    for frame in stack:
        match = re.fullmatch(r"cell (\d+)", frame.filename)
        if frame.filename in cell_names:
            where = f"In[{match.group(1)}]" if match else frame.filename
            out.append(f"Cell {GREEN}{where}, line {frame.lineno}{RESET}")
        else:
            out.append(f"File {GREEN}{frame.filename}:{frame.lineno}{RESET}")
        out.append(f", in {CYAN}{frame.name}(){RESET}\n" if frame.name != "<module>" else "\n")
        lines = linecache.getlines(frame.filename)
        for number in range(max(1, frame.lineno - CONTEXT_LINES), frame.lineno + 1):
            text = lines[number - 1].rstrip() if number <= len(lines) else ""
            arrow = f"{BOLD_GREEN}----> {number}{RESET}" if number == frame.lineno else f"{number:>7}"
            out.append(f"{arrow} {text}\n")
        out.append("\n")
    out += before
    out.append(f"{RED}{head}{RESET}{colon}{rest}" if colon else f"{RED}{last.rstrip()}{RESET}\n")
    return "".join(out)

async def run_cell(source, filename):
    """Run one cell in the page's namespace; True when it raised nothing."""
    # linecache lets tracebacks quote the reader's lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    cell_names.add(filename)
    ok = False
    try:
        await load_what_it_imports(source)
        try:  # (CodeRunner parses the cell as it is made)
            runner = CodeRunner(source, filename=filename, return_mode="last_expr",
                                quiet_trailing_semicolon=True)
            runner.compile()
        except SyntaxError:
            reason = not_available_here(source)
            if reason is None:
                raise
            raise NotAvailableHere(reason) from None
        _browser_run.cell_code(True)  # (Stop waits for a cell that unwinds its own code: runner.mjs)
        try:
            value = await runner.run_async(namespace)
        finally:
            _browser_run.cell_code(False)
        sys.stdout.flush()
        if value is not None:
            _browser_display.display(value)
        ok = True
    except BaseException as error:
        sys.stdout.flush()
        if isinstance(error, ModuleNotFoundError):
            error = missing_module(error)
        error = beyond_the_page(error)
        # Drop the runner's own frames: the traceback starts in the reader's cell.
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next
        shown = traceback.TracebackException(type(error), error, tb)
        # ...and leaves out this runner's own code.
        shown.stack = traceback.StackSummary.from_list(
            [frame for frame in shown.stack if frame.filename != "<exec>"])
        sys.stderr.write(ipython_traceback(shown))
    finally:
        if figures:
            figures.end_of_cell(ok)
        sys.stdout.flush()
        sys.stderr.flush()
    return ok
