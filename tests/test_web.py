"""The play server's requests through Flask's test client: moves, refusals, new games, promotion, drops."""

from __future__ import annotations

import re

import cshogi
import pytest

from messiah.evaluator import Evaluator
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
