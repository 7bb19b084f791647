"""The ``messiah`` command line: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import json
import os
import sys

from messiah.evaluator import ModelError


def _bench(args: argparse.Namespace) -> None:
    from messiah.bench import run_bench

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


def _pretrain(args: argparse.Namespace) -> None:
    try:
        from models.net import NetConfig
        from train.pretrain import TrainConfig, train
    except ImportError as e:
        raise SystemExit(f"messiah pretrain needs the training extra (pip install 'messiah[train]'): {e}") from None
    net = NetConfig(channels=args.channels, blocks=args.blocks)
    cfg = TrainConfig(data=args.data, out=args.out, net=net, steps=args.steps, batch_size=args.batch_size,
                      lr=args.lr, scale=args.scale, result_mix=args.result_mix, rank_weight=args.rank_weight,
                      rank_scale=args.rank_scale, seed=args.seed)
    print(train(cfg, resume=args.resume))


def _export(args: argparse.Namespace) -> None:
    from train.pretrain import export_checkpoint

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

    p = sub.add_parser("bench", help="speed of features, move indices and the evaluator")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    p.add_argument("--positions", help="hcpe file to draw the fixed position set from")
    p.add_argument("--arch", help="bench a random-weight model of this shape instead, e.g. 7x64 (needs torch)")
    p.add_argument("--search", action="store_true", help="bench the searches instead")
    p.add_argument("--movetime", type=int, default=200, help="ms per position for --search")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_bench)

    p = sub.add_parser("evaluate", help="agreement, top-3 agreement and value MSE of a model on data")
    p.add_argument("--model", help="ONNX model (default: the shipped one)")
    p.add_argument("--data", required=True, help="hcpe file")
    p.add_argument("--limit", type=int, default=0, help="evaluate the first N positions only")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--scale", type=float, default=875.0, help="cp per logit of the data's evals")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_evaluate)

    p = sub.add_parser("pretrain", help="supervised pretraining on teacher hcpe files (needs torch)")
    p.add_argument("data", nargs="+", help="hcpe files")
    p.add_argument("--out", default="runs/pretrain")
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--scale", type=float, default=600.0, help="cp per logit of the teacher's evals")
    p.add_argument("--result-mix", type=float, default=0.0)
    p.add_argument("--rank-weight", type=float, default=0.1)
    p.add_argument("--rank-scale", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt")
    p.set_defaults(func=_pretrain)

    p = sub.add_parser("export", help="export a pretraining checkpoint to ONNX (needs torch)")
    p.add_argument("checkpoint")
    p.add_argument("out")
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
