"""`messiah pretrain`, `messiah rl` and `messiah export` as a user meets them: one source of defaults, help on
every flag, one-line errors instead of tracebacks, and a `--resume` (pretrain) or a rerun (rl) that continues
the run its checkpoint or config.json records, also one saved by older code, and refuses a command that would
make it another run."""

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FORMATS, TEACHER

from messiah.cli import build_parser, main
from messiah.config import from_args, from_dict, run_changes
from messiah.paths import SHARED_DATA

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


def test_every_pretrain_rl_and_export_flag_has_help_and_says_its_default():
    for name in ("pretrain", "rl", "export"):
        for action in subparser(name)._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, (name, action.dest)
            # an option with a value to show says it; a switch says what it does; a positional is required or a list
            if action.option_strings and action.nargs != 0 and action.dest not in ("init", "gate_sprt", "ray"):
                assert "(default: " in action.help, (name, action.dest, action.help)


def test_defaults_come_from_the_training_config():
    """No flag: the configuration is TrainConfig's defaults; pretrain and evaluate share the eval scale; the
    RL loop's shared fields have the same flags, with its own defaults."""
    from messiah.tools.evaluate import EvaluateConfig
    from messiah.train.config import TrainConfig
    from messiah.train.rl.config import RLConfig

    args = subparser("pretrain").parse_args(["a.hcpe"])
    assert from_args(TrainConfig, args) == TrainConfig(data=["a.hcpe"])
    assert EvaluateConfig("x").scale == TrainConfig().scale == RLConfig().scale
    assert f"(default: {TrainConfig().scale})" in " ".join(subparser("pretrain").format_help().split())
    changed = from_args(TrainConfig, subparser("pretrain").parse_args(["a.hcpe", "--channels", "16", "--no-mirror"]))
    assert changed.net.channels == 16 and not changed.mirror and changed.steps == TrainConfig().steps
    rl = from_args(RLConfig, subparser("rl").parse_args(["--lr", "1e-4", "--rank-weight", "0.2", "--no-mirror"]))
    assert (rl.lr, rl.rank_weight, rl.mirror, rl.warmup) == (1e-4, 0.2, False, RLConfig().warmup)
    assert "(default: 0.0003)" in " ".join(subparser("rl").format_help().split())


def test_run_changes_name_the_fields_that_make_another_run():
    """Both configurations: a field that changes what is learnt is named with both values; a runtime field
    (where and how the run executes) is not; paths compare as absolute paths."""
    from messiah.train.config import TrainConfig
    from messiah.train.rl.config import RLConfig

    train = TrainConfig(data=["a.hcpe"])
    assert run_changes(train, dataclasses.replace(train, lr=1e-3, net=dataclasses.replace(train.net, blocks=5))) \
        == ["lr 0.002 -> 0.001", "blocks 3 -> 5"]
    assert run_changes(train, dataclasses.replace(train, data=[str(SHARED_DATA / ".." / "a.hcpe")])) != []
    assert run_changes(train, dataclasses.replace(train, data=[f"./{'a.hcpe'}"], threads=3, device="cpu", out="x",
                                                  amp="off", workers=2, export=False, progress=False)) == []
    rl = RLConfig()
    assert run_changes(rl, dataclasses.replace(rl, lam=0.5, rank_scale=5.0)) == ["rank_scale 10.0 -> 5.0",
                                                                                "lam 0.7 -> 0.5"]
    assert run_changes(rl, dataclasses.replace(rl, generations=20, actors=3, threads=4, amp="off",
                                               checkpoint_every=7, ray="local", progress=False)) == []


# What today's code (before the parts) wrote: a pretraining checkpoint's and an RL run's config.json, flat dicts.
OLD_TRAIN_CONFIG = {
    "data": [], "out": "runs/pretrain", "net": {"channels": 8, "blocks": 1, "head_channels": 4, "embed_dim": 16,
                                                "value_hidden": 0},
    "loss": "rank", "scale": 875.0, "result_mix": 0.0, "rank_weight": 0.1, "rank_scale": 10.0, "margin": 0.1,
    "anchor_weight": 1.0, "zero_embedding": False, "mirror": True, "steps": 2, "batch_size": 16, "lr": 0.002,
    "weight_decay": 0.0001, "warmup": 1, "clip": 1.0, "val_fraction": 0.05, "val_positions": 64, "eval_every": 1000,
    "checkpoint_every": 500, "seed": 0, "threads": 1, "workers": 0, "amp": "bf16", "device": "auto", "export": False,
    "progress": False}
