"""The ``messiah`` command line: one entry point, one subcommand per job.

A subcommand's flags are the fields of its configuration, a dataclass with one docstring per field
(:func:`messiah.config.add_arguments`), so a default lives in the dataclass, once: MatchConfig for
``match``, TuneConfig for ``tune``, TrainConfig for ``pretrain``, RLConfig for ``rl``, ...
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from messiah.config import add_arguments, from_args, from_dict, plain
from messiah.errors import MessiahError, UserError
from messiah.files import json_text


def _config(args: argparse.Namespace, base: object = None):
    """The command's configuration (its dataclass is ``args.config``): ``base`` or the defaults, with the flags
    given."""
    return from_args(args.config, args, base)


def _bench(args: argparse.Namespace) -> None:
    figures = args.run(_config(args))
    if args.json:
        print(json_text(figures, indent=2))
        return
    for key, value in figures.items():
        if isinstance(value, dict):
            print(key)
            for k, v in value.items():
                print(f"  {k:38s} " + (", ".join(f"{a} {b:.2f}" for a, b in v.items()) if isinstance(v, dict)
                                       else f"{v:.1f}" if isinstance(v, float) else f"{v}"))
        else:
            print(f"{key:40s} {value:.1f}" if isinstance(value, float) else f"{key:40s} {value}")


def _evaluate(args: argparse.Namespace) -> None:
    from messiah.tools.evaluate import evaluate_file

    cfg = _config(args)
    figures = evaluate_file(cfg.model, cfg.data, cfg.limit, cfg.threads, cfg.scale)
    if args.json:
        print(json_text(figures))
    else:
        for key, value in figures.items():
            print(f"{key:12s} {value}")


def _gensfen(args: argparse.Namespace) -> None:
    from messiah.train.gensfen import gensfen

    counts = gensfen(_config(args))
    if args.json:
        print(json_text(counts))
    else:
        for key, value in counts.items():
            print(f"{key:14s} {value}")


def _needs_training_extra(command: str, module: str = "torch") -> None:
    """SystemExit with one line when torch (or another ``module`` of the training extra) is not installed."""
    try:
        importlib.import_module(module)
    except ImportError as e:
        raise SystemExit(f"messiah {command} needs {module}, of the training extra (pip install 'messiah[train]'): "
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
    from messiah.train.config import TrainConfig, checkpoint_path

    with _one_line_warnings("pretrain"):
        _needs_training_extra("pretrain")
        from messiah.train.pretrain import train
        from messiah.train.trainer import load_checkpoint

        base = None
        if args.resume:  # the run's own configuration; the flags given must not make it another run
            out = getattr(args, "out", TrainConfig.out)
            base = from_dict(TrainConfig, {**load_checkpoint(checkpoint_path(out))["config"], "out": out})
        elif not getattr(args, "data", None):
            raise UserError("no data files given (or --resume a run from its --out)")
        path = train(_config(args, base), resume=args.resume)
        if int(os.environ.get("RANK", "0")) == 0:  # under torchrun, one line, not one per process
            print(path)


def _rl(args: argparse.Namespace) -> None:
    from messiah.train.rl.config import RLConfig, load_config, with_recipe

    with _one_line_warnings("rl"):
        _needs_training_extra("rl")
        from messiah.train.rl.loop import run

        # A run's own configuration is the base: rerunning the same command (or only --out) continues it, and
        # a flag that would make it another run is refused by name. A recipe counts as flags given before the others.
        base = load_config(getattr(args, "out", RLConfig.out))
        if args.recipe:
            base = with_recipe(args.recipe, base)
        print(run(_config(args, base)))


def _export(args: argparse.Namespace) -> None:
    _needs_training_extra("export")
    from messiah.train.trainer import export_checkpoint

    cfg = _config(args)
    print(export_checkpoint(cfg.checkpoint, cfg.out))


def _quantize(args: argparse.Namespace) -> None:
    _needs_training_extra("quantize", "onnx")  # onnxruntime's quantizer reads and writes models with onnx
    from messiah.models.quantize import quantize_onnx

    cfg = _config(args)
    print(quantize_onnx(cfg.model, cfg.out, cfg.data, cfg.positions))


def _say_if_compiling() -> None:
    """A fresh install's first search compiles for a while: say so on stderr before it starts, as messiah-usi
    says it in an info string."""
    from messiah.engine.engine import COMPILING_NOTE, search_compiled

    if not search_compiled():
        print(COMPILING_NOTE, file=sys.stderr)


def _analyze(args: argparse.Namespace) -> None:
    from messiah.tools.analyze import analyze_position
    from messiah.tools.picture import require_png_converter

    cfg = _config(args)
    if cfg.png and not cfg.svg:
        require_png_converter()  # before the search, which nothing else would come of
    _say_if_compiling()
    analysis = analyze_position(" ".join(cfg.position), nodes=cfg.nodes, movetime=cfg.movetime, depth=cfg.depth,
                                options=cfg.engine_options())
    _print_analysis(analysis.to_dict(), args.json)
    with _one_line_warnings("analyze"):  # a PNG without a Japanese font: one line, not a source line
        for path in filter(None, (cfg.svg, cfg.png)):  # the analysis and the SVG first: a PNG that fails loses neither
            print(f"picture: {analysis.picture(cfg.flip).save(path)}", file=sys.stderr)


def _print_analysis(out: dict, as_json: bool) -> None:
    """``messiah analyze``'s answer: the search's line, its PV and every legal move's Q, best first (or the JSON)."""
    if as_json:
        print(json_text(out))
        return
    if out["book"]:
        print(f"book {out['book']}  (the engine plays it at once; its search follows)")
    mate = f" mate {out['score']['mate']}" if "mate" in out["score"] else ""
    print(f"bestmove {out['bestmove']}  winrate {out['score']['winrate']:.3f}{mate}  depth {out['depth']}  "
          f"nodes {out['nodes']}  evaluations {out['evaluations']}  {out['time_ms']} ms")
    print("pv " + " ".join(out["pv"]))
    for row in out["moves"]:
        print(f"  {row['move']:6s} {row['q']:.4f}")


