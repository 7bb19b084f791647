"""`messiah play --web`: play messiah in a browser, on cshogi's SVG board.

cshogi's own Flask board (``cshogi.web``) replays games and runs engine matches, but it has no way to
choose a side or a time per game, show the engine's win rate or a move-score picture, or refuse an illegal
click with a message, so this is a small Flask app of its own. The browser only reports clicks: which
square (each square of the SVG carries ``data-square``, cshogi's square number) or which piece in hand.
Every rule is cshogi's, on the server: the legal destinations of a piece, whether a move is legal, whether
it may or must promote, mate, repetition. The person's move and messiah's reply are two requests, so the
page shows the move at once; the game lives on the server, so a closed tab loses nothing (reopen the page:
it asks for messiah's move if one is due), and each game has an id so that a request from a replaced game
is refused, not applied.
"""

from __future__ import annotations

import socket
import threading
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

import cshogi
from cshogi import KIF

from messiah.config import at_least, within
from messiah.engine.engine import Engine, EngineChoice, overrides
from messiah.errors import UserError
from messiah.evaluator import Evaluator
from messiah.tools.analyze import analysis
from messiah.tools.picture import CELL, SVG_NS, board_svg, square_centre

MARKS = ("☗", "☖")
HAND_LETTERS = "PLNSGBR"  # cshogi's hand piece order
HAND_KANJI = "歩香桂銀金角飛"
BOARD_SCALE = 2.6
MOVETIMES = (300, 1000, 3000, 10000)  # ms the page offers


@dataclass
class PlayConfig(EngineChoice):
    """``messiah play``: a game against messiah on a board in the browser."""

    web: bool = False
    """serve the board as a web page (the only board so far; a GUI can run messiah-usi)"""
    host: str = "127.0.0.1"
    """address to listen on (0.0.0.0 opens it to the network)"""
    port: int = 8000
    """port to listen on"""
    movetime: int = 1000
    """messiah's milliseconds per move (the page can change it)"""

    def __post_init__(self) -> None:
        within(self, 1, 65535, "port")
        at_least(self, 1, "movetime", "threads")


