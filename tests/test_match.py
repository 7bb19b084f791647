"""`messiah match` and `messiah fit-winrate`: a real match against fairy-stockfish, the Elo arithmetic, and
the fit against the figures published with the teacher data."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import cshogi
import numpy as np
import pytest
from conftest import program, shared
from cshogi import CSA
from cshogi.elo import Elo

from messiah.arena.match import (
    DEFAULT_OPENINGS,
    OPENING_PLIES,
    RANDOM_OPENING_PLIES,
    MatchConfig,
    MatchReportConfig,
    match_report,
    recorded_games,
)
from messiah.arena.stats import Game, elo_interval, pentanomial, sprt_bounds, sprt_llr, sprt_state, wilson
from messiah.config import parse_options
from messiah.errors import DataError, UserError
from messiah.tools.fitwinrate import Samples, bootstrap_scale, fit_files, samples_from_csa, score_scale
from messiah.winrate import TEACHER_SCALE, WinRateScale, zero_sum

FAIRY = "/usr/games/fairy-stockfish"
SHIP = Path(__file__).resolve().parents[1] / "scripts" / "ship"  # the screen, shipping match and ladder scripts


def test_elo_matches_cshogi_inside_and_stays_finite_at_the_edges():
    for wins, losses, draws in [(12, 6, 2), (30, 50, 20), (5, 5, 0), (120, 60, 20)]:
        diff, low, high = elo_interval(wins, losses, draws)
        assert diff == pytest.approx(Elo(wins, losses, draws).diff())
        assert low < diff < high
        if wins + losses + draws >= 100:  # Wilson's interval approaches the normal one cshogi prints
            assert (high - low) / 2 == pytest.approx(Elo(wins, losses, draws).error_margin(), rel=0.05)
    diff, low, high = elo_interval(20, 0, 0)
    assert diff == math.inf and 100 < low < math.inf and high == math.inf
    diff, low, high = elo_interval(0, 20, 0)
    assert diff == -math.inf and low == -math.inf and -math.inf < high < -100


@pytest.mark.parametrize("k, n, low, high", [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605),
                                             (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)])
def test_wilson_gives_newcombes_published_intervals(k, n, low, high):
    """Newcombe (1998), Statistics in Medicine 17:857, table II, the score method without continuity correction."""
    p = k / n
    assert wilson(p, p * (1 - p), n) == pytest.approx((low, high), abs=5e-5)


def test_options_parse_names_with_spaces_and_reject_garbage():
    assert parse_options(["Skill Level=-20", "Threads=1"]) == {"Skill Level": "-20", "Threads": "1"}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_options(["Threads"])


def test_fit_reproduces_the_published_teacher_scale():
    """../shared/data/README.md: teacher_s1 and s2 gave 1/a = 875, b = -0.08 by squared error and 872, -0.08
    by log-loss, from 160,802 positions."""
    out = fit_files([str(shared("teacher/teacher_s1.hcpe")), str(shared("teacher/teacher_s2.hcpe"))])
    assert out["samples"] == 160_802
    assert out["mse"]["scale_cp"] == pytest.approx(875, abs=1) and out["mse"]["b"] == pytest.approx(-0.08, abs=0.005)
    assert out["logloss"]["scale_cp"] == pytest.approx(872, abs=1)


def test_a_real_match_against_fairy_stockfish(tmp_path, messiah_usi):
    """Two games (one opening, both colours) at a short byoyomi: no illegal move, no time loss, records
    written and readable, progress on stderr."""
    program(FAIRY, "fairy-stockfish")
    out = tmp_path / "match"
    cmd = [sys.executable, "-m", "messiah.cli", "match", "--opponent", FAIRY, "--opponent-option",
           "Skill Level=-20", "--games", "2", "--byoyomi", "300", "--draw", "200", "--out", str(out), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["games"] == 2 and summary["wins"] + summary["losses"] + summary["draws"] == 2
    assert summary["forfeits"] == [0, 0], summary["endings"]
    assert "%TIME_UP" not in summary["endings"] and "%ILLEGAL_MOVE" not in summary["endings"]
    records = sorted(out.glob("*.csa"))
    assert len(records) == 2 and summary["records"] == [str(r) for r in records]
    for record in records:
        game = CSA.Parser.parse_file(str(record))[0]
        # the opening (the shared set's 24 plies, or 8 random ones without it) and then real play, to an end: a
        # strong model may mate Skill -20 before ply 24
        opening = OPENING_PLIES if DEFAULT_OPENINGS.is_file() else RANDOM_OPENING_PLIES
        assert len(game.moves) > opening and game.endgame
    assert "2/2" in done.stderr  # the progress bar
    _, recorded = recorded_games(out)  # the records say what cshogi.cli's tally said
    assert [sum(g.outcome == o for g in recorded) for o in ("win", "loss", "draw")] == \
        [summary["wins"], summary["losses"], summary["draws"]]


def test_a_ponder_match_ponders_only_the_engine_that_may(tmp_path, messiah_usi):
    """--ponder with the opponent's USI_Ponder off: messiah (first) is sent go ponder on the opponent's time and
    answers each by ponderhit or stop, the opponent never is, and the report counts the ponderhits."""
    out, opponent_log = tmp_path / "match", tmp_path / "opponent.log"
    # --out relative to the working directory, as a user writes it (cshogi starts engines in their own folder)
    cmd = [sys.executable, "-m", "messiah.cli", "match", "--opponent", "messiah-usi", "--ponder",
           "--opponent-option", "USI_Ponder=false", "--opponent-option", f"WriteDebugLog={opponent_log}",
           "--games", "2", "--byoyomi", "300", "--draw", "50", "--out", "match", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["games"] == 2 and summary["forfeits"] == [0, 0], summary["endings"]
    ponder = summary["ponder"]
    assert ponder["ponders"] >= 2 * 8 and 0 <= ponder["hits"] <= ponder["ponders"]  # 13 moves each game
    assert ponder["share"] == ponder["hits"] / ponder["ponders"]
    opponent = opponent_log.read_text()
    assert opponent.count("> go ") >= 2 * 8 and "ponder" not in opponent
    assert not list(out.rglob("*.usi.log"))  # the first engine's logs were read and removed


def test_an_opponent_at_a_fixed_search_is_sent_only_that_go(tmp_path, messiah_usi):
    """--opponent-go 'nodes 60': every go the opponent reads (its own debug log) is 'go nodes 60', the first engine
    keeps the clock, and the card and report say so."""
    out, opponent_log = tmp_path / "match", tmp_path / "opponent.log"
    cmd = [sys.executable, "-m", "messiah.cli", "match", "--opponent", "messiah-usi", "--opponent-go", "nodes 60",
           "--opponent-option", f"WriteDebugLog={opponent_log}", "--games", "2", "--byoyomi", "200", "--draw", "40",
           "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    gos = [line.split("> ", 1)[1] for line in opponent_log.read_text().splitlines() if "> go" in line]
    assert len(gos) >= 4 and set(gos) == {"go nodes 60"}  # its moves after the opening, every one
    assert "at go nodes 60" in done.stdout
    assert json.loads((out / "match.json").read_text())["opponent_go"] == "nodes 60"
    first = (out / "engine.watched.sh").read_text()
    assert "--go" not in first and "--go 'nodes 60'" in (out / "opponent.watched.sh").read_text()


@pytest.mark.parametrize("args", ["btime 0 wtime 0 byoyomi 1000", "depth", "infinite", "ponder depth 3",
                                  "depth 8 byoyomi 100", "nodes -5", "depth 8 cheese"])
def test_opponent_go_takes_a_fixed_search_and_nothing_else(args):
    assert MatchConfig(opponent="x", opponent_go=" depth  8 ").opponent_go == "depth 8"
    assert MatchConfig(opponent="x", opponent_go="nodes 1000 movetime 500").opponent_go == "nodes 1000 movetime 500"
    with pytest.raises(UserError, match="--opponent-go"):
        MatchConfig(opponent="x", opponent_go=args)


def test_opponent_go_and_ponder_do_not_go_together():
    with pytest.raises(UserError, match="ponder"):
        MatchConfig(opponent="x", opponent_go="depth 8", ponder=True)


def test_ponder_counts_reads_games_from_a_debug_log():
    log = """  0.001 > usi
  0.010 > usinewgame
  0.020 > go btime 0 wtime 0 byoyomi 300
  0.400 < bestmove 7g7f ponder 3c3d
  0.401 > go ponder btime 0 wtime 0 byoyomi 300
  0.700 > ponderhit
  1.000 < bestmove 2g2f ponder 8c8d
  1.001 > go ponder btime 0 wtime 0 byoyomi 300
  1.300 > stop
  2.000 > usinewgame
  2.001 > go ponder byoyomi 300
  2.300 > gameover win
