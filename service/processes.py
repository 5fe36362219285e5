"""Worker processes forked from a pre-imported parent: `python -m <module> <args>` without importing torch each time.

The training worker (service.jobs), a Ray job's driver (service.remote) and the model worker (service.serving) each
began with imports that cost 4-5 CPU-s on a 2-core machine: torch, torch.optim (which imports torch._dynamo), spaCy.
A fork server (`python -m service.processes`, started with the first worker) imports them once and forks every
worker from it; the worker then runs its module as `python -m` does (runpy) in the environment, folder and standard
streams the app gives it (file descriptors passed over a Unix socket). Only modules outside the project are
preloaded: the project's own are imported in the worker once its environment is set, so what they read at import
is the worker's. multiprocessing's forkserver would do the forking, but it imports the app's main module in each
child again, and app.py builds the whole page at import (as a Space's app.py does).

The server is single-threaded, ends when the app does (its socket closes) and takes its workers with it (Linux's
parent-death signal, SIGTERM); it reaps them and tells the app each one's exit status. A worker's process name
(ps, /proc/<pid>/comm) is its module's, since its command line is the server's.
"""

import contextlib
import ctypes
import importlib
import json
import os
import queue
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

PRELOADED = ("torch", "torch.optim", "spacy", "huggingface_hub", "safetensors.torch")
PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15  # linux/prctl.h
MESSAGE_BYTES = 1 << 20  # one request: a module, its arguments and its environment
LOST = -signal.SIGTERM  # the exit status of a worker whose server died: its parent-death signal


@dataclass
class _Exit:
    code: int | None = None
    ended: threading.Event = field(default_factory=threading.Event)


