"""Grading a class's notebooks offline (ours): ``make grade SUBMISSIONS=<folder or zip>``.

The data flow: intake -> notebook -> grade (sandbox, then judge) -> results.json -> outputs.

==================  ===========================================================================
module              what it does
==================  ===========================================================================
``__main__``        the command: reads the class, grades it N at a time, progress, summary
``intake``          the class as handed in: a folder or an LMS zip, one notebook per student
``book``            what the book says: the exercises, their points, which are checked, the call
``notebook``        a submission read as data: its code cells, each in its exercise
``grade``           one submission: which cells run, the call judged, the sandbox's run, verdicts
``isolation``       how this machine boxes code in, or why it cannot (the grader fails closed)
``sandbox``         where the student's code runs: Pyodide in Node, in namespaces, with limits
``box/``            what runs inside: child.mjs, harness.py, wire.py; jail.sh builds the jail
``judge``           the verdict and points: the grader's own check on the recorded answers
``hidden``          the instructor's hidden cases (``HIDDEN=``; examples/hidden_cases.py)
``outputs``         every output from the results: report, CSVs, feedback
``report``          index.html, the course's report; results.json
``gradebook``       grades.csv, gradebook.csv, Canvas's and Moodle's formats, manual scores
``feedback``        each student's feedback: a page and their notebook
``shards``          ``SHARD=k/N`` and ``make grade-merge``
``generated_class``      a generated class (right, wrong, endless, broken): tests and ``make bench-grade``
``bench``           ``make bench-grade``
==================  ===========================================================================

docs/grading.md says why it is built this way and what it defends against.
"""
