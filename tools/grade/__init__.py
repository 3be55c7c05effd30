"""Grading a class's notebooks offline (ours): ``make grade SUBMISSIONS=<folder>``.

==================  ===========================================================================
module              what it does
==================  ===========================================================================
``__main__``        the command: finds the notebooks, grades them N at a time, progress, summary
``book``            what the book says: the exercises, which are checked, the check's call
``notebook``        a submission read as data: its code cells, each in its exercise
``grade``           one submission: which cells run, the sandbox's run, the verdicts
``sandbox``         where the student's code runs: Pyodide in Node, in namespaces, with limits
``box/``            what runs inside: child.mjs, harness.py, wire.py; jail.sh builds the jail
``judge``           the verdict: the grader's own check replayed on the student's recorded answers
``report``          _build/grades/grades.csv and index.html
``fake_class``      a generated class (right, wrong, endless, broken): tests and ``make bench-grade``
``bench``           ``make bench-grade``
==================  ===========================================================================

MAINTAINING.md, "Grading a class", says why it is built this way and what it defends against.
"""
