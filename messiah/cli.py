"""The ``messiah`` command line: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

from messiah.evaluator import ModelError
from messiah.winrate import MESSIAH_OPTIONS, TEACHER_SCALE
from train.config import TrainConfig, add_config_arguments, checkpoint_path, config_from_args


def _bench(args: argparse.Namespace) -> None:
    from messiah.bench import DEFAULT_POSITIONS, bench_train, run_bench

    if args.train:
        figures = bench_train([args.positions or str(DEFAULT_POSITIONS)], args.train_steps, tuple(args.workers),
                              args.threads, args.batch_size, args.arch)
    else:
        figures = run_bench(args.model, args.threads, args.positions, args.arch,
                            args.movetime / 1000 if args.search else None)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for key, value in figures.items():
        if isinstance(value, dict):
            print(key)
            for k, v in value.items():
                print(f"  {k:38s} " + (", ".join(f"{a} {b:.2f}" for a, b in v.items()) if isinstance(v, dict)
                                       else f"{v:.1f}"))
        else:
            print(f"{key:40s} {value:.1f}" if isinstance(value, float) else f"{key:40s} {value}")


def _evaluate(args: argparse.Namespace) -> None:
    from messiah.evaluate import evaluate_file

    figures = evaluate_file(args.model, args.data, args.limit, args.threads, args.scale)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:12s} {value}")


def _gensfen(args: argparse.Namespace) -> None:
    from messiah.match import parse_options
    from train.gensfen import EngineError, gensfen

    try:
        counts = gensfen(args.out, engine=args.engine, options=parse_options(args.option), depth=args.depth,
                         nodes=args.nodes, workers=args.workers, positions=args.positions, games=args.games,
                         openings=args.openings, random_moves=args.random_moves, seed=args.seed)
    except EngineError as e:
        raise SystemExit(f"messiah gensfen: {e}") from None
    if args.json:
        print(json.dumps(counts))
    else:
        for key, value in counts.items():
            print(f"{key:14s} {value}")


def _needs_torch(command: str) -> None:
    """SystemExit with one line when torch (the training extra) is not installed."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"messiah {command} needs torch, the training extra (pip install 'messiah[train]'): "
                         f"{e}") from None


@contextlib.contextmanager
def _one_line_warnings(command: str) -> Iterator[None]:
    """Warnings as one line naming the command (not the source line that raised them)."""
    shown = warnings.formatwarning
    warnings.formatwarning = lambda message, *_args, **_kw: f"messiah {command}: warning: {message}\n"
    try:
        yield
    finally:
        warnings.formatwarning = shown


def _pretrain(args: argparse.Namespace) -> None:
    with _one_line_warnings("pretrain"):
        _pretrain_run(args)


def _pretrain_run(args: argparse.Namespace) -> None:
    _needs_torch("pretrain")
    from train.pretrain import train
    from train.trainer import load_checkpoint

    base = None
    if args.resume:  # the run's own configuration; the flags given must not make it another run
        out = getattr(args, "out", TrainConfig.out)
        base = TrainConfig.from_dict({**load_checkpoint(checkpoint_path(out))["config"], "out": out})
    elif not getattr(args, "data", None):
        raise ValueError("no data files given (or --resume a run from its --out)")
    path = train(config_from_args(args, base), resume=args.resume)
    if int(os.environ.get("RANK", "0")) == 0:  # under torchrun, one line, not one per process
        print(path)


def _export(args: argparse.Namespace) -> None:
    _needs_torch("export")
    from train.trainer import export_checkpoint

    print(export_checkpoint(args.checkpoint, args.out))


def _analyze(args: argparse.Namespace) -> None:
    from messiah.analyze import analyze

    out = analyze(" ".join(args.position), args.search, args.nodes, args.movetime, args.depth, args.model,
                  args.threads)
    if args.json:
        print(json.dumps(out))
        return
    mate = f" mate {out['score']['mate']}" if "mate" in out["score"] else ""
    print(f"bestmove {out['bestmove']}  winrate {out['score']['winrate']:.3f}{mate}  depth {out['depth']}  "
          f"nodes {out['nodes']}  evaluations {out['evaluations']}  {out['time_ms']} ms")
    print("pv " + " ".join(out["pv"]))
    for row in out["moves"]:
        print(f"  {row['move']:6s} {row['q']:.4f}")


