"""`messiah annotate` on game records: a blunder found, KIF comments a parser reads back, the graph, errors."""

from __future__ import annotations

from datetime import datetime

import cshogi
import numpy as np
import pytest
from conftest import FORMATS, GAMES, read_hcpe
from cshogi import CSA, KIF

from messiah.cli import main
from messiah.evaluator import Evaluator
from messiah.tools.annotate import annotate_record, read_record, write_kif

# White does not take back the bishop that took its own on 2b (3a2b would): it loses a bishop and lets a
# horse sit in its camp. The recapture in the same opening is no mistake.
BLUNDER = ["7g7f", "3c3d", "8h2b+", "9c9d", "2b1a"]
RECAPTURE = ["7g7f", "3c3d", "8h2b+", "3a2b", "1g1f"]


def _write_csa(path, usi_moves: list[str], names=("sente", "gote")) -> str:
    board = cshogi.Board()
    exporter = CSA.Exporter(str(path))
    exporter.info(board, list(names))
    for usi in usi_moves:
        move = board.move_from_usi(usi)
        exporter.move(move)
        board.push(move)
    exporter.endgame("%TORYO")
    exporter.close()
    return str(path)


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1)


def test_a_blunder_is_a_mistake_and_a_recapture_is_not(tmp_path, evaluator):
    blunder = annotate_record(read_record(_write_csa(tmp_path / "b.csa", BLUNDER)), evaluator, nodes=400,
                              progress=False)
    recapture = annotate_record(read_record(_write_csa(tmp_path / "r.csa", RECAPTURE)), evaluator, nodes=400,
                                progress=False)
    assert blunder.notes[3].mistake and blunder.notes[3].loss > 0.1
    assert not recapture.notes[3].mistake
    # the blunder is the game's worst move (shallow searches swing between plies, so other moves of the
    # opening may lose a little too: the threshold is not what this checks)
    assert max(blunder.notes, key=lambda n: n.loss).ply == 4
    # The blunder drags white's win rate down; black's rises.
    black = blunder.black_winrates()
    assert black[4] - black[3] > 0.1
    rows = blunder.summary()
    assert rows[1]["mistakes"] >= 1 and rows[1]["player"] == "gote"
    assert rows[1]["mean_loss"] > rows[0]["mean_loss"]


def test_a_move_is_judged_at_the_movers_next_turn_even_when_the_engine_chose_it(tmp_path, evaluator):
    """A move's loss compares two searches with the same side to move (its turn and its next), so the swing
    of a short search between odd and even plies cancels; the engine's own choice is judged like any move
    (counting it as no loss hid most of messiah's own mistakes against fairy-stockfish, docs/annotate.md)."""
    analysis = annotate_record(read_record(_write_csa(tmp_path / "b.csa", BLUNDER)), evaluator, nodes=200,
                               progress=False)
    notes = analysis.notes
    for t, note in enumerate(notes[:-1]):
        later = notes[t + 2].winrate if t + 2 < len(notes) else analysis.final
        assert note.loss == pytest.approx(note.winrate - later)
    assert notes[-1].loss == pytest.approx(notes[-1].winrate - (1 - analysis.final))


def test_the_played_moves_q_and_rank(tmp_path, evaluator):
    analysis = annotate_record(read_record(_write_csa(tmp_path / "g.csa", RECAPTURE)), evaluator, nodes=100,
                               progress=False)
    board = cshogi.Board()
    for note, usi in zip(analysis.notes, RECAPTURE, strict=True):
        scores = evaluator.score(board)
        q = dict(zip(map(int, scores.moves), scores.q, strict=True))
        move = board.move_from_usi(usi)
        assert note.move == move and note.q == pytest.approx(q[move])
        assert note.legal == len(q) and note.rank == 1 + sorted(q.values(), reverse=True).index(q[move])
        board.push(move)


