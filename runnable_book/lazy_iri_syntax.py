"""jsonschema's IRI syntax check, loaded when a schema first asks for it, not at every import.

jsonschema (imported by nbformat, so by every tool of ours, nbclient and the Sphinx build)
imports ``rfc3987_syntax`` as it is imported, for the ``iri`` and ``iri-reference`` formats
of its format-nongpl extra (JupyterLab's jupyter-events asks for that extra, so
requirements.txt has it). That import builds about 35 Earley parsers with Lark: 0.8 s of
CPU in every such process (``python -X importtime -c "import nbformat"``), and `make test`
starts dozens of them. No schema the book validates (notebooks, Jupyter's events) uses
either format. This is python-jsonschema/jsonschema#1428; no released jsonschema or
rfc3987-syntax loads it lazily yet.

:func:`install` puts a stand-in module in ``sys.modules`` whose ``is_valid_syntax`` imports
the real one on its first call and hands over to it: jsonschema validates an IRI as before,
and a process that never validates one never builds the parsers. It must run before the
first import of jsonschema: ``runnable_book/__init__.py`` runs it for every ``python -m runnable_book.…``,
and pyproject.toml's pytest ``addopts`` loads this module first (``-p``), before the
plugins (nbval) that import nbformat. Processes that start elsewhere (JupyterLab, a bare
``jupyter-book build``) pay the import as before. The environment itself is untouched: it
is requirements.txt alone.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

MODULE = "rfc3987_syntax"


def install() -> None:
    """The stand-in, unless the real module is imported already or is not installed."""
    if MODULE in sys.modules or importlib.util.find_spec(MODULE) is None:
        return
    stand_in = types.ModuleType(MODULE, "Stand-in for rfc3987_syntax until its first use (runnable_book/lazy_iri_syntax.py).")

    def is_valid_syntax(term: str, value: str) -> bool:
        if sys.modules.get(MODULE) is stand_in:
            del sys.modules[MODULE]
        real = importlib.import_module(MODULE)
        stand_in.is_valid_syntax = real.is_valid_syntax  # (a caller holding the stand-in gets the real one next)
        return real.is_valid_syntax(term, value)

    stand_in.is_valid_syntax = is_valid_syntax
    sys.modules[MODULE] = stand_in


install()