def _match(args: argparse.Namespace) -> None:
    from messiah.match import MatchConfig, parse_options, play_match, report, summarize

    byoyomi = args.byoyomi if args.byoyomi is not None or args.time else 1000
    cfg = MatchConfig(opponent=args.opponent, engine=args.engine or "", options=parse_options(args.option),
                      opponent_options=parse_options(args.opponent_option), games=args.games, jobs=args.jobs,
                      byoyomi=byoyomi, time=args.time, inc=args.inc, seed=args.seed, draw=args.draw, out=args.out)
    if args.openings:
        cfg.openings = None if args.openings == "none" else args.openings
    names, games = play_match(cfg)
    summary = summarize(games)
    if args.json:
        print(json.dumps({**summary, "names": names, "records": [g.record for g in games]}))
    else:
        print(report(cfg, names, summary))


def _fit_winrate(args: argparse.Namespace) -> None:
    from messiah.fitwinrate import fit_files
    from messiah.winrate import WinRateScale

    paths = []
    for path in map(Path, args.records):
        paths += sorted(str(p) for p in path.glob("*.csa")) if path.is_dir() else [str(path)]
    out = fit_files(paths, args.player, args.png, WinRateScale.from_options(*args.made_with))
    if args.json:
        print(json.dumps(out))
        return
    print(f"samples {out['samples']:,} from {out['games']:,} CSA games and the hcpe records "
          f"(left out: {out['dropped_abs_cp_over_1000']:,} with |cp| > 1000, {out['dropped_draws']:,} from draws)")
    for name in ("mse", "logloss"):
        fit = out[name]
        print(f"{name:8s} a = {fit['a']:.6f} (1/a = {fit['scale_cp']:.1f} cp)  b = {fit['b']:+.4f}")
    options = out["messiah_options"]
    print(f"if these are messiah's own moves (made with ScoreScale {args.made_with[0]:g} ScoreBias "
          f"{args.made_with[1]:g}), the options that calibrate its score cp on the teacher's curve: "
          f"ScoreScale {options['ScoreScale']} ScoreBias {options['ScoreBias']}")
    print(f"plot: {out['png']}")


