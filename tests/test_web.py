"""The play server's requests through Flask's test client: moves, refusals, new games, promotion, drops, the
win-rate history, the KIF and CSA records (read back with cshogi's parsers) and the annotation."""

from __future__ import annotations

import re

import cshogi
import pytest
from cshogi import CSA, KIF

from messiah.evaluator import Evaluator
from messiah.tools import web
from messiah.tools.annotate import GameAnalysis, MoveNote
from messiah.tools.web import PlayServer, create_app


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1)


@pytest.fixture
def client(evaluator):
    server = PlayServer(evaluator, nodes=100)
    return create_app(server).test_client(), server


def _squares(usi: str) -> tuple[int, int]:
    return cshogi.SQUARE_NAMES.index(usi[:2]), cshogi.SQUARE_NAMES.index(usi[2:4])


def test_a_move_gets_a_legal_reply(client):
    app, _ = client
    state = app.get("/state").get_json()
    source, to = _squares("7g7f")
    played = app.post("/move", json={"game": state["game"], "from": source, "to": to}).get_json()
    assert len(played["moves"]) == 1 and not played["your_turn"]  # shown at once, before the reply
    after = app.post("/reply", json={"game": state["game"]}).get_json()
    board = cshogi.Board()
    board.push_usi("7g7f")
    assert len(after["moves"]) == 2 and after["your_turn"]
    # Asking again changes nothing: it is the person's turn.
    assert app.post("/reply", json={"game": state["game"]}).get_json()["sfen"] == after["sfen"]
    reply = [m for m in board.legal_moves if _sfen_after(board, m) == after["sfen"]]
    assert len(reply) == 1
    assert 0.0 <= after["engine"]["winrate"] <= 1.0 and after["engine"]["pv"]


def _sfen_after(board: cshogi.Board, move: int) -> str:
    board.push(move)
    sfen = board.sfen()
    board.pop()
    return sfen


def test_illegal_moves_and_bad_fields_are_refused_with_a_message(client):
    app, _ = client
    game = app.get("/state").get_json()["game"]
    source, to = _squares("7g7e")
    answer = app.post("/move", json={"game": game, "from": source, "to": to})
    assert answer.status_code == 400 and answer.get_json()["error"] == "illegal move: 7g7e"
    assert answer.get_json()["state"]["moves"] == []
    answer = app.post("/targets", json={"game": game, "from": cshogi.SQUARE_NAMES.index("3c")})
    assert answer.status_code == 400 and "not one of your pieces" in answer.get_json()["error"]
    for body in ({"game": game, "from": "x", "to": 3}, {"game": game, "from": 3, "to": 81}, [1, 2]):
        answer = app.post("/move", json=body)
        assert answer.status_code == 400 and answer.get_json()["error"]
    assert app.post("/move", data="not json").status_code == 400
    answer = app.post("/new", json={"side": "purple", "movetime": 100})
    assert answer.status_code == 400 and "side" in answer.get_json()["error"]


def test_targets_are_the_legal_destinations(client):
    app, _ = client
    game = app.get("/state").get_json()["game"]
    board = cshogi.Board()
    silver = cshogi.SQUARE_NAMES.index("7i")
    targets = app.post("/targets", json={"game": game, "from": silver}).get_json()["targets"]
    assert targets == sorted(cshogi.move_to(m) for m in board.legal_moves if cshogi.move_from(m) == silver)
    assert app.post("/targets", json={"game": game, "drop": "P"}).status_code == 400  # nothing in hand


def test_a_new_game_replaces_the_old_one_and_white_lets_messiah_open(client):
    app, _ = client
    old = app.get("/state").get_json()["game"]
    state = app.post("/new", json={"side": "white", "movetime": 200}).get_json()
    assert state["game"] != old and state["human"] == "white" and state["movetime"] == 200
    assert state["moves"] == [] and not state["your_turn"]
    state = app.post("/reply", json={"game": state["game"]}).get_json()
    assert len(state["moves"]) == 1 and cshogi.Board(state["sfen"]).turn == cshogi.WHITE and state["your_turn"]
    # White's board is turned: the square 1a (white's own corner) is clicked at the bottom left.
    corners = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)"[^>]*data-square="(?:0|80)"', state["svg"])
    (x1a, y1a), (x9i, y9i) = ((float(x), float(y)) for x, y in corners)
    assert x1a < x9i and y1a > y9i
    source, to = _squares("3c3d")
    stale = app.post("/move", json={"game": old, "from": source, "to": to})
    assert stale.status_code == 409 and stale.get_json()["state"]["game"] == state["game"]
    assert app.get("/state").get_json()["moves"] == state["moves"]  # the refused request changed nothing


