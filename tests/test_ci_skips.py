"""CI cannot pass by skipping: under CI=true every skip is a failure (tests/conftest.py), whatever made it; on a
user's machine a test that needs what is missing skips with its reason."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

SKIPPING = '''
import pytest
from conftest import require, shared

def test_needs_a_program():
    require(False, "a program that is not here")

def test_needs_the_shared_data():
    shared("teacher/no_such_file.hcpe")

def test_needs_an_extra():
    pytest.importorskip("no_such_module_of_messiah")

@pytest.mark.skipif(True, reason="a marker")
def test_marked():
    pass

def test_that_runs():
    pass
'''


def run(tmp_path: Path, ci: str) -> subprocess.CompletedProcess:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    env = {**os.environ, "CI": ci, "MESSIAH_DATA": str(tmp_path / "no_data")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_every_skip_fails_under_ci(tmp_path):
    done = run(tmp_path, "true")
    assert done.returncode == 1, done.stdout[-2000:]
    assert "1 passed" in done.stdout and done.stdout.count("skipped under CI=true") >= 4, done.stdout[-2000:]


def test_outside_ci_a_missing_need_skips_with_its_reason(tmp_path):
    done = run(tmp_path, "")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "1 passed, 4 skipped" in done.stdout
    assert "needs a program that is not here" in done.stdout
    assert "needs the shared data's teacher/no_such_file.hcpe" in done.stdout
