"""The worker pool that teacher generation and self-play's actors run in."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# A parent that opens a pool of one worker which never ends on its own: it reports its pid, then waits for the
# pool's stop event, as an actor between games does.
SCRIPT = textwrap.dedent("""
    import os, sys, time
    from train.pool import WorkerPool

    def work(results, stop):
        results.put(os.getpid())
        while not stop.is_set():
            time.sleep(0.05)

    if __name__ == "__main__":
        with WorkerPool(work, [()], RuntimeError, "every worker has exited", "it") as pool:
            while True:
                message = pool.next()
                if message is not None:
                    print(message, flush=True)
""")


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_sigterm_to_the_parent_ends_its_workers(tmp_path):
    """``pkill -f "messiah rl ..."`` signals the parent only: its spawned workers must end with it, not play on."""
    script = tmp_path / "parent.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    worker = None
    try:
        worker = int(parent.stdout.readline())
        assert _running(worker)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while _running(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(worker)
    finally:
        parent.kill()
        parent.wait()
        if worker is not None and _running(worker):  # the failure this test catches: do not leave it running
            os.kill(worker, signal.SIGKILL)