"""
    from messiah.arena.match import ponder_counts

    assert ponder_counts(log) == [(2, 1), (1, 0)]


def test_player_takes_only_the_moves_of_the_player_of_that_exact_name(tmp_path):
    """"messiah" must not also take the moves of "messiah-old"; scores come back from the mover's view."""
    import cshogi
    from cshogi.cli import usi_info_to_csa_comment

    board = cshogi.Board()
    exporter = CSA.Exporter(str(tmp_path / "game.csa"))
    exporter.info(board.copy(), names=["messiah", "messiah-old"])
    written = []
    for ply in range(12):
        move = sorted(board.legal_moves)[ply % 3]
        cp = 10 * ply + 5  # for the side to move, as an engine prints it
        written.append(cp)
        info = f"info depth 1 score cp {cp} pv {cshogi.move_to_usi(move)}"
        exporter.move(move, comment=usi_info_to_csa_comment(board, info))
        board.push(move)
    exporter.endgame("%TORYO")  # black to move resigns: white won
    exporter.close()
    black, white = (samples_from_csa([tmp_path / "game.csa"], name) for name in ("messiah", "messiah-old"))
    assert list(black.cp) == written[0::2] and list(black.win) == [0.0] * 6
    assert list(white.cp) == written[1::2] and list(white.win) == [1.0] * 6
    assert len(samples_from_csa([tmp_path / "game.csa"]).cp) == 12
    with pytest.raises(ValueError, match="no player named 'messiah-new'.*messiah, messiah-old"):
        samples_from_csa([tmp_path / "game.csa"], "messiah-new")