def _annotate(args: argparse.Namespace) -> None:
    from messiah.engine.engine import engine_settings, load_evaluator
    from messiah.tools.annotate import annotate_record, plot, read_record, require_plot, summary_table, write_kif

    cfg = _config(args)
    record = read_record(cfg.record)  # before the model loads: a bad file fails at once
    if cfg.png:
        require_plot()  # and a missing extra before the game's analysis
    _say_if_compiling()
    options = cfg.engine_options()
    analysis = annotate_record(record, load_evaluator(engine_settings(options)), None,
                               None if cfg.nodes else cfg.movetime, cfg.nodes, cfg.threshold,
                               progress=not cfg.quiet, options=options)
    print(summary_table(analysis))
    if cfg.out:
        print(f"kif: {write_kif(analysis, cfg.out)}")
    if cfg.png:
        print(f"graph: {plot(analysis, cfg.png)}")


def _play(args: argparse.Namespace) -> None:
    from messiah.tools.web import serve

    cfg = _config(args)
    if not cfg.web:
        raise UserError("say --web: the browser is the only board so far (a GUI can run messiah-usi)")
    serve(cfg.host, cfg.port, cfg.movetime, options=cfg.engine_options())


def _book(args: argparse.Namespace) -> None:
    out = args.run(_config(args))
    if args.json:
        print(json_text(out))
    elif isinstance(out, list):  # show: the moves at the position
        print("\n".join(f"{m['move']:6s} ponder {m['ponder']:6s} value {m['value']:6d} depth {m['depth']:3d} "
                        f"count {m['count']:6d} {100 * m['share']:5.1f}%" for m in out) or "not in the book")
    else:
        print("\n".join(f"{key:16s} {value}" for key, value in out.items()))


def _match(args: argparse.Namespace) -> None:
    from messiah.arena.match import engine_errors, play_match, report
    from messiah.arena.stats import summarize

    cfg = _config(args)
    names, games = play_match(cfg)
    summary = {**summarize(games, cfg.sprt), "engine_errors": engine_errors(cfg.out)}
    if args.json:
        print(json_text({**summary, "names": names, "records": [g.record for g in games]}))
    else:
        print(report(cfg, names, summary))


def _match_report(args: argparse.Namespace) -> None:
    from messiah.arena.match import match_report

    text, summary = match_report(_config(args))
    print(json_text(summary) if args.json else text)


def _ladder(args: argparse.Namespace) -> None:
    from messiah.arena.ladder import ladder

    paths = ladder(_config(args))
    print(Path(paths["table"]).read_text())
    print(f"plot: {paths['png']}, {paths['svg']}" if paths["png"] else "plot: none (matplotlib is not installed)")