def test_promotion_is_asked_and_a_finished_game_refuses_moves(client):
    app, server = client
    game = app.get("/state").get_json()["game"]
    # Black's bishop may take on 2b promoted or not (the position after 7g7f 3c3d).
    for usi in ("7g7f", "3c3d"):
        server.game.board.push_usi(usi)
    source, to = _squares("8h2b")
    assert app.post("/move", json={"game": game, "from": source, "to": to}).get_json()["ask"] == "promote"
    state = app.post("/move", json={"game": game, "from": source, "to": to, "promote": True}).get_json()
    assert state["moves"][2].endswith("２二角成(88)")
    assert app.post("/resign", json={"game": game}).get_json()["result"].startswith("you resigned")
    board = cshogi.Board(state["sfen"])
    move = next(iter(board.legal_moves))
    answer = app.post("/move", json={"game": game, "from": cshogi.move_from(move), "to": cshogi.move_to(move)})
    assert answer.status_code == 400 and "the game is over" in answer.get_json()["error"]


def test_a_drop_and_a_mate_end_the_game(client):
    app, server = client
    game = app.get("/state").get_json()["game"]
    # Black to move with a gold in hand mates at 5b (head-of-king gold, protected by the pawn on 5c).
    server.game.board.set_sfen("4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    targets = app.post("/targets", json={"game": game, "drop": "G"}).get_json()["targets"]
    assert cshogi.SQUARE_NAMES.index("5b") in targets
    state = app.post("/move", json={"game": game, "drop": "G", "to": cshogi.SQUARE_NAMES.index("5b")}).get_json()
    assert state["result"] == "checkmate: you win" and not state["your_turn"]


def test_the_score_picture_of_the_current_position(client):
    app, _ = client
    game = app.get("/state").get_json()["game"]
    svg = app.post("/scores", json={"game": game}).get_json()["svg"]
    assert svg.startswith("<svg") and svg.count("<title>") > 30  # one per move of the 30, and the best move's


@pytest.mark.parametrize("cycles, result", [(2, None), (3, "fourfold repetition: a draw")])
def test_the_fourth_repetition_is_a_draw(client, cycles, result):
    app, server = client
    game = app.get("/state").get_json()["game"]
    # Both kings step out and back; black's next 5i5h repeats a position for the (cycles + 1)th time.
    for usi in ["5i5h", "5a5b", "5h5i", "5b5a"] * cycles:
        server.game.board.push_usi(usi)
    source, to = _squares("5i5h")
    state = app.post("/move", json={"game": game, "from": source, "to": to}).get_json()
    assert state["result"] == result
    state = app.post("/reply", json={"game": game}).get_json()
    assert len(state["moves"]) == 4 * cycles + (1 if result else 2)  # a game still going gets a reply


def _play(app, game: int, usi: str) -> dict:
    """The person's ``usi`` move and messiah's reply."""
    source, to = _squares(usi)
    app.post("/move", json={"game": game, "from": source, "to": to})
    return app.post("/reply", json={"game": game}).get_json()


@pytest.mark.parametrize("side", ["black", "white"])
def test_the_win_rate_history_is_blacks_at_each_of_messiahs_moves(client, side):
    app, _ = client
    state = app.post("/new", json={"side": side, "movetime": 200}).get_json()
    game, expected = state["game"], []
    assert state["winrates"] == [] and 'class="point"' not in state["graph"]
    if side == "white":
        state = app.post("/reply", json={"game": game}).get_json()
        expected.append([1, state["engine"]["winrate"]])  # messiah is black: its win rate is black's
    for usi in ("7g7f", "2g2f") if side == "black" else ("3c3d", "8c8d"):
        state = _play(app, game, usi)
        messiah = state["engine"]["winrate"]
        expected.append([len(state["moves"]), messiah if side == "white" else 1 - messiah])
    assert [ply for ply, _ in state["winrates"]] == [ply for ply, _ in expected]
    assert [black for _, black in state["winrates"]] == pytest.approx([b for _, b in expected], abs=1e-4)
    plies = [int(p) for p in re.findall(r'class="point" data-ply="(\d+)"', state["graph"])]
    assert plies == [ply for ply, _ in expected]


def _records(app, game: int) -> tuple[CSA.Parser, KIF.Parser]:
    csa = app.get(f"/record.csa?game={game}")
    kif = app.get(f"/record.kif?game={game}")
    assert csa.status_code == kif.status_code == 200
    assert kif.headers["Content-Disposition"].endswith('.kif"') and "shift_jis" in kif.headers["Content-Type"]
    return CSA.Parser.parse_str(csa.data.decode("utf-8"))[0], KIF.Parser.parse_str(kif.data.decode("cp932"))


def test_the_records_carry_the_names_the_moves_and_the_result(client):
    app, _ = client
    game = app.post("/new", json={"side": "black", "movetime": 200}).get_json()["game"]
    for usi in ("7g7f", "2g2f"):
        state = _play(app, game, usi)
    for record in _records(app, game):  # a game still going: its moves, no result
        assert record.names == ["you", "messiah"] and not record.endgame
        board = cshogi.Board(record.sfen)
        for move in record.moves:
            board.push(move)
        assert board.sfen() == state["sfen"]
        assert [cshogi.move_to_usi(m) for m in record.moves[::2]] == ["7g7f", "2g2f"]
    app.post("/resign", json={"game": game})
    for record in _records(app, game):
        assert record.endgame == "%TORYO" and record.win == cshogi.WHITE_WIN and len(record.moves) == 4
    stale = app.get(f"/record.csa?game={game + 1}")
    assert stale.status_code == 409 and "replaced" in stale.get_json()["error"]


def test_a_mate_and_a_perpetual_check_end_the_records_with_the_winner(client):
    app, server = client
    game = app.get("/state").get_json()["game"]
    start = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"  # black drops the gold on 5b and mates
    server.game.board.set_sfen(start)
    app.post("/move", json={"game": game, "drop": "G", "to": cshogi.SQUARE_NAMES.index("5b")})
    csa = CSA.Parser.parse_str(app.get(f"/record.csa?game={game}").data.decode())[0]
    assert csa.sfen == start and csa.endgame == "%TORYO" and csa.win == cshogi.BLACK_WIN
    assert [cshogi.move_to_usi(m) for m in csa.moves] == ["G*5b"]

    # Black's rook checks the king in the corner from 8e and 9e in turn: the fourth time is black's loss.
    game = app.post("/new", json={"side": "black", "movetime": 200}).get_json()["game"]
    server.game.board.set_sfen("k8/9/9/9/1R7/9/9/9/4K4 b - 1")
    for usi in ["8e9e", "9a8a", "9e8e", "8a9a"] * 3:
        server.game.board.push_usi(usi)
    state = _play(app, game, "8e9e")
    assert state["result"] == "perpetual check by you: messiah wins" and len(state["moves"]) == 13
    csa = CSA.Parser.parse_str(app.get(f"/record.csa?game={game}").data.decode())[0]
    kif = KIF.Parser.parse_str(app.get(f"/record.kif?game={game}").data.decode("cp932"))  # its start aside
    assert csa.win == kif.win == cshogi.WHITE_WIN and len(csa.moves) == 13


def test_a_fourfold_repetition_ends_the_records_as_a_draw(client):
    app, server = client
    game = app.get("/state").get_json()["game"]
    for usi in ["5i5h", "5a5b", "5h5i", "5b5a"] * 3:
        server.game.board.push_usi(usi)
    assert _play(app, game, "5i5h")["result"] == "fourfold repetition: a draw"
    for record in _records(app, game):
        assert record.endgame == "%SENNICHITE" and record.win == cshogi.DRAW and len(record.moves) == 13


def test_annotate_refuses_a_game_still_going_and_annotates_a_finished_one(client):
    app, _ = client
    game = app.get("/state").get_json()["game"]
    _play(app, game, "7g7f")
    refused = app.post("/annotate", json={"game": game})
    assert refused.status_code == 409 and "still going" in refused.get_json()["error"]
    app.post("/resign", json={"game": game})
    state = app.post("/annotate", json={"game": game}).get_json()
    annotation = state["annotation"]
    assert annotation["budget"] == "100 nodes per position"
    assert [(r["side"], r["player"], r["moves"]) for r in annotation["summary"]] == [("black", "you", 1),
                                                                                     ("white", "messiah", 1)]
    assert all(m["loss"] > annotation["threshold"] for m in annotation["mistakes"])
    # A point for each position, the start and the end included.
    assert re.findall(r'class="point" data-ply="(\d+)"', annotation["graph"]) == ["0", "1", "2"]
    assert app.get("/state").get_json()["annotation"] == annotation  # a reopened page shows it


def test_the_annotation_lists_the_mistakes_and_rings_them_on_the_graph(client, monkeypatch):
    app, server = client
    game = app.get("/state").get_json()["game"]
    _play(app, game, "7g7f")
    reply = cshogi.move_to_usi(server.game.board.history[-1])
    app.post("/resign", json={"game": game})
    calls = []

    def annotated(record, evaluator, **limits):  # black's first move a mistake, by these made-up numbers
        calls.append((record, limits))
        board = cshogi.Board()
        first = MoveNote(1, cshogi.BLACK, board.move_from_usi("7g7f"), 0.5, board.move_from_usi("2g2f"), [], 0.4, 3,
                         30, loss=0.2, mistake=True)
        board.push_usi("7g7f")
        second = MoveNote(2, cshogi.WHITE, board.move_from_usi(reply), 0.7, board.move_from_usi(reply), [], 0.7, 1, 30)
        return GameAnalysis(record, [first, second], 0.3, 0.1, cshogi.BLACK)

    monkeypatch.setattr(web, "annotate_record", annotated)
    annotation = app.post("/annotate", json={"game": game}).get_json()["annotation"]
    (record, limits), = calls
    assert record.names == ["you", "messiah"] and record.endgame == "%TORYO" and limits["nodes"] == 100
    assert [cshogi.move_to_usi(m) for m in record.moves] == ["7g7f", reply]
    assert annotation["mistakes"] == [{"ply": 1, "player": "you", "move": "☗７六歩(77)", "best": "☗２六歩(27)",
                                       "loss": 0.2}]
    assert [(r["moves"], r["mistakes"]) for r in annotation["summary"]] == [(1, 1), (1, 0)]
    ring = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"[^>]*class="mistake"', annotation["graph"])
    dot = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"[^>]*class="point" data-ply="1"', annotation["graph"])
    assert len(ring) == 1 and ring == dot  # on the curve where black's mistake left it


def test_annotate_takes_a_time_per_position_without_a_node_budget(evaluator):
    app = create_app(PlayServer(evaluator)).test_client()
    game = app.get("/state").get_json()["game"]
    app.post("/resign", json={"game": game})
    answer = app.post("/annotate", json={"game": game})
    assert answer.status_code == 400 and "no moves" in answer.get_json()["error"]
    state = app.post("/new", json={"side": "white", "movetime": 100}).get_json()
    app.post("/reply", json={"game": state["game"]})
    app.post("/resign", json={"game": state["game"]})
    answer = app.post("/annotate", json={"game": state["game"], "movetime": "soon"})
    assert answer.status_code == 400 and "movetime" in answer.get_json()["error"]
    state = app.post("/annotate", json={"game": state["game"], "movetime": 20}).get_json()
    assert state["annotation"]["budget"] == "0.02 s per position"
    assert [r["moves"] for r in state["annotation"]["summary"]] == [1, 0]


def test_every_error_is_a_json_message(client, monkeypatch):
    app, _ = client
    game = app.get("/state").get_json()["game"]
    for path, status in ((f"/record.pgn?game={game}", 404), ("/record.kif", 400), ("/nowhere", 404)):
        answer = app.get(path)
        assert answer.status_code == status and answer.get_json()["error"]
    assert app.get("/annotate").status_code == 405 and app.get("/annotate").get_json()["error"]

    def broken(*args, **kwargs):
        raise RuntimeError("the evaluator is gone")

    monkeypatch.setattr(web, "annotate_record", broken)
    _play(app, game, "7g7f")
    app.post("/resign", json={"game": game})
    answer = app.post("/annotate", json={"game": game})
    assert answer.status_code == 500 and "the evaluator is gone" in answer.get_json()["error"]
    assert app.get("/state").get_json()["annotation"] is None


def test_the_page_plays_the_engines_book_and_resigns_by_its_resign_value(evaluator, tmp_path):
    """One engine everywhere: the web page's engine opens from the BookFile as the USI engine would (the book's
    only move, at once, its value as the win rate), and resigns a lost position at ResignValue."""
    book = tmp_path / "book.db"
    book.write_text("#YANEURAOU-DB2016 1.00\nsfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1\n"
                    "5g5f none 120 20 1\n")
    server = PlayServer(evaluator, nodes=100, options={"BookFile": str(book), "BookEvalBlackLimit": "-1000"})
    app = create_app(server).test_client()
    state = app.post("/new", json={"side": "white", "movetime": 200}).get_json()
    state = app.post("/reply", json={"game": state["game"]}).get_json()
    assert state["moves"] == ["1 ☗５六歩(57)"] and state["engine"]["pv"] == "book: 5g5f"
    assert state["engine"]["winrate"] == pytest.approx(server.engine.scale.to_winrate(120), abs=1e-4)
    server = PlayServer(evaluator, nodes=100, options={"ResignValue": "1000"})
    server.game.board.set_sfen("4k4/9/9/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 2")  # messiah, white: a bare king
    app = create_app(server).test_client()
    state = app.post("/reply", json={"game": server.game.id}).get_json()
    assert state["result"] == "messiah resigns: you win"