def test_kif_comments_read_back_with_cshogi(tmp_path, evaluator, capsys):
    csa = _write_csa(tmp_path / "b.csa", BLUNDER)
    main(["annotate", csa, "--nodes", "200", "--out", str(tmp_path / "b.kif"), "--png", str(tmp_path / "b.png"),
          "--quiet"])
    out = capsys.readouterr().out
    assert "sente" in out and "gote" in out and "agreement" in out
    kif = KIF.Parser.parse_file(str(tmp_path / "b.kif"))
    board = cshogi.Board()
    assert kif.moves == [board.push_usi(u) or board.peek() for u in BLUNDER]
    assert kif.names == ["sente", "gote"] and kif.endgame == "%TORYO"
    assert len(kif.comments) == len(BLUNDER)
    assert kif.comments[3].startswith("MISTAKE") and "rank" in kif.comments[3]
    assert sum(c.startswith("MISTAKE") for c in kif.comments) == 1
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_real_game_reads_the_same_as_csa_and_kif(tmp_path):
    length = int(np.fromfile(f"{GAMES}.games", "<u4")[0])
    records = read_hcpe(GAMES, length)  # the first game of the fixture's, whole
    board = cshogi.Board()
    board.set_hcp(records[0]["hcp"])
    start, moves = board.copy(), []
    for record in records:
        board.set_hcp(record["hcp"])
        moves.append(board.move_from_move16(record["bestMove16"]))
    csa = CSA.Exporter(str(tmp_path / "g.csa"))
    csa.info(start, ["a", "b"])
    kif = KIF.Exporter(str(tmp_path / "g.kifu"))
    kif.header(["a", "b"], handicap=None if start.sfen() == cshogi.STARTING_SFEN else start)
    for move in moves:
        csa.move(move)
        kif.move(move)
    csa.close()
    kif.close()
    # A UTF-8 KIF saved as .kif (Shift_JIS by the format) is read too.
    (tmp_path / "g.kif").write_bytes((tmp_path / "g.kifu").read_bytes())
    games = [read_record(tmp_path / name) for name in ("g.csa", "g.kifu", "g.kif")]
    # and the same game as the fixture's CSA and (Shift_JIS) KIF records, written by cshogi's exporters
    games += [read_record(FORMATS / name) for name in ("game.csa", "game.kif")]
    assert all(g.moves == moves and g.sfen == start.sfen() for g in games)


@pytest.mark.parametrize("content, name, message", [
    (None, "missing.csa", "no such file"),
    ("garbage\n", "bad.csa", "Invalid line 1"),
    ("V2.2\nPI\n+\n+7776FU\n-3334FU\n+7776FU\n", "illegal.csa", "move 3 is not a legal move"),
    ("nothing here\n", "empty.kif", "no moves"),
    ("V2.2\n", "game.txt", "expected a .kif"),
])
def test_bad_records_get_a_one_line_error(tmp_path, capsys, content, name, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as exit_:
        main(["annotate", str(path), "--nodes", "10", "--quiet"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("messiah annotate: ")


def test_the_annotated_kif_keeps_the_games_date(tmp_path, evaluator):
    """The KIF written is dated by the record's own start time (CSA's $START_TIME, KIF's 開始日時), where it had
    today's date."""
    assert read_record(FORMATS / "game.kif").start == datetime(2026, 1, 1)
    path = tmp_path / "dated.csa"
    path.write_text("V2.2\nN+a\nN-b\n$START_TIME:2024/05/06 07:08:09\nPI\n+\n+7776FU\n-3334FU\n%TORYO\n")
    record = read_record(path)
    assert record.start == datetime(2024, 5, 6, 7, 8, 9)
    write_kif(annotate_record(record, evaluator, nodes=10, progress=False), tmp_path / "dated.kif")
    assert KIF.Parser.parse_file(str(tmp_path / "dated.kif")).starttime == record.start
    path.write_text("V2.2\nPI\n+\n+7776FU\n-3334FU\n")
    assert read_record(path).start is None  # no date: the exporter's own (now)


def test_a_game_from_a_set_position(tmp_path, evaluator):
    sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2"
    exporter = CSA.Exporter(str(tmp_path / "s.csa"))
    exporter.info(cshogi.Board(sfen), ["x", "y"])
    board = cshogi.Board(sfen)
    for usi in ("3c3d", "2g2f"):
        exporter.move(board.move_from_usi(usi))
        board.push_usi(usi)
    exporter.close()
    record = read_record(tmp_path / "s.csa")
    assert record.sfen.split()[:3] == sfen.split()[:3]
    analysis = annotate_record(record, evaluator, nodes=50, progress=False)
    write_kif(analysis, tmp_path / "s.kif")
    # The KIF starts from a board diagram with white to move and the pawn on 7f (GUIs read it; cshogi's
    # KIF reader does not, and says so).
    text = (tmp_path / "s.kif").read_text(encoding="cp932")
    assert "後手番" in text and "| ・ ・ 歩 ・ ・ ・ ・ ・ ・|六" in text and text.count("\n*messiah: ") == 2
    with pytest.raises(ValueError, match="board diagram"):
        read_record(tmp_path / "s.kif")


def test_annotate_png_without_matplotlib_fails_before_the_analysis(monkeypatch, tmp_path, capsys):
    """A missing plot extra is found before the game is analysed (a minute and more), not after."""
    import builtins

    import messiah.tools.annotate

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.split(".")[0] == "matplotlib":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    def no_analysis(*args, **kwargs):
        raise AssertionError("analysed, then failed on the graph")

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    monkeypatch.setattr(messiah.tools.annotate, "annotate_record", no_analysis)
    csa = _write_csa(tmp_path / "b.csa", BLUNDER)
    with pytest.raises(SystemExit) as exit_:
        main(["annotate", csa, "--nodes", "200", "--png", str(tmp_path / "b.png"), "--quiet"])
    assert exit_.value.code == 2 and "messiah[plot]" in capsys.readouterr().err
