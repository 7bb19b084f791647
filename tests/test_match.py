"""`messiah match` and `messiah fit-winrate`: a real match against fairy-stockfish, the Elo arithmetic, and
the fit against the figures published with the teacher data."""

import json
import math
import os
import shutil
import subprocess
import sys

import pytest
from cshogi import CSA
from cshogi.elo import Elo

from messiah.fitwinrate import engine_coefficients, fit_files, samples_from_csa
from messiah.match import elo_interval, parse_options
from messiah.paths import SHARED_DATA
from messiah.winrate import TEACHER, WinRateScale

FAIRY = "/usr/games/fairy-stockfish"
TEACHER_DATA = SHARED_DATA / "teacher"


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


def test_options_parse_names_with_spaces_and_reject_garbage():
    assert parse_options(["Skill Level=-20", "Threads=1"]) == {"Skill Level": "-20", "Threads": "1"}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_options(["Threads"])


def test_fit_reproduces_the_published_teacher_scale():
    """../shared/data/README.md: teacher_s1 and s2 gave 1/a = 875, b = -0.08 by squared error and 872, -0.08
    by log-loss, from 160,802 positions."""
    out = fit_files([str(TEACHER_DATA / "teacher_s1.hcpe"), str(TEACHER_DATA / "teacher_s2.hcpe")])
    assert out["samples"] == 160_802
    assert out["mse"]["scale_cp"] == pytest.approx(875, abs=1) and out["mse"]["b"] == pytest.approx(-0.08, abs=0.005)
    assert out["logloss"]["scale_cp"] == pytest.approx(872, abs=1)


@pytest.mark.skipif(not os.path.exists(FAIRY) and not os.environ.get("CI"), reason="fairy-stockfish not installed")
def test_a_real_match_against_fairy_stockfish(tmp_path):
    """Two games (one opening, both colours) at a short byoyomi: no illegal move, no time loss, records
    written and readable, progress on stderr."""
    out = tmp_path / "match"
    cmd = [sys.executable, "-m", "messiah.cli", "match", "--opponent", FAIRY, "--opponent-option",
           "Skill Level=-20", "--games", "2", "--byoyomi", "300", "--draw", "200", "--out", str(out), "--json"]
    if shutil.which("messiah-usi") is None:
        pytest.skip("messiah-usi is not installed")
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
        assert len(game.moves) > 24 and game.endgame  # the opening and then real play, to an end
    assert "2/2" in done.stderr  # the progress bar


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


def test_engine_coefficients_print_the_fitted_win_rate_on_the_teacher_curve():
    """With the new options, a printed cp read on the teacher's curve is the win rate the fit gave for the cp
    the engine printed before, for any Q."""
    made_with = WinRateScale(1 / 875, -0.08)
    fit = (1 / 996, -0.071)
    new = WinRateScale.from_options(*engine_coefficients(fit, made_with))
    for q in (0.2, 0.45, 0.5, 0.62, 0.8):
        old_cp = made_with.to_cp(q)
        fitted = 1 / (1 + math.exp(-(fit[0] * old_cp + fit[1])))
        assert TEACHER.to_winrate(new.to_cp(q)) == pytest.approx(fitted, abs=0.002)
