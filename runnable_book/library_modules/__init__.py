"""Modules the tool writes into a book's ``chapter_lib`` as generated copies.

The page's Python (Pyodide), a reader's Colab or JupyterLab and the grader's sandbox import a
book's ``chapter_lib`` and never the tool, so what the book's checks need at run time is
copied into it by ``make lib`` (runnable_book/pipeline/extract_library.py), marked GENERATED,
its digest checked like every generated module. Edit the module here, never its copy.

=====================  ===================================================================
``exercise_harness``   -> ``chapter_lib/exercises/harness.py`` (a book with exercises): how
                       a reader check runs its cases, prints its verdict, and what the
                       verdict's lines earn; the page, the build and the grader read them.
=====================  ===================================================================
"""
