"""What `make outputs` and `make book` tell the author: why each page ran, what it changed.

Every executed page gets one line: why it ran (which of its code cells, which library
definitions, or FORCE=1) and whether its outputs changed; a changed page gets a short
diff of its outputs, cell by cell, as text. Figures are compared by their bytes and
shown by a short digest of their bytes (the stored PNG and SVG are byte-stable, so an
unchanged figure keeps its digest; a diff of base64 or of SVG markup would tell a person
nothing).

We do not use nbdime here: its diff is precise, but a changed figure prints the whole SVG
(hundreds of lines), and it numbers the reader's notebook's cells (the install cell and
the headings we add shift them), not the page's code cells that the author edits.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from runnable_book.common.files import write_atomically
from runnable_book.pipeline.pages import shown
from runnable_book.repository import ROOT

MAX_LINES_PER_CELL = 12
MAX_LINES_PER_PAGE = 40
MAX_NAMES = 6
# A run stopped before its report (Ctrl-C, a crash) has executed pages no report has named,
# and rewritten their notebooks: the next run would find them up to date and say nothing. So
# before an executed page's stored notebook is rewritten (changed outputs or not), the notebook
# as last reported is kept here (once), with why the page ran, until a report has named it.
UNREPORTED = ROOT / "_build" / "unreported"


@dataclass
class PageRun:
    """What happened to one page's stored notebook."""

    page: Path
    status: str  # "executed", "updated" (rewritten, not executed) or "unchanged"
    reasons: list[str] = field(default_factory=list)  # why it was executed
    output_diff: list[str] | None = None  # None: not executed; []: outputs unchanged
    unreported: bool = False  # executed by a run stopped before its report (UNREPORTED)

    @property
    def summary(self) -> str:
        why = "; ".join(self.reasons) or "its inputs changed"
        outcome = "outputs unchanged" if not self.output_diff else "outputs changed"
        when = " by a run stopped before its report," if self.unreported else ""
        return f"{self.page.stem}: executed{when} because {why}; {outcome}"


def listed(names: list[str]) -> str:
    shown_names = ", ".join(f"`{n}`" for n in names[:MAX_NAMES])
    return shown_names + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def reasons(old: dict | None, new: dict) -> list[str]:
    """Why a page whose inputs were ``old`` must run now that they are ``new`` (itemized
    inputs, as runnable_book/pipeline/execute_pages.py stores them in the notebook)."""
    if not old:
        return ["its stored notebook has no record of its inputs"]
    why = []
    if old.get("kernel") != new.get("kernel"):
        why.append(f"its kernel changed ({old.get('kernel')} -> {new.get('kernel')})")
    if old.get("kernel_setup") != new.get("kernel_setup"):
        why.append("the kernel's setup changed (runnable_book/pipeline/page_inputs.py: KERNEL_SETUP)")
    matcher = difflib.SequenceMatcher(a=old.get("cells", []), b=new["cells"], autojunk=False)
    changed = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            changed += [f"code cell {j + 1} changed" for j in range(j1, j2)]
            changed += [f"a code cell was removed (was {i + 1})" for i in range(i1 + (j2 - j1), i2)]
        elif tag == "insert":
            changed += [f"code cell {j + 1} is new" for j in range(j1, j2)]
        elif tag == "delete":
            changed += [f"code cell {i + 1} of the last run was removed" for i in range(i1, i2)]
    why += changed[:MAX_NAMES] + ([f"{len(changed) - MAX_NAMES} more cells changed"] if len(changed) > MAX_NAMES else [])
    before, after = old.get("library", {}), new["library"]
    edited = [k for k in after if k in before and before[k] != after[k]]
    added = [k for k in after if k not in before]
    gone = [k for k in before if k not in after]
    if edited:
        why.append(f"library definitions it uses changed: {listed(edited)}")
    if added:
        why.append(f"it now uses {listed(added)}")
    if gone and not edited and not added:
        why.append(f"it no longer uses {listed(gone)}")
    return why


def rendered_outputs(cell) -> list[str]:
    """A code cell's outputs as the lines a reader reads (figures by a short digest).

    Consecutive chunks of one stream are joined first: a fresh run's stdout arrives in
    chunks whose boundaries vary (the stored notebook holds them merged), and a boundary
    inside a line is not a change.
    """
    lines, stream, text = [], None, ""
    for output in [*cell.get("outputs", []), {"output_type": "end"}]:
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == stream:
            text += output.get("text", "")
            continue
        lines += text.splitlines()
        stream, text = (output.get("name"), output.get("text", "")) if kind == "stream" else (None, "")
        if kind == "error":
            lines.append(f"{output.get('ename')}: {output.get('evalue')}")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            images = sorted(k for k in data if k.startswith("image/"))
            if images:
                digest = hashlib.sha256("".join(str(data[k]) for k in images).encode()).hexdigest()[:8]
                lines.append(f"[figure, sha256 {digest}…]")
            elif "text/plain" in data:
                lines += str(data["text/plain"]).splitlines()
    return lines


