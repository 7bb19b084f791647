"""messiah.environment: what a run or a match ran on, the code's commit included, and nothing made up where
messiah does not run from a git checkout."""

import shutil
import subprocess

import pytest

from messiah import environment as env

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")


def git(folder, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@needs_git
def test_a_checkout_says_its_commit_and_whether_tracked_files_changed(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "messiah").mkdir(parents=True)
    (repo / "messiah" / "a.py").write_text("x = 1\n")
    git(repo, "init", "-q")
    git(repo, "add", "messiah/a.py")
    git(repo, "commit", "-q", "-m", "a")
    monkeypatch.setattr(env, "CHECKOUT", repo)
    assert env.code_version() == {"commit": git(repo, "rev-parse", "HEAD"), "dirty": False}
    (repo / "run.log").write_text("a run's own output, untracked\n")
    assert env.code_version()["dirty"] is False
    (repo / "messiah" / "a.py").write_text("x = 2\n")
    assert env.code_version()["dirty"] is True
    recorded = env.environment()
    assert (recorded["commit"], recorded["dirty"]) == (git(repo, "rev-parse", "HEAD"), True)


@needs_git
def test_no_commit_is_claimed_outside_a_checkout_of_messiah(tmp_path, monkeypatch):
    """An installed wheel: no repository at all, or site-packages inside some other repository (a virtual
    environment in a project's folder), or no git: commit and dirty are None."""
    monkeypatch.setattr(env, "CHECKOUT", tmp_path)
    assert env.code_version() == {"commit": None, "dirty": None}
    git(tmp_path, "init", "-q")
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    monkeypatch.setattr(env, "CHECKOUT", site)
    assert env.code_version() == {"commit": None, "dirty": None}
    monkeypatch.setattr(env, "CHECKOUT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert env.code_version() == {"commit": None, "dirty": None}
    assert env.environment()["commit"] is None