def _usi(args: argparse.Namespace) -> None:
    from messiah.usi import main

    main()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="messiah", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("usi", help="run the USI engine on stdin/stdout (same as messiah-usi)")
    p.set_defaults(func=_usi)

    p = sub.add_parser("analyze", help="search a position and print every legal move's Q")
    p.add_argument("position", nargs="+", help="an sfen, or 'startpos moves ...' / 'sfen ... moves ...'")
    p.add_argument("--search", default="alphabeta", choices=["alphabeta", "ucb1", "puct"])
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--nodes", type=int)
    limit.add_argument("--movetime", type=int, help="milliseconds")
    limit.add_argument("--depth", type=int)
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_analyze)

    p = sub.add_parser("match", help="play games against another USI engine (through cshogi.cli)")
    p.add_argument("--opponent", required=True, help="the other engine's command, e.g. /usr/games/fairy-stockfish")
    p.add_argument("--engine", help="the first engine's command (default: this messiah-usi)")
    p.add_argument("--option", action="append", metavar="NAME=VALUE", help="a USI option of the first engine")
    p.add_argument("--opponent-option", action="append", metavar="NAME=VALUE",
                   help="a USI option of the opponent, e.g. 'Skill Level=-20'")
    p.add_argument("--games", type=int, default=2, help="games, in pairs of one opening with colours swapped")
    p.add_argument("--jobs", type=int, default=1, help="games played at once, each in its own process")
    p.add_argument("--byoyomi", type=int, help="ms per move after the main time (default 1000 without --time)")
    p.add_argument("--time", type=int, help="main time in ms (sudden death, or Fischer with --inc)")
    p.add_argument("--inc", type=int, help="increment per move in ms")
    p.add_argument("--openings", help="file of 'startpos moves ...' lines (24 plies are played), or 'none' "
                   "(default: ../shared/data/openings/records2016_10818.sfen)")
    p.add_argument("--seed", type=int, default=0, help="which openings are drawn")
    p.add_argument("--draw", type=int, default=320, help="a game still going at this ply is a draw")
    p.add_argument("--out", default="runs/match", help="directory for the CSA records and match.log")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_match)

    p = sub.add_parser("fit-winrate", help="fit winrate = sigmoid(a*cp + b) to game results")
    p.add_argument("records", nargs="+", help="CSA records (files or directories of *.csa) and/or hcpe files")
    p.add_argument("--player", help="only the moves of the player of this name (CSA records)")
    p.add_argument("--png", default="winrate_fit.png", help="where to write the plot")
    p.add_argument("--made-with", type=float, nargs=2, default=list(MESSIAH_OPTIONS), metavar=("SCALE", "BIAS"),
                   help="messiah's ScoreScale and ScoreBias when the records were made (default: the engine's)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_fit_winrate)

    p = sub.add_parser("bench", help="speed of features, move indices and the evaluator")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    p.add_argument("--positions", help="hcpe file to draw the fixed position set from")
    p.add_argument("--arch", help="bench a random-weight model of this shape instead, e.g. 7x64 (needs torch)")
    p.add_argument("--search", action="store_true", help="bench the searches instead")
    p.add_argument("--movetime", type=int, default=200, help="ms per position for --search")
    p.add_argument("--train", action="store_true", help="bench training instead: positions/s and data wait "
                   "(--threads: torch threads; --positions: the teacher hcpe; --arch: the net, default 7x32)")
    p.add_argument("--train-steps", type=int, default=40, help="timed training steps per setting")
    p.add_argument("--workers", type=int, nargs="+", default=[0, 1], help="loader worker counts to compare")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_bench)

    p = sub.add_parser("evaluate", help="agreement, top-3 agreement and value MSE of a model on data")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--data", required=True, help="hcpe, psv/bin, CSA, KIF/KIFU or jsonl (sfen, bestmove, eval) file")
    p.add_argument("--limit", type=int, default=0, help="evaluate the first N positions only")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--scale", type=float, default=TEACHER_SCALE,
                   help="cp per logit of the data's evals (default: %(default)s, the teacher data's)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_evaluate)

    p = sub.add_parser("gensfen", help="teacher data (hcpe) from a USI engine's self-play; resumable")
    p.add_argument("--engine", default="/usr/games/fairy-stockfish", help="the engine's executable (no arguments)")
    p.add_argument("--option", action="append", metavar="NAME=VALUE", help="a USI option; repeatable")
    limit = p.add_mutually_exclusive_group(required=True)
    limit.add_argument("--depth", type=int, help="search depth per move")
    limit.add_argument("--nodes", type=int, help="nodes per move")
    p.add_argument("--workers", type=int, default=1, help="processes, one engine each")
    p.add_argument("--out", required=True, help="hcpe file to append whole games to")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--positions", type=int, help="stop when the file holds N positions")
    target.add_argument("--games", type=int, help="stop when the file holds N games")
    p.add_argument("--openings", help="file of 'startpos moves ...' lines to start games from")
    p.add_argument("--random-moves", type=int, help="random moves within the first 24 plies "
                   "(default 5, or 0 with --openings)")
    p.add_argument("--seed", type=int)
    p.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    p.set_defaults(func=_gensfen)

    p = sub.add_parser("pretrain", help="supervised pretraining on teacher data (needs torch); "
                       "under torchrun --nproc_per_node N it trains data-parallel",
                       description="Supervised pretraining (train/pretrain.py). Every flag is a field of "
                       "train.config.TrainConfig; --resume continues OUT's run with its own configuration.")
    add_config_arguments(p)
    p.add_argument("--resume", action="store_true", help="continue the run in OUT from its checkpoint.pt, with "
                   "the configuration saved there; flags that would change the run are refused (default: off)")
    p.set_defaults(func=_pretrain)

    p = sub.add_parser("export", help="export a pretraining checkpoint to ONNX (needs torch)")
    p.add_argument("checkpoint", help="a checkpoint.pt written by messiah pretrain")
    p.add_argument("out", help="the ONNX file to write")
    p.set_defaults(func=_export)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (ModelError, ValueError, FileNotFoundError) as e:
        print(f"messiah {args.command}: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:  # output piped into head & co.
        sys.stdout = open(os.devnull, "w")


if __name__ == "__main__":
    main()