class PlayError(ValueError):
    """A request the game cannot take: an illegal move, a finished game, a malformed field. ``status`` is
    the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass
class Game:
    id: int
    human: int  # the colour the person plays
    movetime: int  # ms per engine move
    board: cshogi.Board = field(default_factory=cshogi.Board)
    result: str | None = None  # how it ended, once it has
    engine: dict = field(default_factory=dict)  # the engine's last search: win rate, PV


def clickable_board(board: cshogi.Board, flip: bool) -> str:
    """cshogi's SVG of ``board`` (the last move marked) with a transparent rect carrying ``data-square``
    over every square, for the page to report clicks and mark squares on."""
    root = board_svg(board, flip, board.peek() or None)
    root.set("width", str(float(root.get("width")) * BOARD_SCALE))
    root.set("height", str(float(root.get("height")) * BOARD_SCALE))
    layer = ET.SubElement(root, f"{{{SVG_NS}}}g", {"class": "squares"})
    for square in range(81):
        x, y = square_centre(square, flip)
        ET.SubElement(layer, f"{{{SVG_NS}}}rect", {
            "x": f"{x - CELL / 2:.1f}", "y": f"{y - CELL / 2:.1f}", "width": str(CELL), "height": str(CELL),
            "data-square": str(square), "data-name": cshogi.SQUARE_NAMES[square], "class": "square"})
    return ET.tostring(root, encoding="unicode")


def _int(value: object, name: str, low: int, high: int) -> int:
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise PlayError(f"{name} must be a whole number, got {value!r}") from None
    if not low <= number <= high:
        raise PlayError(f"{name} must be between {low} and {high}, got {number}")
    return number


class PlayServer:
    """The game and the engine behind the page; one lock serialises requests (the searcher is not shared).

    The engine is the USI engine's with ``options`` (USI option name -> value, as setoption takes it; ``search``
    stands for Search, and ``options`` win over it), on ``evaluator`` or, when None, on the model the options
    name (ModelPath, Threads)."""

    def __init__(self, evaluator: Evaluator | None = None, search: str | None = None, movetime: int = 1000,
                 nodes: int | None = None, options: Mapping[str, str] | None = None):
        self.engine = Engine.from_options(overrides(options, Search=search), evaluator)
        self.nodes = nodes  # a node budget instead of the time (tests)
        self.lock = threading.Lock()
        self.game = Game(1, cshogi.BLACK, movetime)

    # -- requests ------------------------------------------------------------------------------------------

    def new_game(self, side: object, movetime: object) -> dict:
        """Start a new game: ``side`` 'black' or 'white' (the person's), ``movetime`` ms per engine move."""
        if side not in ("black", "white"):
            raise PlayError(f"side must be 'black' or 'white', got {side!r}")
        movetime = _int(movetime, "movetime", 50, 600_000)
        with self.lock:
            self.game = Game(self.game.id + 1, cshogi.BLACK if side == "black" else cshogi.WHITE, movetime)
            self.engine.searcher.new_game()
            return self.state()

    def targets(self, game_id: object, source: object = None, drop: object = None) -> list[int]:
        """The squares the person's piece on ``source`` (or the piece ``drop`` in hand) can move to."""
        with self.lock:
            self._check(game_id)
            board = self.game.board
            if drop is not None:
                piece = self._hand_piece(drop)
                moves = [m for m in board.legal_moves
                         if cshogi.move_is_drop(m) and cshogi.move_drop_hand_piece(m) == piece]
                if not moves:
                    held = board.pieces_in_hand[board.turn][piece]
                    raise PlayError(f"no legal drop of {HAND_KANJI[piece]}" if held else
                                    f"you have no {HAND_KANJI[piece]} to drop")
            else:
                square = _int(source, "from", 0, 80)
                moves = [m for m in board.legal_moves if not cshogi.move_is_drop(m) and cshogi.move_from(m) == square]
                if not moves:
                    piece = board.piece(square)
                    own = piece != cshogi.NONE and (piece < cshogi.WPAWN) == (board.turn == cshogi.BLACK)
                    raise PlayError(f"{cshogi.SQUARE_NAMES[square]}: "
                                    + ("that piece has no legal move" if own else "not one of your pieces"))
            return sorted({cshogi.move_to(m) for m in moves})

    def play(self, game_id: object, source: object, destination: object, drop: object = None,
             promote: object = None) -> dict:
        """The person's move (from ``source``, or ``drop`` from hand, to ``destination``). Answers
        ``{"ask": "promote"}`` when the move may promote or not and ``promote`` is unset."""
        with self.lock:
            self._check(game_id)
            board = self.game.board
            to = _int(destination, "to", 0, 80)
            if drop is not None:
                piece = self._hand_piece(drop)
                moves = [m for m in board.legal_moves if cshogi.move_is_drop(m)
                         and cshogi.move_drop_hand_piece(m) == piece and cshogi.move_to(m) == to]
                name = f"{HAND_LETTERS[piece]}*{cshogi.SQUARE_NAMES[to]}"
            else:
                source = _int(source, "from", 0, 80)
                moves = [m for m in board.legal_moves if not cshogi.move_is_drop(m)
                         and cshogi.move_from(m) == source and cshogi.move_to(m) == to]
                name = cshogi.SQUARE_NAMES[source] + cshogi.SQUARE_NAMES[to]
            if not moves:
                raise PlayError(f"illegal move: {name}")
            if len(moves) > 1:  # the same squares with and without promotion
                if promote is None:
                    return {"ask": "promote", "move": name}
                moves = [m for m in moves if bool(cshogi.move_is_promotion(m)) == bool(promote)]
            self._push(moves[0])
            return self.state()

    def reply(self, game_id: object) -> dict:
        """messiah's move when it is messiah's turn (the page asks for it whenever it shows that turn, so
        a tab closed while messiah was to move loses nothing); otherwise the game as it is."""
        with self.lock:
            self._check(game_id, playing=False)
            game = self.game
            if game.result is None and game.board.turn != game.human:
                self._engine_move()
            return self.state()

    def resign(self, game_id: object) -> dict:
        with self.lock:
            self._check(game_id, your_turn=False)
            self.game.result = "you resigned: messiah wins"
            return self.state()

    def scores(self, game_id: object) -> str:
        """The move-score picture of the current position, searched within the engine's limits."""
        with self.lock:
            self._check(game_id, playing=False)
            game = self.game
            picture = analysis(self.engine, game.board, **self._limits()).picture(flip=game.human == cshogi.WHITE)
            picture.scale = BOARD_SCALE
            return picture.to_svg()

    def state(self) -> dict:
        """Everything the page shows."""
        game, board = self.game, self.game.board
        moves, replay = [], cshogi.Board(cshogi.STARTING_SFEN)
        for number, move in enumerate(board.history, 1):
            moves.append(f"{number} {MARKS[replay.turn]}{KIF.move_to_kif(move, replay.peek())}")
            replay.push(move)
        hand = board.pieces_in_hand[game.human]
        return {
            "game": game.id,
            "sfen": board.sfen(),
            "human": "black" if game.human == cshogi.BLACK else "white",
            "your_turn": game.result is None and board.turn == game.human,
            "movetime": game.movetime,
            "svg": clickable_board(board, game.human == cshogi.WHITE),
            "moves": moves,
            "hand": [{"piece": HAND_LETTERS[i], "kanji": HAND_KANJI[i], "count": n} for i, n in enumerate(hand) if n],
            "engine": game.engine,
            "result": game.result,
        }

    # -- the game ------------------------------------------------------------------------------------------

    def _check(self, game_id: object, playing: bool = True, your_turn: bool = True) -> None:
        """Refuse a request from a replaced game, one that needs the game going (``playing``) once it is
        over, and one that needs the person to move (``your_turn``) on messiah's turn."""
        if _int(game_id, "game", 0, 1 << 62) != self.game.id:
            raise PlayError("that game was replaced by a new one: the page shows the current game now", 409)
        if playing and self.game.result is not None:
            raise PlayError(f"the game is over ({self.game.result}): start a new one")
        if playing and your_turn and self.game.board.turn != self.game.human:
            raise PlayError("it is messiah's turn")

    def _hand_piece(self, drop: object) -> int:
        if not isinstance(drop, str) or len(drop) != 1 or drop not in HAND_LETTERS:
            raise PlayError(f"drop must be one of {', '.join(HAND_LETTERS)}, got {drop!r}")
        return HAND_LETTERS.index(drop)

    def _limits(self) -> dict:
        return {"nodes": self.nodes} if self.nodes else {"movetime": self.game.movetime}

    def _engine_move(self) -> None:
        board = self.game.board
        if board.is_nyugyoku():
            self.game.result = "messiah declares an entering-king win"
            return
        result = self.engine.search(board, **self._limits())
        pv, replay = [], board.copy()
        for move in result.pv:
            pv.append(MARKS[replay.turn] + KIF.move_to_kif(move, replay.peek()))
            replay.push(move)
        self.game.engine = {"winrate": round(result.winrate, 4), "mate": result.mate, "pv": " ".join(pv),
                            "depth": result.depth, "nodes": result.nodes}
        self._push(result.bestmove)

    def _push(self, move: int) -> None:
        """Play ``move`` and see whether the game has ended (mate, or the fourth time the same position)."""
        board, game = self.game.board, self.game
        mover = board.turn
        board.push(move)
        who = "you" if mover == game.human else "messiah"
        if board.is_game_over():
            game.result = f"checkmate: {'you win' if who == 'you' else 'messiah wins'}"
            return
        replay, seen = cshogi.Board(cshogi.STARTING_SFEN), {}
        for played in board.history:
            replay.push(played)
            seen[replay.zobrist_hash()] = seen.get(replay.zobrist_hash(), 0) + 1
        if seen[board.zobrist_hash()] >= 4:
            repetition = board.is_draw()
            if repetition == cshogi.REPETITION_LOSE:  # the side to move has been giving perpetual check
                game.result = f"perpetual check by {'messiah: you win' if who == 'you' else 'you: messiah wins'}"
            elif repetition == cshogi.REPETITION_WIN:
                game.result = f"perpetual check by {'you: messiah wins' if who == 'you' else 'messiah: you win'}"
            else:
                game.result = "fourfold repetition: a draw"


def create_app(server: PlayServer):
    """The Flask app of the page and its JSON requests."""
    from flask import Flask, Response, jsonify, request

    app = Flask("messiah.tools.web")
    page = (resources.files("messiah") / "data" / "play.html").read_text(encoding="utf-8")

    @app.errorhandler(PlayError)
    def refused(error: PlayError):
        with server.lock:
            return jsonify({"error": str(error), "state": server.state()}), error.status

    def body() -> dict:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise PlayError("expected a JSON object")
        return data

    @app.get("/")
    def index():
        options = "".join(f'<option value="{t}"{" selected" if t == server.game.movetime else ""}>{t / 1000:g} s'
                          "</option>" for t in sorted({*MOVETIMES, server.game.movetime}))
        return Response(page.replace("<!--MOVETIMES-->", options), mimetype="text/html")

    @app.get("/state")
    def state():
        with server.lock:
            return jsonify(server.state())

    @app.post("/new")
    def new():
        data = body()
        return jsonify(server.new_game(data.get("side"), data.get("movetime")))

    @app.post("/targets")
    def targets():
        data = body()
        return jsonify({"targets": server.targets(data.get("game"), data.get("from"), data.get("drop"))})

    @app.post("/move")
    def move():
        data = body()
        return jsonify(server.play(data.get("game"), data.get("from"), data.get("to"), data.get("drop"),
                                   data.get("promote")))

    @app.post("/reply")
    def reply():
        return jsonify(server.reply(body().get("game")))

    @app.post("/resign")
    def resign():
        return jsonify(server.resign(body().get("game")))

    @app.post("/scores")
    def scores():
        return jsonify({"svg": server.scores(body().get("game"))})

    return app


def serve(host: str = "127.0.0.1", port: int = 8000, movetime: int = 1000, model: str | None = None,
          search: str | None = None, threads: int | None = None, options: Mapping[str, str] | None = None) -> None:
    """Serve the page until interrupted, messiah playing the engine of ``options`` (``model``, ``search`` and
    ``threads`` stand for ModelPath, Search and Threads; ``options`` win over them)."""
    try:
        from werkzeug.serving import make_server
    except ImportError:
        raise UserError("the web page needs Flask: pip install 'messiah[web]'") from None

    # werkzeug exits with two lines of its own when the port is taken: try it first, as it will bind.
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as e:
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    app = create_app(PlayServer(None, movetime=movetime,
                                options=overrides(options, Search=search, ModelPath=model, Threads=threads)))
    http = make_server(host, port, app, threaded=True)
    print(f"messiah: open http://{host}:{http.port}/ in a browser (Ctrl-C stops)", flush=True)
    try:
        http.serve_forever()
    except KeyboardInterrupt:
        pass
