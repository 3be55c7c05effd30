"""Ctrl-C while pages execute: their kernels are stopped at once, and the build unwinds.

jupyter_client starts each kernel in a session of its own, so a Ctrl-C in the terminal reaches
the build but never its kernels; and nbclient answers it by asking each kernel to shut down,
which a kernel busy in a cell does not do, while the cell goes on being waited for: the build
hung, and ended (when the cell did) in a traceback of CancelledError. Here, while pages
execute (``stopped_on_ctrl_c`` around page_kernel.execute's event loop, ``listening``
inside it), Ctrl-C kills the kernels started for them (each one's process group), so nbclient
finds them dead and returns at once; no kernel or cell starts after it; and KeyboardInterrupt
is raised once the execution has unwound, for the build to say, in one line, what it kept.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading


class Interrupted(Exception):
    """Raised inside the execution (an ordinary exception: asyncio lets KeyboardInterrupt
    escape its tasks) where a new kernel or cell would start after Ctrl-C."""


class _Execution:
    def __init__(self):
        self.clients: list = []
        self.interrupted = False

    def on_ctrl_c(self) -> None:
        self.interrupted = True
        for client in self.clients:
            pid = getattr(getattr(getattr(client, "km", None), "provisioner", None), "pid", None)
            if pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)  # (its own session: the group is the kernel's)


_CURRENT: _Execution | None = None


def watch(client) -> None:
    """An nbclient client whose kernel Ctrl-C must stop; raises Interrupted after Ctrl-C."""
    if _CURRENT is not None:
        if _CURRENT.interrupted:
            raise Interrupted
        _CURRENT.clients.append(client)


def check() -> None:
    """Where a cell is about to run: Interrupted after Ctrl-C."""
    if _CURRENT is not None and _CURRENT.interrupted:
        raise Interrupted


@contextlib.contextmanager
def listening(loop):
    """Inside the execution's event loop: Ctrl-C stops its kernels.

    Through the loop's own signal handling, which wakes it (a plain handler waits for the main
    thread, asleep in the loop's select() while the signal lands on another thread). And ours
    alone: nbclient adds its own for each kernel, which starts a polite shutdown the busy kernel
    never answers and leaves the cell waiting (the last one added replaced ours, and the first
    one removed left none), so on this loop, while the block runs, no one else's is added."""
    if _CURRENT is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    add, remove = loop.add_signal_handler, loop.remove_signal_handler
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # (a background job's: it stays so)
    if not ignored:
        add(signal.SIGINT, _CURRENT.on_ctrl_c)
    loop.add_signal_handler = lambda signum, *args: None if signum == signal.SIGINT else add(signum, *args)
    loop.remove_signal_handler = lambda signum: False if signum == signal.SIGINT else remove(signum)
    try:
        yield
    finally:
        del loop.add_signal_handler, loop.remove_signal_handler  # (the loop's own methods again)
        if not ignored:
            remove(signal.SIGINT)  # (and Python's default handler back)


@contextlib.contextmanager
def stopped_on_ctrl_c():
    """Around an execution's event loop (which calls ``listen``): KeyboardInterrupt when the
    loop has ended, if Ctrl-C came meanwhile."""
    global _CURRENT
    execution, outer = _Execution(), _CURRENT
    _CURRENT = execution
    try:
        yield
    finally:
        _CURRENT = outer
        if execution.interrupted:
            # nbclient registers each client's kernel cleanup to run at exit, and takes it back
            # only once the kernel started and was shut down: a kernel killed while it started
            # (or while nbclient cleaned it up) left it registered, and at exit it failed on the
            # dead kernel, printing "Exception ignored in atexit callback" and an AssertionError
            # after the build's one line. Every kernel here was killed, or shut down as the execution
            # unwound: nothing is left to clean.
            for client in execution.clients:
                atexit.unregister(client._cleanup_kernel)
            raise KeyboardInterrupt
