"""Code from chapter 15, Advanced and Agentic Retrieval, for reuse by later sections.

``chapter15`` is generated from the book's ``# @save`` cells (``make lib``); never edit it
by hand. ``from chapter_lib import search`` works because its public names are
re-exported here.
"""

from .chapter15 import *  # noqa: F401,F403  (the generated module defines __all__)
from .chapter15 import __all__  # noqa: F401
