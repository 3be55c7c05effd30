// What Python's snapshot has imported when it is made (ours): python_snapshot.mjs runs it, and
// `make bench-library` (runnable_book/bench/in_node/library_imports.mjs) starts from it.
//
// What the runner's page_python.py and display.py and a first cell import; chapter_lib last
// (it is what cells use). Each one left out is compiled from source in the page on every start
// (Pyodide's standard library is sources): json and base64 were most of the runner's setup.
// Of chapter_lib, the package and what its chapters' modules import (dataclasses, say), not
// the chapters' modules themselves: a page imports the chapters its cells use, when they use
// them (chapter_lib/__init__.py), and the snapshot every reader downloads stays the same size
// as chapters are added (`make bench-library` says what each would add).
export const SNAPSHOT_IMPORTS = `
import __future__, base64, builtins, importlib.util, json, linecache, random, re, sys, time, traceback, types, asyncio, logging
from pyodide.code import CodeRunner, find_imports
from pyodide.ffi import JsException
import chapter_lib

def _what_the_chapters_import():
    import pathlib
    for module in sorted(pathlib.Path(chapter_lib.__file__).parent.glob("chapter*.py")):
        for name in find_imports(module.read_text()):
            # (a package of Pyodide's not loaded yet, numpy say, is loaded on a cell's first use)
            if name != "chapter_lib" and importlib.util.find_spec(name) is not None:
                importlib.import_module(name)

_what_the_chapters_import()
del _what_the_chapters_import
`;