def output_diff(old_cells: list, new_cells: list, where: list[str]) -> list[str]:
    """A short diff of two runs' outputs, cell by cell (``where`` names each new cell).

    Cells are paired by their source where the code was edited around them, so an added
    cell shows as new rather than shifting every later cell's outputs.
    """
    matcher = difflib.SequenceMatcher(a=[c.source for c in old_cells], b=[c.source for c in new_cells],
                                      autojunk=False)
    pairs = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        olds, news = list(range(i1, i2)), list(range(j1, j2))
        if tag in ("equal", "replace"):
            pairs += list(zip(olds, news))
            pairs += [(None, j) for j in news[len(olds):]]
        elif tag == "insert":
            pairs += [(None, j) for j in news]
    lines = []
    for i, j in pairs:
        before = rendered_outputs(old_cells[i]) if i is not None else []
        after = rendered_outputs(new_cells[j])
        if before == after:
            continue
        body = [line.rstrip("\n") for line in difflib.unified_diff(before, after, lineterm="", n=1)][2:]
        body = [line for line in body if not line.startswith("@@")]
        more = len(body) - MAX_LINES_PER_CELL
        lines.append(f"{where[j]}:")
        lines += [f"  {b}" for b in body[:MAX_LINES_PER_CELL]] + ([f"  … {more} more lines"] if more > 0 else [])
    if len(lines) > MAX_LINES_PER_PAGE:
        lines = lines[:MAX_LINES_PER_PAGE] + [f"… {len(lines) - MAX_LINES_PER_PAGE} more lines"]
    return lines


def report(runs: list[PageRun], stored_path, pages: int | None = None, kept: Path | None = None) -> str:
    """The closing report: one line per executed or failed page, and the diff of each
    changed one. ``pages``: how many notebook pages the book has (default: the runs).
    ``kept``: where a failed build keeps what it made, the tree being put back as it was
    (runnable_book/pipeline/tree_rollback.py): each diff then points there."""
    pages = len(runs) if pages is None else pages
    executed = [r for r in runs if r.status in ("executed", "failed")]
    if not executed:
        return "Change report: no page was executed (no page's code or library inputs changed)."
    failed = sum(r.status == "failed" for r in executed)
    head = (f"Change report: {len(executed)} of {pages} pages executed, "
            f"{sum(bool(r.output_diff) for r in executed)} with changed outputs"
            + (f", {failed} failed (stored notebook kept)" if failed else ""))
    lines = [head]
    for run in executed:
        if run.status == "failed":
            why = "; ".join(run.reasons) or "its inputs changed"
            lines.append(f"  {run.page.stem}: executed because {why}; FAILED (its stored notebook was kept)")
            continue
        lines.append(f"  {run.summary}")
        if run.output_diff:
            lines += [f"      {line}" for line in run.output_diff]
            lines.append(f"      (all of it: {whole_diff(stored_path(run.page), kept)})")
    return "\n".join(lines)


def whole_diff(stored: Path, kept: Path | None) -> str:
    """The command that shows a changed notebook whole: git's diff of the tree, or, when a failed
    build put the tree back, of the notebook it kept against the tree's."""
    made = kept / stored.relative_to(ROOT) if kept is not None else None
    if made is None or not made.is_file():
        return f"git diff {shown(stored)}"
    return f"git diff --no-index {shown(stored)} {shown(made)}"


# ---- changes no report has shown yet ----------------------------------------------------

def remember_unreported(page: Path, last_reported: str | None, why: list[str]) -> None:
    """Before ``page``'s stored notebook is rewritten with changed outputs: keep the notebook as
    last reported (``last_reported``: its text; None for a page that had none), unless an
    earlier unreported rewrite already kept it, and why the page ran."""
    notebook, reasons = UNREPORTED / f"{page.stem}.ipynb", UNREPORTED / f"{page.stem}.json"
    if not reasons.is_file():
        if last_reported is not None:
            write_atomically(notebook, last_reported)
        previous = []
    else:
        previous = json.loads(reasons.read_text())["reasons"]
    reasons_now = previous + [reason for reason in why if reason not in previous]
    write_atomically(reasons, json.dumps({"page": shown(page), "reasons": reasons_now}) + "\n")


def unreported() -> dict[str, tuple[Path | None, list[str]]]:
    """Page stem -> (its notebook as last reported, or None for a page that had none; why it ran)."""
    found = {}
    for reasons in sorted(UNREPORTED.glob("*.json")) if UNREPORTED.is_dir() else []:
        notebook = reasons.with_suffix(".ipynb")
        found[reasons.stem] = (notebook if notebook.is_file() else None, json.loads(reasons.read_text())["reasons"])
    return found


def forget_unreported(pages: list[Path] | None = None) -> None:
    """A report has shown the changes of ``pages`` (None: of every page)."""
    if pages is None:
        shutil.rmtree(UNREPORTED, ignore_errors=True)
        return
    for page in pages:
        for kept in (UNREPORTED / f"{page.stem}.ipynb", UNREPORTED / f"{page.stem}.json"):
            kept.unlink(missing_ok=True)
