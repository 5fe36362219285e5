"""A child process's port and its stop, shared by the release's Space check and the measurements that start
app.py (tools/bench/)."""

import socket
import subprocess


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Ask an app process to stop; kill it if it has not within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
