"""Running the implementation under test: ``--impl`` functions in worker processes, ``--cmd``
programs as subprocesses; each instance under a time limit that grows with its size
(``time_limit``), every failure an :class:`Outcome` carrying the tail of what the
implementation wrote on stderr (``--cmd``) or its traceback (``--impl``).

A worker process (:mod:`._worker`; ``spawn``: a fresh interpreter, so a crash or hang of the
implementation cannot take the kit with it) imports ``MODULE:FUNCTION`` once and then answers
one instance at a time over a pipe; on a timeout it is killed (``SIGKILL``) and a new worker is
started for the next instance.  Workers start in the kit's working directory with the kit's
``sys.path`` plus that directory first, so ``MODULE`` is found as ``python -c "import MODULE"``
would find it.  Memory: each worker holds one instance (``K``: ``8 n^2`` bytes; a large-set
instance: its ``X``, ``8 n d`` bytes) and its answer.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait

from ..formats import load_solution
from ..formats.spec import one_line
from ._worker import text_tail, worker_main
from .cases import Case, KitError, impl_instance, write_instance

__all__ = ["Outcome", "ImplRunner", "CmdRunner", "SOLUTION_KEYS", "TIMEOUT", "TIMEOUT_PER_1000",
           "time_limit"]

SOLUTION_KEYS = frozenset({"task", "alpha", "alpha_hat", "alpha_check", "bias", "F", "meta"})
_START_TIMEOUT = 120.0  # seconds for a worker to start and import the implementation
TIMEOUT = 60.0  # seconds: the time limit of every instance (--timeout)
TIMEOUT_PER_1000 = 540.0  # seconds added at n = 1,000, growing as n^2 (--timeout-per-1000)
_STDERR_READ = 65536  # bytes read from the end of a program's stderr file


def time_limit(n: int, base: float = TIMEOUT, per_1000: float = TIMEOUT_PER_1000) -> float:
    """Seconds an instance of ``n`` points may take: ``base + per_1000 (n / 1000)^2`` (the
    defaults: 60 s at n = 10 or 100, 600 s at n = 1,000; ``per_1000 = 0``: a flat limit).

    The runners' limit (``base = timeout``, ``per_1000 = timeout_per_1000``, whose default
    there is 0: a flat limit), except for a case with its own ``time_limit`` (the large set),
    which keeps that instead."""
    return float(base) + float(per_1000) * (n / 1000.0) ** 2


@dataclass
class Outcome:
    """What the implementation returned for one case: ``status`` ``"ok"`` (``solution`` is the
    raw dict), ``"error"`` or ``"timeout"`` (``message`` says what happened); ``time`` is the
    wall time of the call (``--cmd``: of the program) in seconds; ``stderr_tail`` the last
    lines of the program's stderr (``--cmd``) or of the traceback (``--impl``) when it failed;
    ``time_limit`` the instance's limit in seconds."""

    status: str
    solution: dict | None
    message: str
    time: float
    stderr_tail: str | None = None
    time_limit: float | None = None


class _Worker:
    def __init__(self, ctx, target: str):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, target, os.getcwd()),
                                daemon=True)
        self.proc.start()
        child.close()
        self.case: Case | None = None
        self.deadline = 0.0
        self.sent = 0.0

    def wait_ready(self, timeout: float) -> None:
        if not self.conn.poll(timeout):
            self.kill()
            raise KitError(f"the implementation did not import within {timeout:g} s")
        try:
            kind, msg = self.conn.recv()
        except EOFError:
            self.kill()
            raise KitError("the worker process died while importing the implementation "
                           f"(exit code {self.proc.exitcode})") from None
        if kind != "ready":
            self.kill()
            raise KitError(f"cannot import the implementation: {msg}")

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()

    def close(self) -> None:
        try:
            self.conn.send(None)
            self.proc.join(2)
        except (OSError, ValueError):
            pass
        self.kill()


class _Limits:
    """The time limit of a case: its own (``case.time_limit``, the large set's) or else
    ``timeout + timeout_per_1000 (n / 1000)^2`` seconds."""

    timeout: float
    timeout_per_1000: float

    def limit(self, case: Case) -> float:
        if case.time_limit is not None:
            return float(case.time_limit)
        return time_limit(case.n, self.timeout, self.timeout_per_1000)