def _tune(args: argparse.Namespace) -> None:
    from messiah.arena.tune import tune

    try:
        import optuna  # noqa: F401
    except ImportError:
        raise SystemExit("messiah tune needs Optuna: pip install 'messiah[tune]'") from None
    result = tune(_config(args))
    if args.json:
        print(json_text(result))
        return
    wins, losses, draws = result["best_w_l_d"]
    print(f"{result['trials']} trials; best: trial {result['best_trial']}, {100 * result['best_score']:.1f}% "
          f"({wins}-{losses}-{draws}) against the defaults")
    print("\n".join(result["setoption"]))
    print(f"log: {result['log']}  study: {result['study']}  plot: {result['png']}")


def _fit_winrate(args: argparse.Namespace) -> None:
    from messiah.tools.fitwinrate import fit_files
    from messiah.winrate import WinRateScale

    cfg = _config(args)
    made_with = WinRateScale(1 / cfg.made_with[0], cfg.made_with[1] / 1000)
    out = fit_files(cfg.paths(), cfg.player, cfg.png, made_with, cfg.resamples)
    if args.json:
        print(json_text(out))
        return
    print(f"samples {out['samples']:,} from {out['games']:,} CSA games and the hcpe records "
          f"(left out: {out['dropped_abs_cp_over_1000']:,} with |cp| > 1000, {out['dropped_draws']:,} from draws)")
    for name in ("mse", "logloss"):
        fit = out[name]
        print(f"{name:8s} a = {fit['a']:.6f} (1/a = {fit['scale_cp']:.1f} cp)  b = {fit['b']:+.4f}")
    m = out["messiah"]
    interval = f" (95%: {m['ScoreScale_95'][0]} .. {m['ScoreScale_95'][1]}, games resampled)" \
        if "ScoreScale_95" in m else ""
    print(f"if these are messiah's own moves (made with ScoreScale {cfg.made_with[0]:g} ScoreBias "
          f"{cfg.made_with[1]:g}): ScoreScale {m['ScoreScale']}{interval} calibrates its score cp on the teacher's "
          f"zero-sum curve; the side to move's edge in these games, kept out of the score: {m['edge']:+.3f} "
          f"(at a 50% win rate it won {100 * m['won_at_50_percent']:.1f}%)")
    print(f"plot: {out['png']}")


def _usi(args: argparse.Namespace) -> None:
    from messiah.engine.usi import main

    main([])


