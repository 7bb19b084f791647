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

from messiah.config import add_arguments, from_args, from_dict
from messiah.evaluator import ModelError
from messiah.train.config import TrainConfig, checkpoint_path
from messiah.winrate import MESSIAH_OPTIONS, TEACHER_SCALE


def _bench(args: argparse.Namespace) -> None:
    figures = args.run(from_args(args.config, args))
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
    from messiah.tools.evaluate import evaluate_file

    figures = evaluate_file(args.model, args.data, args.limit, args.threads, args.scale)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:12s} {value}")


def _gensfen(args: argparse.Namespace) -> None:
    from messiah.arena.client import EngineError
    from messiah.arena.match import parse_options
    from messiah.train.gensfen import gensfen

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
    """Warnings shown as one line naming the command (not the source line that raised them), for as long as
    the command runs: catch_warnings puts the warnings module back as it was."""
    def show(message, *_args, **_kw) -> None:
        print(f"messiah {command}: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _pretrain(args: argparse.Namespace) -> None:
    with _one_line_warnings("pretrain"):
        _pretrain_run(args)


def _pretrain_run(args: argparse.Namespace) -> None:
    _needs_torch("pretrain")
    from messiah.train.pretrain import train
    from messiah.train.trainer import load_checkpoint

    base = None
    if args.resume:  # the run's own configuration; the flags given must not make it another run
        out = getattr(args, "out", TrainConfig.out)
        base = from_dict(TrainConfig, {**load_checkpoint(checkpoint_path(out))["config"], "out": out})
    elif not getattr(args, "data", None):
        raise ValueError("no data files given (or --resume a run from its --out)")
    path = train(from_args(TrainConfig, args, base), resume=args.resume)
    if int(os.environ.get("RANK", "0")) == 0:  # under torchrun, one line, not one per process
        print(path)


def _rl(args: argparse.Namespace) -> None:
    with _one_line_warnings("rl"):
        _needs_torch("rl")
        from messiah.train.rl.config import RLConfig, load_config
        from messiah.train.rl.loop import run

        # A run's own configuration is the base: rerunning the same command (or only --out) continues it, and
        # a flag that would make it another run is refused by name.
        saved = load_config(getattr(args, "out", RLConfig.out))
        print(run(from_args(RLConfig, args, saved)))


def _export(args: argparse.Namespace) -> None:
    _needs_torch("export")
    from messiah.train.trainer import export_checkpoint

    print(export_checkpoint(args.checkpoint, args.out))


def _analyze(args: argparse.Namespace) -> None:
    from messiah.tools.analyze import analyze_position

    analysis = analyze_position(" ".join(args.position), args.search, args.nodes, args.movetime, args.depth,
                                args.model, args.threads)
    for path in filter(None, (args.svg, args.png)):
        print(f"picture: {analysis.picture(args.flip).save(path)}", file=sys.stderr)
    out = analysis.to_dict()
    if args.json:
        print(json.dumps(out))
        return
    mate = f" mate {out['score']['mate']}" if "mate" in out["score"] else ""
    print(f"bestmove {out['bestmove']}  winrate {out['score']['winrate']:.3f}{mate}  depth {out['depth']}  "
          f"nodes {out['nodes']}  evaluations {out['evaluations']}  {out['time_ms']} ms")
    print("pv " + " ".join(out["pv"]))
    for row in out["moves"]:
        print(f"  {row['move']:6s} {row['q']:.4f}")


def _annotate(args: argparse.Namespace) -> None:
    from messiah.evaluator import Evaluator
    from messiah.tools.annotate import annotate_record, plot, read_record, summary_table, write_kif

    record = read_record(args.record)  # before the model loads: a bad file fails at once
    movetime = args.movetime if args.nodes is None else None
    analysis = annotate_record(record, Evaluator(args.model, threads=args.threads), args.search, movetime,
                               args.nodes, args.threshold, progress=not args.quiet)
    print(summary_table(analysis))
    if args.out:
        print(f"kif: {write_kif(analysis, args.out)}")
    if args.png:
        print(f"graph: {plot(analysis, args.png)}")


def _play(args: argparse.Namespace) -> None:
    if not args.web:
        raise ValueError("say --web: the browser is the only board so far (a GUI can run messiah-usi)")
    from messiah.tools.web import serve

    serve(args.host, args.port, args.movetime, args.model, args.search, args.threads)


def _match(args: argparse.Namespace) -> None:
    from messiah.arena.match import MatchConfig, parse_options, play_match, report
    from messiah.arena.stats import summarize

    byoyomi = args.byoyomi if args.byoyomi is not None or args.time else 1000
    cfg = MatchConfig(opponent=args.opponent, engine=args.engine or "", options=parse_options(args.option),
                      opponent_options=parse_options(args.opponent_option), games=args.games, jobs=args.jobs,
                      byoyomi=byoyomi, time=args.time, inc=args.inc, seed=args.seed, draw=args.draw, out=args.out,
                      sprt=args.sprt)
    if args.openings:
        cfg.openings = None if args.openings == "none" else args.openings
    names, games = play_match(cfg)
    summary = summarize(games, cfg.sprt)
    if args.json:
        print(json.dumps({**summary, "names": names, "records": [g.record for g in games]}))
    else:
        print(report(cfg, names, summary))


def _ladder(args: argparse.Namespace) -> None:
    from messiah.arena.ladder import default_rungs, merge_rows, read_ladder, run_ladder, write_ladder
    from messiah.arena.match import MatchConfig, parse_options

    merge = [Path(d) for d in args.merge or []]
    if len({d.resolve() for d in merge}) < len(merge):
        raise ValueError("a ladder named twice in --merge would count its games twice")
    if args.games > 0 and Path(args.out).resolve() in {(d if d.is_dir() else d.parent).resolve() for d in merge}:
        raise ValueError(f"--out {args.out} is a ladder being merged: its records would be overwritten; "
                         "play into another --out")
    earlier = [read_ladder(d) for d in merge]
    rungs = default_rungs()
    if args.rungs:
        wanted = [w.strip() for w in args.rungs.split(",")]
        rungs = [r for r in rungs if any(w in r.name for w in wanted)]
        if not rungs:
            names = ", ".join(r.name for r in default_rungs())
            raise ValueError(f"no rung matches {args.rungs!r}: choose from {names}")
    base = MatchConfig(opponent="", options={"Threads": "1", **parse_options(args.option)}, jobs=args.jobs,
                       byoyomi=args.byoyomi, seed=args.seed, out=args.out)
    if args.games < 0 or (args.games == 0 and not earlier):
        raise ValueError("--games 0 plays nothing: name the ladders to combine with --merge DIR")
    rows = merge_rows(*earlier, run_ladder(base, rungs, args.games, args.more, earlier) if args.games > 0 else [])
    if not rows:
        raise ValueError("the merged ladders hold no games")
    paths = write_ladder(rows, args.out)
    print(Path(paths["table"]).read_text())
    print(f"plot: {paths['png']}, {paths['svg']}" if paths["png"] else "plot: none (matplotlib is not installed)")


def _tune(args: argparse.Namespace) -> None:
    from messiah.arena.match import parse_options
    from messiah.arena.tune import Param, TuneConfig, tune

    try:
        import optuna  # noqa: F401
    except ImportError:
        raise SystemExit("messiah tune needs Optuna: pip install 'messiah[tune]'") from None
    if args.nodes and (args.byoyomi or args.time or args.inc):
        raise SystemExit("messiah tune: --nodes replaces the clock; leave out --byoyomi, --time and --inc")
    cfg = TuneConfig(params=[Param.parse(p) for p in args.param], trials=args.trials, games=args.games,
                     byoyomi=args.byoyomi if args.byoyomi is not None or args.time else 300, time=args.time,
                     inc=args.inc, nodes=args.nodes, jobs=args.jobs,
                     options={"Threads": "1", **parse_options(args.option)}, out=args.out, seed=args.seed)
    result = tune(cfg)
    if args.json:
        print(json.dumps(result))
        return
    wins, losses, draws = result["best_w_l_d"]
    print(f"{result['trials']} trials; best: trial {result['best_trial']}, {100 * result['best_score']:.1f}% "
          f"({wins}-{losses}-{draws}) against the defaults")
    print("\n".join(result["setoption"]))
    print(f"log: {result['log']}  study: {result['study']}  plot: {result['png']}")


def _fit_winrate(args: argparse.Namespace) -> None:
    from messiah.tools.fitwinrate import fit_files
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
    from messiah.engine.usi import main

    main([])


def positive(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def elo_pair(text: str) -> tuple[float, float]:
    """argparse type: 'ELO0,ELO1' with elo0 < elo1."""
    from messiah.arena.stats import parse_sprt

    try:
        return parse_sprt(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="messiah", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("usi", help="run the USI engine on stdin/stdout (same as messiah-usi)")
    p.set_defaults(func=_usi)

    p = sub.add_parser("analyze", help="search a position and print every legal move's Q")
    p.add_argument("position", nargs="+", help="an sfen, or 'startpos moves ...' / 'sfen ... moves ...'")
    p.add_argument("--search", default="puct", choices=["puct", "alphabeta", "ucb1"], help="the search to run")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--nodes", type=positive, help="search this many nodes")
    limit.add_argument("--movetime", type=positive, help="search this many milliseconds")
    limit.add_argument("--depth", type=positive, help="search to this depth (default: the search's own small limit)")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--svg", help="also draw the board with every legal move coloured by its Q to this SVG file")
    p.add_argument("--png", help="the same picture as PNG (needs rsvg-convert or cairosvg)")
    p.add_argument("--flip", action="store_true", help="draw the board from white's side")
    p.set_defaults(func=_analyze)

    p = sub.add_parser("annotate", help="search every position of a KIF/CSA game: scores, best moves, mistakes")
    p.add_argument("record", help="a game record: .kif (Shift_JIS or UTF-8), .kifu or .csa")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--movetime", type=int, default=1000, help="milliseconds of search per position")
    limit.add_argument("--nodes", type=int, help="nodes of search per position (instead of --movetime)")
    p.add_argument("--threshold", type=float, default=0.1, help="win rate a move must lose to be a mistake")
    p.add_argument("--out", help="write the game with a comment under each move to this KIF (.kif or .kifu)")
    p.add_argument("--png", help="write a win-rate graph of the game, mistakes marked, to this PNG")
    p.add_argument("--search", default="puct", choices=["puct", "alphabeta", "ucb1"], help="the search")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_annotate)

    p = sub.add_parser("play", help="play messiah in a browser on this machine (--web)")
    p.add_argument("--web", action="store_true", help="serve the board as a web page")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 opens it to the network)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on")
    p.add_argument("--movetime", type=int, default=1000,
                   help="messiah's milliseconds per move (the page can change it)")
    p.add_argument("--search", default="puct", choices=["puct", "alphabeta", "ucb1"], help="the search")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads")
    p.set_defaults(func=_play)

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
    p.add_argument("--sprt", type=elo_pair, metavar="ELO0,ELO1", help="stop as soon as a sequential probability "
                   "ratio test (pentanomial GSPRT, alpha = beta = 0.05) accepts elo0 or elo1; --games is the most; "
                   "write --sprt=-30,30 when elo0 is negative")
    p.add_argument("--draw", type=int, default=320, help="a game still going at this ply is a draw")
    p.add_argument("--out", default="runs/match", help="directory for the CSA records and match.log")
    p.add_argument("--json", action="store_true", help="print the summary and the records as one JSON object")
    p.set_defaults(func=_match)

    p = sub.add_parser("ladder", help="play messiah against fairy-stockfish at Skill Level -20..20 and gpsshogi "
                       "at equal time: a table, a plot (PNG, SVG) and the rung where it scores 50%%")
    p.add_argument("--games", type=int, default=20, help="games per rung (colour-swapped pairs)")
    p.add_argument("--more", type=int, default=20, help="extra games at rungs scored between 25%% and 75%%")
    p.add_argument("--byoyomi", type=int, default=1000, help="ms per move for both sides")
    p.add_argument("--jobs", type=int, default=1, help="games played at once")
    p.add_argument("--option", action="append", metavar="NAME=VALUE", help="a USI option of messiah; repeatable")
    p.add_argument("--rungs", help="only the rungs whose names contain these comma-separated words, "
                   "e.g. 'Skill 0,gpsshogi'")
    p.add_argument("--seed", type=int, default=0, help="which openings are drawn")
    p.add_argument("--merge", action="append", metavar="DIR", help="count the games of an earlier ladder of the "
                   "same engine and clock (DIR/ladder.json, or that file) with this run's, rung by rung; "
                   "repeatable; a rung's openings seed may not come twice (replay with another --seed); "
                   "with --games 0 nothing is played and the ladders are only combined")
    p.add_argument("--out", default="runs/ladder", help="directory for the records, ladder.md/json/png/svg")
    p.set_defaults(func=_ladder)

    p = sub.add_parser("tune", help="tune USI options by matches against the defaults (Optuna TPE, resumable)")
    p.add_argument("--param", action="append", required=True, metavar="NAME:LOW:HIGH[:int|float][:log]",
                   help="a USI option to tune and its range; repeatable, e.g. PuctC:50:400 PuctTemperature:10:200:log")
    p.add_argument("--trials", type=int, default=30, help="finished trials the study should hold (a rerun resumes)")
    p.add_argument("--games", type=int, default=20, help="games per trial, in colour-swapped pairs")
    p.add_argument("--byoyomi", type=int, help="ms per move for both sides (default 300 without --time)")
    p.add_argument("--time", type=int, help="main time in ms (sudden death, or Fischer with --inc): the clock "
                   "that the time-management options TimeHorizon, TimeMinMovesToGo, TimeObvious, TimeUnstable act on")
    p.add_argument("--inc", type=int, help="increment per move in ms")
    p.add_argument("--nodes", type=int, help="a node budget per move for both sides instead of a clock")
    p.add_argument("--jobs", type=int, default=1, help="games played at once")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="a USI option of both sides, e.g. Search=puct; repeatable")
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed and the first trial's openings")
    p.add_argument("--out", default="runs/tune", help="directory for study.db, trials.csv, tune.png and the games")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=_tune)

    p = sub.add_parser("fit-winrate", help="fit winrate = sigmoid(a*cp + b) to game results")
    p.add_argument("records", nargs="+", help="CSA records (files or directories of *.csa) and/or hcpe files")
    p.add_argument("--player", help="only the moves of the player of this name (CSA records)")
    p.add_argument("--png", default="winrate_fit.png", help="where to write the plot")
    p.add_argument("--made-with", type=float, nargs=2, default=list(MESSIAH_OPTIONS), metavar=("SCALE", "BIAS"),
                   help="messiah's ScoreScale and ScoreBias when the records were made (default: the engine's)")
    p.add_argument("--json", action="store_true", help="print the fits as one JSON object")
    p.set_defaults(func=_fit_winrate)

    from messiah.tools import bench

    p = sub.add_parser("bench", help="speed figures of the evaluator, the searches, the engine's clock, training",
                       description="Speed figures (messiah/tools/bench.py), one bench per subcommand.")
    benches = p.add_subparsers(dest="bench", required=True, metavar="BENCH", help="the bench to run")
    for name, config, run, text in (
            ("evaluator", bench.EvaluatorBench, bench.bench_evaluator,
             "features, move indices and the evaluator on a fixed position set; all-moves against per-child"),
            ("search", bench.SearchBench, bench.bench_searches, "each search at a fixed time per position: positions "
             "evaluated per second, against the bare evaluator"),
            ("latency", bench.LatencyBench, bench.bench_latency, "how far past its byoyomi the engine process "
             "answers (ByoyomiMargin 0), per search: what ByoyomiMargin must cover"),
            ("clock", bench.ClockBench, bench.bench_clock, "play the engine against itself under a clock: the time "
             "each move took and what was left"),
            ("train", bench.TrainBench, bench.bench_train, "training positions per second and the share spent "
             "waiting for data, per loader worker count (needs torch)")):
        q = benches.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        q.add_argument("--json", action="store_true", help="print the result as one JSON object")
        add_arguments(q, config)
        q.set_defaults(func=_bench, config=config, run=run)

    p = sub.add_parser("evaluate", help="agreement, top-3 agreement and value MSE of a model on data")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--data", required=True, help="hcpe, psv/bin, CSA, KIF/KIFU or jsonl (sfen, bestmove, eval) file")
    p.add_argument("--limit", type=int, default=0, help="evaluate the first N positions only")
    p.add_argument("--threads", type=int, default=0, help="onnxruntime threads (0: its default)")
    p.add_argument("--scale", type=float, default=TEACHER_SCALE,
                   help="cp per logit of the data's evals (default: %(default)s, the teacher data's)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
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
    p.add_argument("--seed", type=int, help="random openings' seed (default: a new one each run)")
    p.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    p.set_defaults(func=_gensfen)

    p = sub.add_parser("pretrain", help="supervised pretraining on teacher data (needs torch); "
                       "under torchrun --nproc_per_node N it trains data-parallel",
                       description="Supervised pretraining (train/pretrain.py). Every flag is a field of "
                       "messiah.train.config.TrainConfig; --resume continues OUT's run with its own configuration.")
    add_arguments(p, TrainConfig)
    p.add_argument("--resume", action="store_true", help="continue the run in OUT from its checkpoint.pt, with "
                   "the configuration saved there; flags that would change the run are refused")
    p.set_defaults(func=_pretrain)

    p = sub.add_parser("rl", help="self-play reinforcement, DQN with Q(lambda), in generations (needs torch); "
                       "rerunning the command continues the run",
                       description="Self-play DQN/Q(lambda) (train/rl/loop.py, docs/rl.md). Every flag is a field of "
                       "messiah.train.rl.config.RLConfig; OUT keeps the run's configuration, and rerunning the command "
                       "continues it (flags that would change the run are refused).")
    from messiah.train.rl.config import RLConfig

    add_arguments(p, RLConfig)
    p.set_defaults(func=_rl)

    p = sub.add_parser("export", help="export a pretraining checkpoint to ONNX (needs torch)")
    p.add_argument("checkpoint", help="a checkpoint.pt written by messiah pretrain")
    p.add_argument("out", help="the ONNX file to write")
    p.set_defaults(func=_export)
    for command in sub.choices.values():  # every flag's help shows its default
        command.formatter_class = argparse.ArgumentDefaultsHelpFormatter
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