def test_score_scale_prints_the_fitted_win_rate_on_the_zero_sum_teacher_curve():
    """With the new ScoreScale, a printed cp read on the teacher's zero-sum curve is the win rate the fit gave
    for the cp the engine printed before (old records with a bias), less the side to move's edge."""
    made_with = WinRateScale(1 / 742, -0.135)
    fit = (1 / 344, -0.347)
    scale, edge = score_scale(fit, made_with)
    new = zero_sum(scale)
    for q in (0.2, 0.45, 0.5, 0.62, 0.8):
        old_cp = (math.log(q / (1 - q)) - made_with.b) / made_with.a  # unrounded: the identity is exact
        fitted = 1 / (1 + math.exp(-(fit[0] * old_cp + fit[1] - edge)))
        assert zero_sum(TEACHER_SCALE).to_winrate(new.to_cp(q)) == pytest.approx(fitted, abs=0.002)
    assert edge == pytest.approx(-0.347 + 742 / 344 * 0.135)  # b_f - k * b0, by hand
    assert new.to_cp(0.5) == 0


def test_the_bootstrap_interval_holds_the_scale_that_made_the_games():
    """Positions drawn from a known curve (cp printed at 700 per logit of Q, results from sigmoid(2 logit(Q)),
    so the true ScoreScale is 2 * 875 = 1750), in 80 games of 60: the 95% interval over resampled games holds
    the truth and excludes the scale that made the cp."""
    rng = np.random.default_rng(1)
    cp = rng.uniform(-800, 800, 80 * 60)
    win = (rng.random(cp.size) < 1 / (1 + np.exp(-2 * cp / 700))).astype(np.float64)
    samples = Samples(cp, win, np.repeat(np.arange(80), 60), 0, 0, 80)
    low, high = bootstrap_scale(samples, WinRateScale(1 / 700, 0.0), 200)
    assert low < 1750 < high and high < 2 * low
    assert not low < 875 < high


def exact_gsprt(counts: list[int], elo0: float, elo1: float) -> float:
    """The GSPRT's LLR without the normal approximation: each hypothesis's maximum-likelihood pentanomial
    distribution with the expected score it requires (p_j proportional to f_j / (1 + lambda (x_j - s)))."""
    x = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    n = sum(counts)
    f = np.array(counts, dtype=float) / n

    def fitted(score: float) -> np.ndarray:
        d = x - score
        low, high = -1 / d.max() + 1e-12, -1 / d.min() - 1e-12  # where every probability stays positive
        for _ in range(200):  # bisection: the constraint's sum falls as lambda rises
            lam = (low + high) / 2
            if np.sum(f * d / (1 + lam * d)) > 0:
                low = lam
            else:
                high = lam
        return f / (1 + lam * d)

    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    p0, p1 = fitted(s0), fitted(s1)
    seen = f > 0
    return float(n * np.sum(f[seen] * np.log(p1[seen] / p0[seen])))


@pytest.mark.parametrize("counts", [[20, 100, 200, 110, 25], [60, 150, 220, 120, 30], [5, 40, 90, 60, 20]])
def test_sprt_llr_is_close_to_the_exact_gsprt(counts):
    for elo0, elo1 in [(0, 10), (-5, 5), (0, 30)]:
        assert sprt_llr(counts, elo0, elo1) == pytest.approx(exact_gsprt(counts, elo0, elo1), rel=0.05, abs=0.05)


def test_sprt_decides_a_clear_gap_early_and_never_before_ten_pairs():
    lower, upper = sprt_bounds()
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)

    def games_of(pair_scores: list[float]) -> list[Game]:
        outcome = {1.0: ("win", "win"), 0.75: ("win", "draw"), 0.5: ("win", "loss"), 0.25: ("draw", "loss"),
                   0.0: ("loss", "loss")}
        return [Game(2 * k + i + 1, k, i == 0, outcome[s][i], "%TORYO", 100, "")
                for k, s in enumerate(pair_scores) for i in range(2)]

    assert sprt_state(pentanomial(games_of([1.0] * 9)), 0, 30)["decision"] == "continue"  # too few pairs to judge
    assert sprt_state(pentanomial(games_of([1.0] * 8 + [0.5] * 2)), 0, 30)["decision"] == "H1 accepted"  # 18-2
    assert sprt_state(pentanomial(games_of([0.0] * 8 + [0.5] * 2)), 0, 30)["decision"] == "H0 accepted"
    assert sprt_state(pentanomial(games_of([0.5, 0.75, 0.25] * 4)), 0, 30)["decision"] == "continue"  # even
    assert pentanomial(games_of([1.0, 0.75, 0.5])[:5]) == [0, 0, 0, 1, 1]  # the unfinished pair is left out


