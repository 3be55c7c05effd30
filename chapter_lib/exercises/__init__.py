"""Section 15.11, Exercises: worked solutions, reader checks and their fixtures (ours).

Nothing here is the chapter's code: the chapter's code is imported from
:mod:`chapter_lib.chapter15` and never changed. Every solution extends a *copy* (of the
corpus, of the question set, or of a function's globals, see
:func:`~chapter_lib.exercises.common.chapter_code_with`), so every other page prints
exactly what the chapter printed.

=====================  =====================================================================
module                 what it is
=====================  =====================================================================
``solution_1`` .. 7    GENERATED from the ``# @solution N`` cells of book/15_11_exercises.md
                       (``make lib``; never edit them: edit the page). The worked solutions
                       are code on the page, which a reader reads, edits and runs there.
``check_3`` .. 6       hand-written: the check a reader calls on their own function
``common``             hand-written: shared helpers and the checks' harness (verdict first)
``fixtures``           hand-written: the documents exercises 3 and 4 start from
=====================  =====================================================================

Every public name of these modules is importable from ``chapter_lib.exercises`` too, as
the page's start cells and the tests do.
"""

from chapter_lib.exercises.common import *  # noqa: F401,F403
from chapter_lib.exercises.fixtures import *  # noqa: F401,F403
from chapter_lib.exercises.solution_1 import *  # noqa: F401,F403
from chapter_lib.exercises.solution_2 import *  # noqa: F401,F403
from chapter_lib.exercises.solution_3 import *  # noqa: F401,F403
from chapter_lib.exercises.solution_4 import *  # noqa: F401,F403
from chapter_lib.exercises.solution_5 import *  # noqa: F401,F403
from chapter_lib.exercises.solution_6 import *  # noqa: F401,F403
from chapter_lib.exercises.solution_7 import *  # noqa: F401,F403
from chapter_lib.exercises.check_3 import *  # noqa: F401,F403
from chapter_lib.exercises.check_4 import *  # noqa: F401,F403
from chapter_lib.exercises.check_5 import *  # noqa: F401,F403
from chapter_lib.exercises.check_6 import *  # noqa: F401,F403