class ImplRunner(_Limits):
    """Run a Python function ``MODULE:FUNCTION`` on cases in worker processes, under a timeout.

    Each worker holds one instance at a time; a worker that exceeds its limit is killed and
    the case is a ``timeout``. Use as a context manager: entering starts one worker and
    imports the implementation, so an import error surfaces before any case runs.

    Parameters
    ----------
    target : str
        ``"MODULE:FUNCTION"``, imported in each worker (from the current directory).
    timeout, timeout_per_1000 : float, optional
        The limit of each call: ``time_limit`` of ``n`` (``--timeout`` and
        ``--timeout-per-1000`` of ``dank-verify conformance``).
    jobs : int, optional
        Worker processes run at the same time.

    Raises
    ------
    ValueError
        If ``target`` is not of the form ``MODULE:FUNCTION``.
    KitError
        On entering, if the implementation cannot be imported within 120 s.

    Notes
    -----
    Memory: each worker is a spawned Python process holding one instance (``8 n^2`` bytes for
    a dense ``K``; ``8 n d`` for a large-set ``X``) besides the implementation's own; up to
    ``jobs`` of them.
    """

    def __init__(self, target: str, timeout: float = TIMEOUT, jobs: int = 1,
                 timeout_per_1000: float = 0.0):
        if ":" not in target or not all(target.partition(":")[::2]):
            raise ValueError(f"--impl must be MODULE:FUNCTION, got {target!r}")
        self.target, self.timeout, self.jobs = target, float(timeout), int(jobs)
        self.timeout_per_1000 = float(timeout_per_1000)
        self._ctx = mp.get_context("spawn")
        self._idle: list[_Worker] = []

    def __enter__(self):
        try:
            self._idle.append(self._worker())  # an import error surfaces here, before any run
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()

    def _worker(self) -> _Worker:
        if self._idle:
            return self._idle.pop()
        w = _Worker(self._ctx, self.target)
        w.wait_ready(_START_TIMEOUT)
        return w

    def run(self, cases):
        """Yield ``(case, Outcome)`` as answers arrive (not necessarily in order)."""
        todo, busy = deque(cases), []
        while todo or busy:
            while todo and len(busy) < self.jobs:
                w, w.case = self._worker(), todo.popleft()
                w.conn.send(impl_instance(w.case))
                w.sent = time.perf_counter()
                w.deadline = w.sent + self.limit(w.case)
                busy.append(w)
            left = max(0.0, min(w.deadline for w in busy) - time.perf_counter())
            ready = wait([w.conn for w in busy], timeout=left)
            for w in list(busy):
                limit = self.limit(w.case)
                if w.conn in ready:
                    busy.remove(w)
                    out = self._answer(w)
                    out.time_limit = limit
                    yield w.case, out
                elif time.perf_counter() >= w.deadline:
                    busy.remove(w)
                    w.kill()
                    yield w.case, Outcome("timeout", None, f"no answer within {limit:g} s (the "
                                          "worker was killed)", limit, time_limit=limit)

    def _answer(self, w: _Worker) -> Outcome:
        try:
            kind, payload, elapsed, tail = w.conn.recv()
        except (EOFError, OSError):
            w.proc.join(5)
            code = w.proc.exitcode
            sig = f" (signal {signal.Signals(-code).name})" if code and code < 0 else ""
            w.kill()
            return Outcome("error", None, f"the implementation's process died, exit code "
                           f"{code}{sig}", time.perf_counter() - w.sent)
        self._idle.append(w)
        if kind == "ok":
            return Outcome("ok", payload, "", elapsed)
        return Outcome("error", None, payload, elapsed, stderr_tail=tail)