def _won_pair(commands, names, options, cfg, opening, games, first_number, ponder_log):
    """Stands in for a pair of real games: two wins, and a file saying the pair was played."""
    import time
    time.sleep(0.05)
    Path(cfg.out, f"played{first_number:04d}").touch()
    return [Game(first_number + i, opening, i == 0, "win", "%TORYO", 80, "") for i in range(games)], ""


def test_a_decided_sprt_starts_no_more_pairs(tmp_path, monkeypatch):
    """Pairs are handed to workers as they free up, so after the decision (10 won pairs) at most the jobs - 1
    pairs still running are played; the executor's queue held jobs + 1 more that were played for nothing."""
    import messiah.arena.match as match

    monkeypatch.setattr(match, "_play_pair", _won_pair)  # the forked workers see it
    monkeypatch.setattr(match, "check_engines", lambda commands, options: None)
    cfg = match.MatchConfig(opponent=sys.executable, engine=sys.executable, games=100, jobs=3, openings=None,
                            sprt=(0, 30), out=str(tmp_path))
    _, games = match.play_match(cfg)
    assert len(games) == 20 and match.summarize(games, cfg.sprt)["sprt"]["decision"] == "H1 accepted"
    assert len(list(tmp_path.glob("played*"))) <= 10 + cfg.jobs - 1


