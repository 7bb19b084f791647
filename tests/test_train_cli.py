"""`messiah pretrain` and `messiah export` as a user meets them: one source of defaults, help on every flag,
one-line errors instead of tracebacks, and a `--resume` that continues the run its checkpoint records and
refuses a command that would make it another run."""

import argparse
import subprocess
import sys

import pytest

from messiah.cli import build_parser, main
from messiah.paths import SHARED_DATA

TEACHER = SHARED_DATA / "teacher" / "teacher_s4.hcpe"
TINY = ["--channels", "8", "--blocks", "1", "--head-channels", "4", "--embed-dim", "16", "--threads", "1",
        "--batch-size", "16", "--val-positions", "64", "--warmup", "1", "--no-progress", "--no-export"]


def subparser(name: str) -> argparse.ArgumentParser:
    actions = build_parser()._subparsers._group_actions[0]
    return actions.choices[name]


def one_line_error(capsys, argv: list[str], command: str) -> str:
    """Run the command line; it must exit with status 2 and one line on stderr naming the command (besides
    one-line warnings)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = "".join(line for line in capsys.readouterr().err.splitlines(True) if ": warning: " not in line)
    assert exit_info.value.code == 2 and err.count("\n") == 1 and err.startswith(f"messiah {command}: "), err
    return err


def test_every_pretrain_and_export_flag_has_help_and_its_default():
    for name in ("pretrain", "export"):
        for action in subparser(name)._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, (name, action.dest)
            if action.option_strings:  # an option says its default; a positional is required or a list
                assert "default" in action.help, (name, action.dest, action.help)


def test_defaults_come_from_the_training_config():
    """No flag: the configuration is TrainConfig's defaults; pretrain and evaluate share the eval scale."""
    from messiah.train.config import TrainConfig, config_from_args

    args = subparser("pretrain").parse_args(["a.hcpe"])
    assert config_from_args(args) == TrainConfig(data=["a.hcpe"])
    assert subparser("evaluate").parse_args(["--data", "x"]).scale == TrainConfig().scale
    assert f"(default: {TrainConfig().scale})" in " ".join(subparser("pretrain").format_help().split())
    changed = config_from_args(subparser("pretrain").parse_args(["a.hcpe", "--channels", "16", "--no-mirror"]))
    assert changed.net.channels == 16 and not changed.mirror and changed.steps == TrainConfig().steps


def test_export_without_torch_is_one_line():
    code = "import sys; sys.modules['torch'] = None; from messiah.cli import main; main(['export', 'a', 'b'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.startswith("messiah export needs torch") and done.stderr.count("\n") == 1, done.stderr


def test_export_of_a_file_that_is_no_checkpoint_is_one_line(tmp_path, capsys):
    pytest.importorskip("torch")
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    err = one_line_error(capsys, ["export", str(text), str(tmp_path / "x.onnx")], "export")
    assert "not a messiah checkpoint" in err and not (tmp_path / "x.onnx").exists()
    one_line_error(capsys, ["export", str(tmp_path / "missing.pt"), str(tmp_path / "x.onnx")], "export")


def test_too_little_data_to_validate_is_one_line(tmp_path, capsys):
    """The first 100 records of teacher_s1 (one game): the held-out tail, cut at a game boundary, is
    empty; a 56-record psv file: no held-out position has a legal teacher move. Both crashed inside
    validation (ZeroDivisionError, IndexError)."""
    pytest.importorskip("torch")
    small = tmp_path / "r100.hcpe"
    small.write_bytes((SHARED_DATA / "teacher" / "teacher_s1.hcpe").read_bytes()[: 38 * 100])
    for data in (small, SHARED_DATA / "formats" / "psv_to_hcpe3_sample.psv"):
        err = one_line_error(capsys, ["pretrain", str(data), "--out", str(tmp_path / data.stem), "--steps", "2",
                                      *TINY], "pretrain")
        assert "too little data to validate" in err


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A two-step run of a tiny net on 3,000 teacher records."""
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("run")
    data = folder / "small.hcpe"
    data.write_bytes(TEACHER.read_bytes()[: 38 * 3000])
    main(["pretrain", str(data), "--out", str(folder / "run"), "--steps", "2", *TINY])
    return folder / "run", data


def test_resume_refuses_a_different_run_and_names_the_fields(finished_run, capsys, tmp_path):
    out, data = finished_run
    err = one_line_error(capsys, ["pretrain", "--out", str(out), "--resume", "--channels", "16", "--steps", "9"],
                         "pretrain")
    assert "channels 8 -> 16" in err and "steps 2 -> 9" in err
    other = tmp_path / "other.hcpe"
    other.write_bytes(data.read_bytes())
    err = one_line_error(capsys, ["pretrain", str(other), "--out", str(out), "--resume"], "pretrain")
    assert "data" in err and "other.hcpe" in err
    # the run's own configuration, read from its checkpoint: no data or flags needed; runtime flags may change
    main(["pretrain", "--out", str(out), "--resume", "--threads", "1", "--no-progress"])
    assert capsys.readouterr().out.strip() == str(out)


def test_resume_without_a_checkpoint_is_an_error(tmp_path, capsys):
    pytest.importorskip("torch")
    data = tmp_path / "small.hcpe"
    data.write_bytes(TEACHER.read_bytes()[: 38 * 3000])
    err = one_line_error(capsys, ["pretrain", str(data), "--out", str(tmp_path / "new"), "--resume", "--steps", "2",
                                  *TINY], "pretrain")
    assert "no checkpoint" in err and not (tmp_path / "new" / "log.csv").exists()


def test_steps_inside_the_warmup_warn(finished_run, tmp_path):
    _, data = finished_run
    with pytest.warns(UserWarning, match="inside the warm-up of 500 steps"):
        main(["pretrain", str(data), "--out", str(tmp_path / "short"), "--steps", "2", *TINY[:-6], "--no-progress",
              "--no-export", "--val-positions", "64"])