OLD_RL_CONFIG = {
    "out": "runs/rl", "init": "default", "net": {"channels": 32, "blocks": 3, "head_channels": 16, "embed_dim": 300,
                                                 "value_hidden": 0},
    "generations": 10, "games": 128, "actors": 0, "games_per_actor": 1, "actor_device": "cpu", "search": "puct",
    "nodes": 64, "search_batch": 1, "mate_nodes": 2000, "openings": "/work/shared/data/openings/records2016_10818.sfen",
    "random_plies": 8, "explore_plies": 16, "tau": 0.03, "epsilon": 0.02, "resign": 0.02, "resign_playout": 0.2,
    "max_ply": 320, "lam": 0.7, "gamma": 1.0, "q_lambda": "watkins", "double_dqn": False, "target_every": 0,
    "window": 200000, "steps": 200, "batch_size": 256, "teacher": ["/work/shared/data/teacher/teacher_s1.hcpe"],
    "teacher_fraction": 0.25, "loss": "rank", "rank_weight": 0.1, "rank_scale": 10.0, "dense_weight": 0.5,
    "scale": 875.0, "mirror": True, "lr": 0.0003, "warmup": 100, "weight_decay": 0.0001, "clip": 1.0,
    "checkpoint_every": 100, "val_positions": 2048, "gate": True, "gate_games": 40, "gate_nodes": 64,
    "gate_threshold": 0.55, "gate_sprt": "", "gate_jobs": 0, "device": "auto", "amp": "bf16", "threads": 1, "ray": "",
    "seed": 0, "progress": True}


def test_an_old_rl_config_json_continues_and_refuses_another_run(tmp_path):
    """A config.json written before the shared parts existed reads back whole: rerunning the command (no flag,
    or a runtime one) makes no change; a flag that changes the run is named."""
    from messiah.train.rl.config import RLConfig, default_strong_files, load_config

    out = tmp_path / "rl"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({**OLD_RL_CONFIG, "out": str(out)}))
    saved = load_config(out)
    # fields added since (the verification's, the strong games', the tree rows', rollback, the playout cap's, the
    # root noise, the root's guard) take their defaults, which leave the run as it was (the bootstrap's, added and
    # deleted since, too)
    assert dataclasses.asdict(saved) == {**OLD_RL_CONFIG, "out": str(out), "verify_every": 0, "verify_games": 200,
                                         "strong": default_strong_files(), "strong_fraction": 0.0, "tree_visits": 0,
                                         "tree_fraction": 0.2, "rollback": False, "fast_nodes": 0,
                                         "fast_fraction": 0.75, "root_noise": 0.0, "guard_nodes": 0}
    again = from_args(RLConfig, subparser("rl").parse_args(["--out", str(out), "--generations", "12"]), saved)
    assert run_changes(saved, again) == [] and again.generations == 12
    other = from_args(RLConfig, subparser("rl").parse_args(["--out", str(out), "--lr", "1e-3"]), saved)
    assert run_changes(saved, other) == ["lr 0.0003 -> 0.001"]
    assert from_dict(RLConfig, {"lam": 0.5, "no_longer_a_field": 1}) == RLConfig(lam=0.5)