def test_a_match_writes_what_it_was_beside_its_records_and_the_report_carries_it(tmp_path, monkeypatch):
    """OUT/match.json: the command line, each engine's options with the sha256 of the files they name (a model),
    the openings file and its sha256, the clock, the seed, the date; match-report's summary lists each folder as
    a part with its card, so a committed summary says what was played once the records are gone."""
    import datetime
    import hashlib

    import messiah.arena.match as match

    monkeypatch.setattr(match, "_play_pair", _won_pair)
    monkeypatch.setattr(match, "check_engines", lambda commands, options: None)
    model, openings = tmp_path / "candidate.onnx", tmp_path / "openings.sfen"
    model.write_bytes(b"not a real model, hashed all the same")
    openings.write_text("startpos moves 7g7f\nstartpos moves 2g2f\n")
    out = tmp_path / "m"
    cfg = match.MatchConfig(opponent=sys.executable, engine=sys.executable, games=4, jobs=1, byoyomi=1000,
                            options={"ModelPath": str(model), "Threads": "1"}, openings=str(openings), seed=77,
                            out=str(out))
    match.play_match(cfg, progress=False)
    card = json.loads((out / "match.json").read_text())
    assert card["engine"]["options"] == {"ModelPath": str(model), "Threads": "1"}
    assert card["engine"]["files"]["ModelPath"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert card["opponent"]["options"] == {} and card["opponent"]["files"] == {}
    assert card["openings"] == {"path": str(openings), "sha256": hashlib.sha256(openings.read_bytes()).hexdigest()}
    assert (card["games"], card["byoyomi"], card["seed"], card["time"]) == (4, 1000, 77, None)
    assert datetime.datetime.fromisoformat(card["date"]).tzinfo is not None and card["command"]
    # what it ran on: the library versions a replay of its numbers would install
    assert card["environment"]["packages"]["numpy"] == np.__version__ and card["environment"]["cores"] >= 1
    _match_folder(tmp_path / "r")
    (tmp_path / "r" / "match.json").write_text(json.dumps(card))
    _match_folder(tmp_path / "old")  # a match from before match.json
    _, summary = match_report(MatchReportConfig([str(tmp_path / "r"), str(tmp_path / "old")]))
    assert summary["parts"] == [{"folder": str(tmp_path / "r"), "games": 4, "match": card},
                                {"folder": str(tmp_path / "old"), "games": 4}]


def test_a_match_all_won_or_all_lost_reads_as_a_one_sided_bound_not_infinity():
    """A 2-0 match printed 'Elo difference +inf (95% interval -113 .. +inf)'."""
    from messiah.arena.match import _report
    from messiah.arena.stats import Game, elo_interval, summarize

    def report(*outcomes: str) -> list[str]:
        games = [Game(k, k, k % 2 == 0, outcome, "%TORYO", 90, f"{k}.csa") for k, outcome in enumerate(outcomes)]
        return _report("A vs B", ("A", "B"), summarize(games), "records").splitlines()

    won = report("win", "win")
    assert f"Elo difference at least {round(elo_interval(2, 0, 0)[1]):+d} (95%; every game won)" in won
    assert not any("inf" in line for line in won)
    assert f"Elo difference at most {round(elo_interval(0, 3, 0)[2]):+d} (95%; every game lost)" in \
        report("loss", "loss", "loss")
    assert any(line.startswith("Elo difference +0 (95% interval -") for line in report("win", "loss"))


def test_elo_text_signs_every_figure_and_never_writes_minus_zero():
    from messiah.arena.stats import elo_interval, elo_text

    assert elo_text(elo_interval(10, 10, 0)[0]) == "+0"
    assert [elo_text(x) for x in (52.5, -131.4, math.inf, -math.inf)] == ["+52", "-131", "+inf", "-inf"]


def test_without_the_shared_set_a_match_plays_random_openings(tmp_path, monkeypatch, capsys):
    """A clone without $MESSIAH_DATA still plays varied games: 'auto' openings fall back to random legal
    moves from the start position, written beside the records, the same for the same seed."""
    from messiah.arena import match

    monkeypatch.setattr(match, "DEFAULT_OPENINGS", tmp_path / "absent.sfen")
    cfg = match.MatchConfig(opponent="x", out=str(tmp_path / "m"), seed=5)
    (tmp_path / "m").mkdir()
    path, pairs = match.match_openings(cfg, 6)
    lines = open(path).read().splitlines()
    assert path == str(tmp_path / "m" / "openings.sfen") and len(lines) == 6 and len(set(lines)) == 6
    said = capsys.readouterr().err
    assert f": 6 openings of {match.RANDOM_OPENING_PLIES} random moves written to {path}" in said  # it said '(6)'
    match.match_openings(match.MatchConfig(opponent="x", out=str(tmp_path / "m"), seed=5), 1)
    assert f": 1 opening of {match.RANDOM_OPENING_PLIES} random moves written to {path}" in capsys.readouterr().err
    for line in lines:
        words = line.split()
        assert words[:2] == ["startpos", "moves"] and len(words) == 2 + match.RANDOM_OPENING_PLIES
        board = cshogi.Board()
        for usi in words[2:]:
            move = board.move_from_usi(usi)
            assert board.is_legal(move), line
            board.push(move)
        assert not board.is_game_over()
    assert match.random_openings(6, 5) == lines and match.random_openings(6, 6) != lines
    assert pairs == [0, 1, 2, 3, 4, 5]  # each opening played once
    assert match.match_openings(match.MatchConfig(opponent="x", openings="none"), 3) == (None, [None] * 3)
    shared = tmp_path / "shared.sfen"
    shared.write_text("\n".join(lines[:3]) + "\n")
    monkeypatch.setattr(match, "DEFAULT_OPENINGS", shared)
    path, pairs = match.match_openings(cfg, 6)
    assert path == str(shared)  # the shared set when present, its lines drawn by the seed
    assert set(pairs) <= {0, 1, 2} and len(set(pairs)) > 1 and match.match_openings(cfg, 6).lines == pairs


def test_random_openings_can_be_asked_for_beside_the_shared_set(tmp_path, monkeypatch):
    """--openings random: a new opening for each pair, random moves made from the seed, written beside the records,
    whether or not the shared set is there (issue 32's matches play half their games on such openings)."""
    from messiah.arena import match

    shared = tmp_path / "shared.sfen"
    shared.write_text("startpos moves 7g7f\n")
    monkeypatch.setattr(match, "DEFAULT_OPENINGS", shared)
    cfg = match.MatchConfig(opponent="x", openings="random", out=str(tmp_path / "m"), seed=9)
    (tmp_path / "m").mkdir()
    path, pairs = match.match_openings(cfg, 4)
    assert path == str(tmp_path / "m" / "openings.sfen") and pairs == [0, 1, 2, 3]
    assert open(path).read().splitlines() == match.random_openings(4, 9)


def _record(path, black: str, white: str, plies: int, ending: str) -> None:
    """A CSA record as cshogi.cli writes one: ``plies`` legal moves from the start position, then ``ending``
    (%TORYO: the side to move resigns)."""
    board, exporter = cshogi.Board(), CSA.Exporter(str(path))
    exporter.info(init_board=board, names=[black, white])
    for _ in range(plies):
        move = next(iter(board.legal_moves))
        exporter.move(move)
        board.push(move)
    exporter.endgame(ending)
    exporter.close()


def _match_folder(folder) -> None:
    """Two pairs between A (the first engine) and B: A wins both games of the first (B resigns as black, then
    as white) and scores a half in the second (a repetition draw, then A resigns as white)."""
    folder.mkdir()
    _record(folder / "0001_A+B+1.csa", "A", "B", 3, "%TORYO")  # white (B) to move resigns
    _record(folder / "0002_B+A+2.csa", "B", "A", 4, "%TORYO")  # black (B) to move resigns
    _record(folder / "0003_A+B+3.csa", "A", "B", 6, "%SENNICHITE")
    _record(folder / "0004_B+A+4.csa", "B", "A", 5, "%TORYO")  # white (A) to move resigns


def test_recorded_games_read_a_match_folder(tmp_path):
    _match_folder(tmp_path / "m")
    names, games = recorded_games(tmp_path / "m")
    assert names == ("A", "B")
    assert [g.outcome for g in games] == ["win", "win", "draw", "loss"]
    assert [g.first_is_black for g in games] == [True, False, True, False]
    assert [g.plies for g in games] == [3, 4, 6, 5] and games[2].ending == "%SENNICHITE"


def test_match_report_counts_folders_as_one_match(tmp_path, capsys):
    """Two folders: 8 games, each folder's pairs kept as pairs (2 points twice, 1/2 twice)."""
    _match_folder(tmp_path / "a")
    _match_folder(tmp_path / "b")
    text, summary = match_report(MatchReportConfig([str(tmp_path / "a"), str(tmp_path / "b")]))
    assert (summary["wins"], summary["losses"], summary["draws"]) == (4, 2, 2)
    assert summary["pentanomial"] == [0, 2, 0, 0, 2]
    assert (summary["elo"], summary["elo_low"], summary["elo_high"]) == elo_interval(4, 2, 2)
    assert text.startswith("A vs B: 8 games (") and "W-L-D 4-2-2" in text
    from messiah.cli import main

    main(["match-report", str(tmp_path / "a"), "--json"])
    assert json.loads(capsys.readouterr().out)["games"] == 4
    # the parts as one SPRT: the merged pairs' log-likelihood ratio, by the same function a match's --sprt uses
    text, summary = match_report(MatchReportConfig([str(tmp_path / "a"), str(tmp_path / "b")], sprt=(0.0, 50.0)))
    assert summary["sprt"]["pentanomial"] == [0, 2, 0, 0, 2]
    assert summary["sprt"]["llr"] == sprt_llr([0, 2, 0, 0, 2], 0.0, 50.0) and "SPRT elo0 0 elo1 50" in text


def _lost_folder(folder) -> None:
    """One pair that A (the first engine) lost in both games: its Elo is minus infinity, which JSON writes as null."""
    folder.mkdir(parents=True)
    _record(folder / "0001_A+B+1.csa", "A", "B", 4, "%TORYO")  # black (A) to move resigns
    _record(folder / "0002_B+A+2.csa", "B", "A", 5, "%TORYO")  # white (A) to move resigns


def _ship_script(name: str, args: list[str], capsys) -> dict:
    """Run scripts/ship/NAME with ``args`` as its command line; what it printed, parsed as strict JSON (no NaN or
    Infinity, which tests/test_release.py refuses in a committed summary)."""
    import runpy

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    argv = sys.argv
    sys.argv = [name, *args]
    try:
        runpy.run_path(str(SHIP / name), run_name="__main__")
    finally:
        sys.argv = argv
    return json.loads(capsys.readouterr().out, parse_constant=refuse)


def test_the_shipping_summary_counts_each_opening_set_both_with_the_sprt_and_each_part(tmp_path, capsys):
    """scripts/ship/summary.py, in a folder ship.sh played in: random-* folders are one opening set, records-* the
    other, both together carry the SPRT (0, 100), each part its own count, each folder's openings their seed."""
    for name, seed in (("random-1", 11), ("records-1", 12), ("random-2", 21), ("records-2", 22)):
        if name == "records-2":  # a part A lost in every game
            _lost_folder(tmp_path / name)
        else:
            _match_folder(tmp_path / name)
        card = {"openings": {"path": f"{name}.sfen", "sha256": "0" * 64}, "seed": seed}
        (tmp_path / name / "match.json").write_text(json.dumps(card))
    summary = _ship_script("summary.py", ["--folder", str(tmp_path), "--match", "a test", "--status", "done",
                                          "--machine", "here", "--engine", "A against B"], capsys)
    assert (summary["match"], summary["status"], summary["machine"], summary["engine"]) == (
        "a test", "done", "here", "A against B")
    wld = {key: (s["wins"], s["losses"], s["draws"]) for key, s in summary["by_openings"].items()}
    assert wld == {"random": (4, 2, 2), "records": (2, 3, 1)}  # a mixed folder: A won 2, lost 1, drew 1
    both = summary["both"]
    assert (both["games"], both["wins"], both["losses"], both["draws"]) == (14, 6, 5, 3)
    assert both["sprt"]["elo1"] == 100.0 and both["sprt"]["pentanomial"] == [1, 3, 0, 0, 3]
    assert {name: part["games"] for name, part in summary["by_part"].items()} == {
        "random-1": 4, "random-2": 4, "records-1": 4, "records-2": 2}
    assert summary["by_part"]["records-2"]["elo"] is None
    assert {name: o["seed"] for name, o in summary["openings"].items()} == {"random-1": 11, "random-2": 21,
                                                                            "records-1": 12, "records-2": 22}


def test_a_screen_on_a_list_of_sets_plays_each_set_in_its_own_folder_and_reports_them_together(tmp_path, messiah_usi):
    """scripts/ship/screen.sh with SEED=5,6 (the picking rule's several sets, here two of 2 games at 8 nodes): each set
    plays into OUT/random-SEED on its own openings and seed, and the last report counts the sets together."""
    from messiah.evaluator import default_model_path

    script = SHIP / "screen.sh"
    model, out = str(default_model_path(int8=True)), tmp_path / "screen"
    done = subprocess.run(["bash", str(script), str(Path(messiah_usi).parent), model, model, "5,6", str(out)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "GAMES": "2", "NODES": "8"})
    assert done.returncode == 0, done.stderr[-2000:]
    cards = {s: json.loads((out / f"random-{s}" / "match.json").read_text()) for s in (5, 6)}
    assert [cards[s]["seed"] for s in (5, 6)] == [5, 6]
    assert cards[5]["openings"]["sha256"] != cards[6]["openings"]["sha256"]
    assert {s: len(list((out / f"random-{s}").glob("*.csa"))) for s in (5, 6)} == {5: 2, 6: 2}
    together = done.stdout.split("the 2 sets together:")[1]
    assert "4 games" in together and "random-5/ 2" in together and "random-6/ 2" in together


def _rung_folder(folder, options, seed, lost_all=False) -> None:
    """A ladder rung's folder: the games of _match_folder (or _lost_folder) and a match.json naming the opponent's
    options (which name the rung), the seed and the openings."""
    if lost_all:
        _lost_folder(folder)
    else:
        folder.parent.mkdir(parents=True, exist_ok=True)
        _match_folder(folder)
    card = {"opponent": {"name": "B", "options": options}, "seed": seed, "command": f"ladder {seed}",
            "openings": {"path": "o.sfen", "sha256": "0" * 64}}
    (folder / "match.json").write_text(json.dumps(card))


def test_the_ladder_summary_counts_each_rung_on_each_opening_set_and_on_both(tmp_path, capsys):
    """scripts/ship/ladder_summary.py, in a folder ladder.sh played in: each rung folder is named by the opponent its
    match.json played (the ladder's rung names), counted per opening set (random-*, records-*) and on both."""
    s15, s10, gps = {"Skill Level": "15", "Threads": "1"}, {"Skill Level": "10", "Threads": "1"}, {"Thread": "1"}
    _rung_folder(tmp_path / "random-s15" / "rung00", s15, 71)
    _rung_folder(tmp_path / "random-gps-s10" / "rung00", s10, 81)
    _rung_folder(tmp_path / "random-gps-s10" / "rung01", gps, 82, lost_all=True)
    _rung_folder(tmp_path / "records-s15" / "rung00", s15, 81)
    _rung_folder(tmp_path / "records-gps-s10" / "rung00", s10, 91, lost_all=True)
    summary = _ship_script("ladder_summary.py", ["--folder", str(tmp_path), "--ladder", "a test", "--machine", "here",
                                                 "--engine", "A"], capsys)
    assert (summary["ladder"], summary["machine"], summary["engine"]) == ("a test", "here", "A")
    wld = {key: {name: (r["wins"], r["losses"], r["draws"]) for name, r in summary[key].items()}
           for key in ("random", "records", "both")}
    assert wld == {  # a mixed folder: A won 2, lost 1, drew 1; a lost one: 0-2-0
        "random": {"fairy-stockfish Skill 15": (2, 1, 1), "fairy-stockfish Skill 10": (2, 1, 1),
                   "gpsshogi 0.7.0": (0, 2, 0)},
        "records": {"fairy-stockfish Skill 15": (2, 1, 1), "fairy-stockfish Skill 10": (0, 2, 0)},
        "both": {"fairy-stockfish Skill 15": (4, 2, 2), "fairy-stockfish Skill 10": (2, 3, 1),
                 "gpsshogi 0.7.0": (0, 2, 0)}}
    assert summary["random"]["gpsshogi 0.7.0"]["elo"] is None
    assert [p["seed"] for p in summary["both"]["fairy-stockfish Skill 15"]["parts"]] == [71, 81]
    assert summary["both"]["fairy-stockfish Skill 15"]["black"] == "2-0-2"  # A as black: two wins, two draws


def test_the_ladder_summary_counts_sets_named_on_its_command_line(tmp_path, capsys):
    """scripts/ship/ladder_summary.py --sets A B: one rung played on two sets of new openings (folders A-s15, B-s15),
    each set counted apart and the two together; a set with no rung folder is refused, naming the folder."""
    s15 = {"Skill Level": "15", "Threads": "1"}
    _rung_folder(tmp_path / "a-s15" / "rung00", s15, 601)
    _rung_folder(tmp_path / "b-s15" / "rung00", s15, 611, lost_all=True)
    args = ["--folder", str(tmp_path), "--ladder", "t", "--machine", "here", "--engine", "A", "--sets"]
    summary = _ship_script("ladder_summary.py", [*args, "a", "b"], capsys)
    wld = {key: {name: (r["wins"], r["losses"], r["draws"]) for name, r in summary[key].items()}
           for key in ("a", "b", "both")}
    assert wld == {"a": {"fairy-stockfish Skill 15": (2, 1, 1)}, "b": {"fairy-stockfish Skill 15": (0, 2, 0)},
                   "both": {"fairy-stockfish Skill 15": (2, 3, 1)}}
    assert "random" not in summary and "records" not in summary
    assert [p["seed"] for p in summary["both"]["fairy-stockfish Skill 15"]["parts"]] == [601, 611]
    with pytest.raises(SystemExit):
        _ship_script("ladder_summary.py", [*args, "a", "c"], capsys)
    assert f"{tmp_path}/c-*/" in capsys.readouterr().err


def test_match_report_counts_a_kept_summary_as_a_part(tmp_path, capsys):
    """A part whose records are gone counts from the summary kept of it (match-report --json): the same figures
    as its records gave, and its own parts listed."""
    from messiah.cli import main

    _match_folder(tmp_path / "a")
    _match_folder(tmp_path / "b")
    main(["match-report", str(tmp_path / "a"), "--json"])
    (tmp_path / "a.json").write_text(capsys.readouterr().out)
    shutil.rmtree(tmp_path / "a")  # the machine went back with the records
    text, summary = match_report(MatchReportConfig([str(tmp_path / "a.json"), str(tmp_path / "b")], sprt=(0.0, 50.0)))
    assert (summary["games"], summary["wins"], summary["losses"], summary["draws"]) == (8, 4, 2, 2)
    assert (summary["elo"], summary["elo_low"], summary["elo_high"]) == elo_interval(4, 2, 2)
    assert summary["pentanomial"] == [0, 2, 0, 0, 2] and summary["sprt"]["llr"] == sprt_llr([0, 2, 0, 0, 2], 0, 50)
    assert (summary["black"], summary["white"], summary["mean_plies"]) == ("2-0-2", "2-2-0", 4.5)
    assert summary["endings"] == {"%TORYO": 6, "%SENNICHITE": 2} and summary["forfeits"] == [0, 0]
    assert summary["parts"][0]["summary"] == str(tmp_path / "a.json")
    assert summary["parts"][0]["parts"][0]["folder"] == str(tmp_path / "a")
    assert text.startswith("A vs B: 8 games (") and "W-L-D 4-2-2" in text
    # a file that is not such a summary is refused by name
    (tmp_path / "other.json").write_text(json.dumps({"by_openings": {}}))
    with pytest.raises(DataError, match="other.json: not a `messiah match-report --json` summary"):
        match_report(MatchReportConfig([str(tmp_path / "other.json")]))
    (tmp_path / "cut.json").write_text('{"games": 4, "wins"')
    with pytest.raises(DataError, match="cut.json: not a match summary that can be read"):
        match_report(MatchReportConfig([str(tmp_path / "cut.json")]))


def test_match_report_refuses_what_is_not_a_finished_match(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no game records"):
        recorded_games(empty)
    _match_folder(tmp_path / "twice")
    _record(tmp_path / "twice" / "0001_A+B+9.csa", "A", "B", 3, "%TORYO")
    with pytest.raises(DataError, match="two records of game 1"):
        recorded_games(tmp_path / "twice")
    _match_folder(tmp_path / "cut")
    (tmp_path / "cut" / "0005_A+B+5.csa").write_text("V2\nN+A\nN-B\nPI\n+\n+7776FU\n")
    with pytest.raises(DataError, match="no end"):
        recorded_games(tmp_path / "cut")
    with pytest.raises(UserError, match="at least one match folder"):
        MatchReportConfig([])


def test_option_files_given_relative_reach_the_engines_as_absolute_paths(tmp_path, monkeypatch):
    """cshogi starts each engine in its own folder: a relative ModelPath named no file there, and the engine
    without its model resigned every game of a match that then read 2-0."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m3-int8.onnx").write_bytes(b"onnx")
    cfg = MatchConfig(opponent="x", options={"BookFile": "m3-int8.onnx", "Threads": "1"},
                      opponent_options={"ModelPath": "m3-int8.onnx", "Skill Level": "10", "BookFile": "no_book",
                                        "WriteDebugLog": "/tmp/absolute.log"})
    assert cfg.options == {"BookFile": str(tmp_path / "m3-int8.onnx"), "Threads": "1"}
    assert cfg.opponent_options == {"ModelPath": str(tmp_path / "m3-int8.onnx"), "Skill Level": "10",
                                    "BookFile": "no_book", "WriteDebugLog": "/tmp/absolute.log"}


def test_an_engine_that_reports_an_error_at_isready_is_refused_before_any_game(tmp_path, messiah_usi):
    """An engine without its model answers isready (after an error line) and resigns every game: the match would
    read as won. It is refused before the first game, with the engine's words; the same engine with its options
    right passes."""
    from messiah.arena.match import check_engines
    from messiah.errors import UserError

    missing = {"ModelPath": str(tmp_path / "no_such_model.onnx")}
    with pytest.raises(UserError, match=r"reported at isready: error: .*no_such_model\.onnx"):
        check_engines((messiah_usi, messiah_usi), ({}, missing))
    check_engines((messiah_usi, messiah_usi), ({}, {"Threads": "1"}))