class CmdRunner(_Limits):
    """Run an external program on every case, one instance file in, one solution file out.

    ``{instance}`` and ``{solution}`` in ``command`` are replaced by the instance file and the
    path where the program must write its solution. A program that exceeds its limit is
    killed with its whole process group. The program's stderr goes to a file, whose last
    lines are kept when the program fails. Use as a context manager (the files live in a
    temporary directory removed on exit).

    Parameters
    ----------
    command : str
        The command line, split as a shell would (``shlex``); must contain ``{solution}``.
    timeout, timeout_per_1000 : float, optional
        The limit of each program: ``time_limit`` of ``n`` (``--timeout`` and
        ``--timeout-per-1000`` of ``dank-verify conformance``).
    jobs : int, optional
        Programs run at the same time.
    fmt : {"npz", "json"}, optional
        Format of the instance files (docs/FORMATS.md).

    Raises
    ------
    ValueError
        If ``command`` is empty or lacks ``{solution}``, or ``fmt`` is not npz or json.
    KitError
        On entering, if the program is neither on ``PATH`` nor a file.

    Notes
    -----
    Disk: one instance file and one solution file per case in the temporary directory; time
    per case: the program's own plus writing and reading those files.
    """

    def __init__(self, command: str, timeout: float = TIMEOUT, jobs: int = 1, fmt: str = "npz",
                 timeout_per_1000: float = 0.0):
        args = shlex.split(command)
        if not args or not any("{solution}" in a for a in args):
            raise ValueError("--cmd must name a program and contain {solution} (and usually "
                             "{instance})")
        if fmt not in ("npz", "json"):
            raise ValueError(f"--format must be npz or json, got {fmt!r}")
        self.args, self.timeout, self.jobs, self.fmt = args, float(timeout), int(jobs), fmt
        self.timeout_per_1000 = float(timeout_per_1000)
        self._tmp = tempfile.TemporaryDirectory(prefix="dank-conformance-")

    def __enter__(self):
        prog = self.args[0]
        if not (shutil.which(prog) or (os.sep in prog and os.path.isfile(prog))):
            self.close()
            raise KitError(f"cannot start {prog!r}: no such program (not on PATH, not a file)")
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self._tmp.cleanup()

    def _files(self, case: Case) -> tuple[str, str]:
        base = os.path.join(self._tmp.name, case.id)
        ip, sp = f"{base}_instance.{self.fmt}", f"{base}_solution.{self.fmt}"
        write_instance(case, ip)
        return ip, sp

    def _start(self, case: Case):
        ip, sp = self._files(case)
        argv = [a.replace("{instance}", ip).replace("{solution}", sp) for a in self.args]
        try:
            with open(sp + ".stderr", "wb") as err:  # a file: a chatty program cannot block
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                        start_new_session=True)
        except OSError as exc:
            raise KitError(f"cannot start {argv[0]!r}: {one_line(exc)}") from exc
        return proc, sp, time.perf_counter()

    def run(self, cases):
        """Yield ``(case, Outcome)`` as programs finish."""
        todo, busy = deque(cases), []
        while todo or busy:
            while todo and len(busy) < self.jobs:
                case = todo.popleft()
                busy.append((case, *self._start(case)))
            time.sleep(0.002)
            for item in list(busy):
                case, proc, sp, t0 = item
                elapsed = time.perf_counter() - t0
                if proc.poll() is None and elapsed < self.limit(case):
                    continue
                busy.remove(item)
                out = self._finish(case, proc, sp, elapsed)
                out.time_limit = self.limit(case)
                if out.status != "ok" and out.stderr_tail is None:
                    out.stderr_tail = _stderr_tail(sp + ".stderr")
                yield case, out

    def _finish(self, case: Case, proc, sp: str, elapsed: float) -> Outcome:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            limit = self.limit(case)
            return Outcome("timeout", None, f"no solution within {limit:g} s (the program was "
                           "killed)", limit)
        if proc.returncode != 0:
            tail = _stderr_tail(sp + ".stderr")
            last = f": {tail.splitlines()[-1].strip()[:300]}" if tail else ""
            code = proc.returncode
            sig = f" (signal {signal.Signals(-code).name})" if code < 0 and \
                -code in signal.valid_signals() else ""
            return Outcome("error", None, f"the program exited with code {code}{sig}{last}",
                           elapsed, stderr_tail=tail)
        if not os.path.exists(sp):
            return Outcome("error", None, "the program exited with code 0 but wrote no "
                           "solution file", elapsed)
        try:
            sol = load_solution(sp, n=case.n)
        except ValueError as exc:
            return Outcome("error", None, f"unreadable solution: {one_line(exc)}", elapsed)
        return Outcome("ok", sol, "", elapsed)


def _stderr_tail(path: str) -> str | None:
    """The tail of a program's stderr file (its last 64 KiB read, decoded as UTF-8)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - _STDERR_READ))
            data = fh.read()
    except OSError:
        return None
    return text_tail(data.decode("utf-8", "replace"))