def test_the_m7_recipe_is_the_shipped_runs_settings_which_flags_override_and_config_json_keeps(tmp_path, monkeypatch):
    """--recipe m7 gives the settings of lm2's command, the run that made m7 (docs/rl-results.md); a flag given
    overrides one; config.json keeps the values, so rerunning with only --out continues the run, and rerunning with
    the recipe but without the flag is another run, refused by name."""
    pytest.importorskip("torch")
    from messiah.train.rl import loop
    from messiah.train.rl.config import RLConfig, load_config, recipe_flags, save_config

    made = []

    def run(cfg: RLConfig):  # the loop's first step: the configuration saved (loop._start), or refused
        saved = load_config(cfg.out)
        made.append((cfg, run_changes(saved, cfg) if saved else []))
        cfg.layout.root.mkdir(parents=True, exist_ok=True)
        save_config(cfg)
        return cfg.layout.best

    monkeypatch.setattr(loop, "run", run)
    out = str(tmp_path / "m7r")
    main(["rl", "--out", out, "--recipe", "m7", "--tree-visits", "16", "--seed", "102"])
    cfg, _ = made[-1]
    # lm2: --games 240 --steps 480 --nodes 192 --window 1000000 --no-gate --lam 0.9 --teacher-fraction 0.25
    # --strong-fraction 0.1 --tree-visits 8 --tree-fraction 0.2 --openings '' --random-plies 8
    assert (cfg.games, cfg.steps, cfg.nodes, cfg.window, cfg.gate, cfg.lam, cfg.teacher_fraction, cfg.strong_fraction,
            cfg.tree_fraction, cfg.openings, cfg.random_plies) == (240, 480, 192, 1_000_000, False, 0.9, 0.25, 0.1,
                                                                   0.2, "", 8)
    assert cfg.tree_visits == 16 and cfg.seed == 102 and cfg.actors == RLConfig().actors
    assert json.loads((tmp_path / "m7r" / "config.json").read_text())["strong_fraction"] == 0.1
    main(["rl", "--out", out, "--generations", "12"])
    assert made[-1] == (dataclasses.replace(cfg, generations=12), [])
    main(["rl", "--out", out, "--recipe", "m7"])
    assert made[-1][1] == ["tree_visits 16 -> 8"]
    assert "--strong-fraction 0.1 --tree-visits 8" in " ".join(subparser("rl").format_help().split())
    # docs/rl.md says the recipe once, as its one home has it
    docs = " ".join((Path(__file__).parents[1] / "docs" / "rl.md").read_text().split())
    assert recipe_flags("m7") in docs


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
    """The first 100 records of the teacher fixture (of its first game): the held-out tail, cut at a game
    boundary, is empty; the fixture's psv file with its last 10 moves blanked (as cshogi's psv_to_hcpe3
    sample, whose moves are mostly in another encoding): no held-out position has a legal teacher move.
    Both crashed inside validation (ZeroDivisionError, IndexError)."""
    import cshogi
    import numpy as np

    pytest.importorskip("torch")
    assert np.fromfile(f"{TEACHER}.games", "<u4")[0] >= 100
    small = tmp_path / "r100.hcpe"
    small.write_bytes(TEACHER.read_bytes()[: 38 * 100])
    psv = np.fromfile(FORMATS / "sample.psv", cshogi.PackedSfenValue)
    psv["move"][-10:] = 0  # no move: never legal
    blanked = tmp_path / "blanked.psv"
    psv.tofile(blanked)
    for data in (small, blanked):
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


def test_an_old_checkpoint_resumes(finished_run, capsys, tmp_path):
    """A checkpoint.pt whose config is the flat dict older code wrote resumes with --resume alone, and refuses a
    flag that changes the run."""
    import shutil

    import torch

    out, data = finished_run
    old = tmp_path / "old"
    shutil.copytree(out, old)
    state = torch.load(old / "checkpoint.pt", weights_only=True)
    state["config"] = {**OLD_TRAIN_CONFIG, "data": [str(data)], "out": str(old)}
    state["step"] = 1  # as if killed after step 1 of 2
    torch.save(state, old / "checkpoint.pt")
    err = one_line_error(capsys, ["pretrain", "--out", str(old), "--resume", "--lr", "0.01"], "pretrain")
    assert "lr 0.002 -> 0.01" in err
    main(["pretrain", "--out", str(old), "--resume", "--threads", "1"])
    assert capsys.readouterr().out.strip() == str(old)
    assert torch.load(old / "checkpoint.pt", weights_only=True)["step"] == 2  # the run went on to its end


def test_steps_inside_the_warmup_warn_in_one_line(finished_run, tmp_path, capsys):
    import warnings

    _, data = finished_run
    shown = warnings.showwarning
    main(["pretrain", str(data), "--out", str(tmp_path / "short"), "--steps", "2", *TINY[:-6], "--no-progress",
          "--no-export", "--val-positions", "64"])
    err = capsys.readouterr().err
    assert "messiah pretrain: warning: steps 2 end inside the warm-up of 500 steps" in err
    assert "warnings.warn" not in err
    assert warnings.showwarning is shown  # the command leaves the warnings module as it found it
