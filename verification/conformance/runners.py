"""Running the implementation under test: ``--impl`` functions in worker processes, ``--cmd``
programs as subprocesses; each instance under a timeout, every failure an :class:`Outcome`.

A worker process (:mod:`._worker`; ``spawn``: a fresh interpreter, so a crash or hang of the
implementation cannot take the kit with it) imports ``MODULE:FUNCTION`` once and then answers
one instance at a time over a pipe; on a timeout it is killed (``SIGKILL``) and a new worker is
started for the next instance.  Workers start in the kit's working directory with the kit's
``sys.path`` plus that directory first, so ``MODULE`` is found as ``python -c "import MODULE"``
would find it.  Memory: each worker holds one instance (``K``: ``8 n^2`` bytes) and its answer.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait

from ..formats import load_solution, save_instance
from ..formats.spec import one_line
from ._worker import worker_main
from .cases import Case, KitError, impl_instance

__all__ = ["Outcome", "ImplRunner", "CmdRunner", "SOLUTION_KEYS"]

SOLUTION_KEYS = frozenset({"task", "alpha", "alpha_hat", "alpha_check", "bias", "F", "meta"})
_START_TIMEOUT = 120.0  # seconds for a worker to start and import the implementation


@dataclass
class Outcome:
    """What the implementation returned for one case: ``status`` ``"ok"`` (``solution`` is the
    raw dict), ``"error"`` or ``"timeout"`` (``message`` says what happened); ``time`` is the
    wall time of the call (``--cmd``: of the program) in seconds."""

    status: str
    solution: dict | None
    message: str
    time: float


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


class ImplRunner:
    """Run ``MODULE:FUNCTION`` on cases in up to ``jobs`` worker processes (one instance each
    at a time), each call limited to ``timeout`` seconds.  Use as a context manager."""

    def __init__(self, target: str, timeout: float = 60.0, jobs: int = 1):
        if ":" not in target or not all(target.partition(":")[::2]):
            raise ValueError(f"--impl must be MODULE:FUNCTION, got {target!r}")
        self.target, self.timeout, self.jobs = target, float(timeout), int(jobs)
        self._ctx = mp.get_context("spawn")
        self._idle: list[_Worker] = []

    def __enter__(self):
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
                w.deadline = w.sent + self.timeout
                busy.append(w)
            left = max(0.0, min(w.deadline for w in busy) - time.perf_counter())
            ready = wait([w.conn for w in busy], timeout=left)
            for w in list(busy):
                if w.conn in ready:
                    busy.remove(w)
                    yield w.case, self._answer(w)
                elif time.perf_counter() >= w.deadline:
                    busy.remove(w)
                    w.kill()
                    yield w.case, Outcome("timeout", None, f"no answer within {self.timeout:g} "
                                          "s (the worker was killed)", self.timeout)

    def _answer(self, w: _Worker) -> Outcome:
        try:
            kind, payload, elapsed = w.conn.recv()
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
        return Outcome("error", None, payload, elapsed)


class CmdRunner:
    """Run a program per case: ``{instance}`` and ``{solution}`` in ``command`` are replaced by
    the instance file (written in ``fmt``, ``"npz"`` or ``"json"``) and the path where the
    program must write its solution.  Up to ``jobs`` programs at a time, each killed (its whole
    process group) after ``timeout`` seconds."""

    def __init__(self, command: str, timeout: float = 60.0, jobs: int = 1, fmt: str = "npz"):
        args = shlex.split(command)
        if not args or not any("{solution}" in a for a in args):
            raise ValueError("--cmd must name a program and contain {solution} (and usually "
                             "{instance})")
        if fmt not in ("npz", "json"):
            raise ValueError(f"--format must be npz or json, got {fmt!r}")
        self.args, self.timeout, self.jobs, self.fmt = args, float(timeout), int(jobs), fmt
        self._tmp = tempfile.TemporaryDirectory(prefix="dank-conformance-")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self._tmp.cleanup()

    def _files(self, case: Case) -> tuple[str, str]:
        base = os.path.join(self._tmp.name, case.id)
        ip, sp = f"{base}_instance.{self.fmt}", f"{base}_solution.{self.fmt}"
        inst = impl_instance(case)
        if "X" in inst:
            inst.pop("K")
        save_instance(ip, **inst)
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
                if proc.poll() is None and elapsed < self.timeout:
                    continue
                busy.remove(item)
                yield case, self._finish(case, proc, sp, elapsed)

    def _finish(self, case: Case, proc, sp: str, elapsed: float) -> Outcome:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return Outcome("timeout", None, f"no solution within {self.timeout:g} s (the "
                           "program was killed)", self.timeout)
        with open(sp + ".stderr", "rb") as fh:
            err = fh.read().decode("utf-8", "replace").strip().splitlines()
        if proc.returncode != 0:
            last = f": {err[-1][:300]}" if err else ""
            return Outcome("error", None, f"the program exited with code {proc.returncode}"
                           f"{last}", elapsed)
        if not os.path.exists(sp):
            return Outcome("error", None, "the program exited with code 0 but wrote no "
                           "solution file", elapsed)
        try:
            sol = load_solution(sp, n=case.n)
        except ValueError as exc:
            return Outcome("error", None, f"unreadable solution: {one_line(exc)}", elapsed)
        return Outcome("ok", sol, "", elapsed)