class Worker:
    """A forked worker, through the part of subprocess.Popen's interface that the queues use."""

    def __init__(self, server: "_Server", pid: int, exit: _Exit, stdin: IO[str] | None, stdout: IO[str] | None):
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self._server, self._exit = server, exit

    @property
    def returncode(self) -> int | None:
        return self._exit.code  # as Popen's: -N when signal N ended it

    def poll(self) -> int | None:
        return self._exit.code

    def wait(self, timeout: float | None = None) -> int:
        if not self._exit.ended.wait(timeout) or self._exit.code is None:  # the code is set before `ended`
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
        return self._exit.code

    def terminate(self) -> None:
        self._server.signal(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        self._server.signal(self.pid, signal.SIGKILL)


class _Server:
    """The app's side of the fork server: requests go out on the socket, a thread reads what comes back (each
    started worker's pid, in order, and each ended worker's exit status)."""

    def __init__(self, cwd: Path):
        self.socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.processes", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.lock = threading.Lock()  # one request at a time: the pids come back in the requests' order
        self.started: queue.Queue[tuple[int, _Exit] | None] = queue.Queue()
        self.exits: dict[int, _Exit] = {}
        self.alive = True
        threading.Thread(target=self._read, daemon=True, name="fork-server").start()

    def fork(self, request: dict, fds: list[int]) -> tuple[int, _Exit]:
        with self.lock:
            socket.send_fds(self.socket, [json.dumps(request).encode()], fds)
            if (started := self.started.get()) is None:
                raise OSError("the fork server ended")
            return started

    def signal(self, pid: int, signum: int) -> None:
        """Through the server, which signals only a worker it has not reaped (its pid cannot be another's yet)."""
        try:
            self.socket.send(json.dumps({"signal": signum, "pid": pid}).encode())
        except OSError:  # the server is gone, and its workers with it
            pass

    def _read(self) -> None:
        while message := self.socket.recv(MESSAGE_BYTES):
            news = json.loads(message)
            if "started" in news:
                self.exits[news["started"]] = exit = _Exit()
                self.started.put((news["started"], exit))
            else:  # every worker the server reaps was started by this app: its pid came first
                ended = self.exits.pop(news["ended"])
                ended.code = news["code"]
                ended.ended.set()
        self.alive = False
        self.started.put(None)
        for exit in self.exits.values():
            exit.code = LOST
            exit.ended.set()


_SERVER: _Server | None = None
_SERVER_LOCK = threading.Lock()


def start(
    module: str, args: list[str], env: dict[str, str], cwd: Path, log: Path | None = None, pipes: bool = False
) -> Worker:
    """`python -m <module> <args>` forked from the fork server, in `env` and `cwd`: with `log`, its stdout and stderr
    are appended to that file; with `pipes`, its stdin and stdout are text pipes from and to this process
    (Worker.stdin, Worker.stdout); otherwise it writes where this process does. Its stdin is otherwise empty."""
    global _SERVER
    ours: list[int] = []  # this process's ends: kept
    theirs: list[int] = []  # the worker's: closed here once sent
    if pipes:
        (stdin_read, stdin_write), (stdout_read, stdout_write) = os.pipe(), os.pipe()
        ours, theirs = [stdin_write, stdout_read], [stdin_read, stdout_write]
        fds = [stdin_read, stdout_write, 2]
    else:
        theirs.append(os.open(os.devnull, os.O_RDONLY))
        if log is not None:
            theirs.append(os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
        fds = [theirs[0], theirs[-1], theirs[-1]] if log else [theirs[0], 1, 2]
    try:
        with _SERVER_LOCK:
            if _SERVER is None or not _SERVER.alive:
                _SERVER = _Server(cwd)
            server = _SERVER
        pid, exit = server.fork({"module": module, "args": args, "env": env, "cwd": str(cwd)}, fds)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    if not pipes:
        return Worker(server, pid, exit, None, None)
    return Worker(server, pid, exit, open(ours[0], "w", encoding="utf-8"), open(ours[1], encoding="utf-8"))


def serve(app: socket.socket) -> None:
    """The fork server's life: the preloaded imports, then a worker forked per request, each one's exit status
    sent back once reaped, until the app's end of the socket closes."""
    for name in PRELOADED:
        with contextlib.suppress(ImportError):  # an install without the training extras: its workers import less
            importlib.import_module(name)
    wake_read, wake_write = os.pipe()  # SIGCHLD wakes the loop: a worker to reap
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    server = os.getpid()
    with selectors.DefaultSelector() as events:
        events.register(app, selectors.EVENT_READ)
        events.register(wake_read, selectors.EVENT_READ)
        while True:
            for key, _ in events.select():
                if key.fileobj is not app:
                    os.read(wake_read, 512)
                    continue
                message, fds, _, _ = socket.recv_fds(app, MESSAGE_BYTES, 3)
                if not message:
                    return  # the app is gone: the workers follow (their parent-death signal)
                request = json.loads(message)
                if "signal" in request:
                    if request["pid"] in children:
                        os.kill(request["pid"], request["signal"])
                    continue
                pid = os.fork()
                if pid == 0:
                    _worker(request, fds, [app.fileno(), wake_read, wake_write], server)
                children.add(pid)
                for fd in fds:
                    os.close(fd)
                app.send(json.dumps({"started": pid}).encode())
            while children and (ended := os.waitpid(-1, os.WNOHANG))[0]:
                children.discard(ended[0])
                app.send(json.dumps({"ended": ended[0], "code": os.waitstatus_to_exitcode(ended[1])}).encode())


def _worker(request: dict, fds: list[int], servers: list[int], server: int) -> None:
    """The forked child, `python -m` for its module as far as it can tell; it never returns to the server's loop."""
    code: int = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in servers:
            os.close(fd)
        if sys.platform.startswith("linux"):
            libc = ctypes.CDLL(None)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
            libc.prctl(PR_SET_NAME, request["module"].encode()[:15])
            if os.getppid() != server:  # the server (and its app) ended before the signal was asked for
                return
        for target, fd in enumerate(fds):  # stdin, stdout, stderr
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        threads, torch = request["env"].get("OMP_NUM_THREADS"), sys.modules.get("torch")
        if threads and torch is not None:  # OpenMP read it at the server's import of torch, in the server's environment
            torch.set_num_threads(int(threads))
        os.chdir(request["cwd"])
        # the path `python -m` would start with: its folder, then PYTHONPATH
        sys.path[:1] = [request["cwd"], *filter(None, request["env"].get("PYTHONPATH", "").split(os.pathsep))]
        sys.argv = [request["module"], *request["args"]]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:  # sys.exit(status) or sys.exit(message), as the interpreter reads it
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
    os._exit(0)  # at once: the workers' parent-death signal comes as the server ends, not after torch's teardown
