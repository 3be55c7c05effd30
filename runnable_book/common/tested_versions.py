"""The exact versions the tool is tested with, which a new book pins (new_book) and the tool's
wheel carries (release/tool_wheel.py): its book's lock, less the book's own package."""

from __future__ import annotations

from runnable_book.repository import TOOL

# In a wheel: this file, written in by release/tool_wheel.py. In a checkout of the book the
# tool sits in: that book's lock (`make requirements`).
IN_THE_PACKAGE = TOOL / "tested-versions.txt"
CHECKOUT_LOCK = TOOL.parent / "requirements.txt"


def tested_versions() -> str:
    """One ``name==version`` line each (with a marker where a Python differs); FileNotFoundError
    when this copy of the tool has no record of them."""
    lock = IN_THE_PACKAGE if IN_THE_PACKAGE.is_file() else CHECKOUT_LOCK
    if not lock.is_file():
        raise FileNotFoundError(f"this copy of the tool has no record of the versions it was tested with ({IN_THE_PACKAGE.name})")
    pins = [line for line in lock.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith(("#", "-"))]  # (comments; `-e .`, the book's own)
    return "\n".join(pins) + "\n"