class _Help(argparse.HelpFormatter):
    """A flag's default added to its help once, and only when the help does not already say it and there is one
    to say (not None, off or empty): what the hand-typed flags need; the generated ones write their own."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("default" in text.lower() or not action.option_strings or action.default is argparse.SUPPRESS
                or action.default in (None, False, "", [])):
            return text
        return text + " (default: %(default)s)"


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The subcommands' parsers, at every depth (``messiah bench search``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                yield command
                yield from _parsers(command)


def _command(sub: argparse._SubParsersAction, name: str, config: type, func: Callable[[argparse.Namespace], None],
             help: str, parents: tuple = (), **kw) -> argparse.ArgumentParser:
    """A subcommand whose flags are the fields of the dataclass ``config``, run by ``func``."""
    p = sub.add_parser(name, help=help, parents=list(parents), **kw)
    add_arguments(p, config)
    p.set_defaults(func=func, config=config)
    return p


def _sentence(text: str) -> str:
    """A help line as a description: capitalised, with a full stop."""
    return text[0].upper() + text[1:] + "."


def _command_group(sub: argparse._SubParsersAction, name: str, help: str, description: str, dest: str, metavar: str,
                   what: str, func: Callable[[argparse.Namespace], None], parents: tuple,
                   commands: Iterable[tuple[str, type, Callable, str]]) -> None:
    """A subcommand with subcommands of its own (``messiah bench search``): they are listed as ``metavar``, ``what``
    they are, and the one given is ``dest`` in the parsed arguments. Each of ``commands`` is (its name, its
    configuration's dataclass, the function that does the job, its help line); ``func`` runs every one of them,
    finding the job as ``args.run``, and prints its result."""
    group = sub.add_parser(name, help=help, description=description)
    subcommands = group.add_subparsers(dest=dest, required=True, metavar=metavar, help=what)
    for command, config, run, text in commands:
        _command(subcommands, command, config, func, text, parents, description=_sentence(text)).set_defaults(run=run)


def _add_game_commands(sub: argparse._SubParsersAction, as_json: argparse.ArgumentParser) -> None:
    """The commands that play, search or read games: ``usi``, ``analyze``, ``annotate``, ``play``, ``match``,
    ``match-report``, ``ladder``, ``tune`` and ``fit-winrate``."""
    from messiah.arena.ladder import LadderConfig
    from messiah.arena.match import MatchConfig, MatchReportConfig
    from messiah.arena.tune import TuneConfig
    from messiah.tools.analyze import AnalyzeConfig
    from messiah.tools.annotate import AnnotateConfig
    from messiah.tools.fitwinrate import FitConfig
    from messiah.tools.web import PlayConfig

    p = sub.add_parser("usi", help="run the USI engine on stdin/stdout (same as messiah-usi)",
                       description="The USI engine on stdin/stdout, as messiah-usi: register messiah-usi in a GUI, "
                       "or type usi, isready, position startpos, go movetime 1000, quit.")
    p.set_defaults(func=_usi)
    _command(sub, "analyze", AnalyzeConfig, _analyze, "search a position and print every legal move's Q", [as_json])
    _command(sub, "annotate", AnnotateConfig, _annotate, "search every position of a KIF/CSA game: scores, best "
             "moves, mistakes")
    _command(sub, "play", PlayConfig, _play, "play messiah in a browser on this machine (--web)")
    _command(sub, "match", MatchConfig, _match, "play games against another USI engine (through cshogi.cli)",
             [as_json])
    _command(sub, "match-report", MatchReportConfig, _match_report, "W-L-D, Elo and interval of the games recorded "
             "in match folders, counted together (a match played in parts)", [as_json])
    _command(sub, "ladder", LadderConfig, _ladder, "play messiah against fairy-stockfish at Skill Level -20..20 and "
             "gpsshogi at equal time: a table, a plot (PNG, SVG) and the rung where it scores 50%%")
    _command(sub, "tune", TuneConfig, _tune, "tune USI options by matches against the defaults (Optuna TPE, "
             "resumable)", [as_json])
    _command(sub, "fit-winrate", FitConfig, _fit_winrate, "fit winrate = sigmoid(a*cp + b) to game results", [as_json])


def _add_bench_commands(sub: argparse._SubParsersAction, as_json: argparse.ArgumentParser) -> None:
    """``messiah bench BENCH``, one bench a subcommand (messiah/tools/bench.py; soak: messiah/tools/soak.py)."""
    from messiah.tools import bench, soak

    _command_group(
        sub, "bench", help="speed figures of the evaluator, the searches, the engine's clock, training",
        description="Speed figures (messiah/tools/bench.py), one bench per subcommand.", dest="bench",
        metavar="BENCH", what="the bench to run", func=_bench, parents=(as_json,), commands=(
            ("evaluator", bench.EvaluatorBench, bench.bench_evaluator,
             "features, move indices and the evaluator on a fixed position set; all-moves against per-child"),
            ("search", bench.SearchBench, bench.bench_searches, "each search at a fixed time per position: positions "
             "evaluated per second, against the bare evaluator"),
            ("latency", bench.LatencyBench, bench.bench_latency, "how far past its byoyomi the engine process "
             "answers (NetworkDelay2 0), per search: what NetworkDelay2 must cover"),
            ("clock", bench.ClockBench, bench.bench_clock, "play the engine against itself under a clock: the time "
             "each move took and what was left"),
            ("train", bench.TrainBench, bench.bench_train, "training positions per second and the share spent "
             "waiting for data, per loader worker count (needs torch)"),
            ("choices", bench.ChoicesBench, bench.bench_choices, "each search's choices at a fixed number of nodes on "
             "fixed positions, and how many agree with an earlier run's"),
            ("perft", bench.PerftBench, bench.bench_perft, "perft by the playout core's board and by cshogi: both "
             "counts and times"),
            ("selfplay", bench.SelfPlayBench, bench.bench_selfplay, "self-play positions a second of one actor "
             "(messiah rl's games on one core), per search batch"),
            ("soak", soak.SoakBench, soak.bench_soak, "many games against one engine process, driven over raw "
             "pipes as a GUI drives it (ponder, stop, isready, setoption): illegal moves, time losses, missing or "
             "doubled bestmoves, lines that are not USI, and its memory after each game")))


def _add_book_commands(sub: argparse._SubParsersAction, as_json: argparse.ArgumentParser) -> None:
    """``messiah book COMMAND``: build, deepen and show opening books (messiah/tools/book.py)."""
    from messiah.tools import book

    _command_group(
        sub, "book", help="opening books (YaneuraOu's DB2016 text format): build one from game records, deepen it "
        "with the engine, show it at a position", description="Opening books for the BookFile option "
        "(messiah/tools/book.py).", dest="book_command", metavar="COMMAND", what="what to do", func=_book,
        parents=(as_json,), commands=(
            ("build", book.BookBuildConfig, book.build_book, "count the moves of game records (hcpe, self-play, "
             "CSA, KIF) in their first plies into a book"),
            ("think", book.BookThinkConfig, book.think_book, "search the position after every book move with the "
             "engine and write the move's value and depth"),
            ("show", book.BookShowConfig, book.show_book, "the book's moves at a position")))


def _add_training_commands(sub: argparse._SubParsersAction, as_json: argparse.ArgumentParser) -> None:
    """The commands that make and measure models: ``evaluate``, ``gensfen``, ``pretrain``, ``rl``, ``export`` and
    ``quantize``."""
    from messiah.models.quantize import QuantizeConfig
    from messiah.tools.evaluate import EvaluateConfig
    from messiah.train.config import ExportConfig, TrainConfig
    from messiah.train.gensfen import GensfenConfig
    from messiah.train.rl.config import RECIPES, RLConfig, recipe_flags

    _command(sub, "evaluate", EvaluateConfig, _evaluate, "agreement, top-3 agreement and value MSE of a model on data",
             [as_json])
    _command(sub, "gensfen", GensfenConfig, _gensfen, "teacher data (hcpe) from a USI engine's self-play; resumable",
             [as_json])
    p = _command(sub, "pretrain", TrainConfig, _pretrain, "supervised pretraining on teacher data (needs torch); "
                 "under torchrun --nproc_per_node N it trains data-parallel",
                 description="Supervised pretraining (train/pretrain.py). Every flag is a field of "
                 "messiah.train.config.TrainConfig; --resume continues OUT's run with its own configuration.")
    p.add_argument("--resume", action="store_true", help="continue the run in OUT from its checkpoint.pt, with "
                   "the configuration saved there; flags that would change the run are refused")
    p = _command(sub, "rl", RLConfig, _rl, "self-play reinforcement, DQN with Q(lambda), in generations (needs "
                 "torch); rerunning the command continues the run",
                 description="Self-play DQN/Q(lambda) (train/rl/loop.py, docs/rl.md). Every flag is a field of "
                 "messiah.train.rl.config.RLConfig; OUT keeps the run's configuration, and rerunning the command "
                 "continues it (flags that would change the run are refused).")
    p.add_argument("--recipe", choices=sorted(RECIPES), help="start from a recipe (train/rl/config.py), as if its "
                   "flags came first: the flags given override them, and OUT's config.json keeps the values; "
                   + "; ".join(f"{name}: {recipe_flags(name)}" for name in RECIPES) + " (default: none)")
    _command(sub, "export", ExportConfig, _export, "export a training checkpoint to ONNX (needs torch)")
    _command(sub, "quantize", QuantizeConfig, _quantize, "an int8 copy of a model for the CPU, about twice as fast "
             "(needs the training extra)")


def build_parser() -> argparse.ArgumentParser:
    """The ``messiah`` parser, its subcommands in the order ``messiah --help`` lists them; every parser's help shows
    the flags' defaults (:class:`_Help`)."""
    from messiah.engine.usi import ENGINE_NAME

    parser = argparse.ArgumentParser(prog="messiah", description=plain(__doc__.split("\n\n")[0]))
    parser.add_argument("--version", action="version", version=ENGINE_NAME, help="print what `id name` says and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print the result as one JSON object")
    _add_game_commands(sub, as_json)
    _add_bench_commands(sub, as_json)
    _add_book_commands(sub, as_json)
    _add_training_commands(sub, as_json)
    for command in _parsers(parser):
        command.formatter_class = _Help
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run one subcommand. An error meant for the user (MessiahError: bad input, a missing or malformed file, a
    dead engine) or a path the system cannot open or make (a folder where a file is, a file where a folder
    must be) is one line and exit status 2; anything else is a bug and keeps its traceback."""
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except BrokenPipeError:  # output piped into head & co.
        sys.stdout = open(os.devnull, "w")
    except (MessiahError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
            PermissionError) as e:
        print(f"messiah {args.command}: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
