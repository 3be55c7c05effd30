"""``SHARD=k/N``: one machine's share of work split among N (grading a class, executing a book's pages).

The words are said here once; what is shared out, and how, is the caller's
(runnable_book/grade/shards.py: students by a hash of their key; runnable_book/pipeline/execute_shards.py:
the pages that need executing, every N-th).
"""

from __future__ import annotations

import re


class ShardProblem(Exception):
    """The shards cannot be run or merged: the message says which and why."""


def parse(text: str) -> tuple[int, int]:
    """``SHARD=2/3`` -> (2, 3)."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise ShardProblem(f"SHARD={text!r}: write it as k/N, with 1 <= k <= N (for example SHARD=2/3)")
    return int(found.group(1)), int(found.group(2))


def folder_name(k: int, n: int) -> str:
    return f"shard-{k}-of-{n}"
