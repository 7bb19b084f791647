"""`messiah play --web`: play messiah in a browser, on cshogi's SVG board.

cshogi's own Flask board (``cshogi.web``) replays games and runs engine matches, but it has no way to
choose a side or a time per game, show the engine's win rate or a move-score picture, or refuse an illegal
click with a message, so this is a small Flask app of its own. The browser only reports clicks: which
square (each square of the SVG carries ``data-square``, cshogi's square number) or which piece in hand.
Every rule is cshogi's, on the server: the legal destinations of a piece, whether a move is legal, whether
it may or must promote, mate, repetition. The person's move and messiah's reply are two requests, so the
page shows the move at once; the game lives on the server, so a closed tab loses nothing (reopen the page:
it asks for messiah's move if one is due), and each game has an id so that a request from a replaced game
is refused, not applied. The page also draws black's win rate as messiah saw it, offers the game as KIF
and CSA (cshogi's exporters), and annotates a finished game with ``messiah annotate``'s analysis.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import cshogi
from cshogi import CSA, KIF

from messiah.config import at_least, within
from messiah.engine.engine import Engine, EngineChoice, overrides
from messiah.engine.strength import LEVELS
from messiah.errors import UserError
from messiah.evaluator import Evaluator
from messiah.position import perpetual_check_winner
from messiah.tools.analyze import analysis
from messiah.tools.annotate import GameAnalysis, Record, annotate_record
from messiah.tools.picture import CELL, SVG_NS, board_svg, square_centre

if TYPE_CHECKING:  # Flask is the web extra's
    from flask import Flask

MARKS = ("☗", "☖")
HAND_LETTERS = "PLNSGBR"  # cshogi's hand piece order
HAND_KANJI = "歩香桂銀金角飛"
BOARD_SCALE = 2.6
MOVETIMES = (300, 1000, 3000, 10000)  # ms the page offers
ANNOTATE_MOVETIMES = (100, 300, 1000)  # ms per position the page offers for an annotation
ANNOTATE_MOVETIME = 300  # its default: a 100-ply game in about half a minute


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
    strength: int = 0  # the engine's Strength level (0: full strength)
    board: cshogi.Board = field(default_factory=cshogi.Board)
    result: str | None = None  # how it ended, once it has
    end: tuple[str, str] | None = None  # the same for the records: CSA's code, cshogi's KIF.Exporter.end reason
    engine: dict = field(default_factory=dict)  # the engine's last search: win rate, PV
    winrates: list[tuple[int, float]] = field(default_factory=list)  # (ply of messiah's move, black's win rate)
    annotation: dict | None = None  # the finished game's annotation, once asked for
    started: datetime = field(default_factory=datetime.now)

    def names(self) -> list[str]:
        """The players, black first, as the records name them."""
        return ["you", "messiah"] if self.human == cshogi.BLACK else ["messiah", "you"]

    def start(self) -> cshogi.Board:
        """The position the game started from (a test may set up another than the usual one)."""
        board = self.board.copy()
        for _ in board.history:
            board.pop()
        return board


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


def winrate_graph(points: Sequence[tuple[int, float]], plies: int, mistakes: Sequence[tuple[int, int]] = (),
                  width: int = 300, height: int = 150) -> str:
    """An SVG of black's win rate as GUIs draw it: one curve through ``points`` (ply, black's win rate) over
    ``plies`` plies, 50% across the middle, a dot with a tooltip per point, and each of ``mistakes`` (ply, the
    side that made it) ringed in that side's colour on the curve, as ``messiah annotate --png`` marks them."""
    left, right, top, bottom = 30, 8, 8, 16
    span = max(plies, 1)
    at = dict(points)

    def xy(ply: int, black: float) -> tuple[str, str]:
        return f"{left + (width - left - right) * ply / span:.1f}", f"{top + (height - top - bottom) * (1 - black):.1f}"

    root = ET.Element(f"{{{SVG_NS}}}svg", {"viewBox": f"0 0 {width} {height}", "width": str(width),
                                           "height": str(height), "font-size": "9", "class": "winrates"})

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
        names = {k: k.rstrip("_").replace("_", "-") for k in attributes}  # class_, text_anchor, data_ply
        element = ET.SubElement(parent, f"{{{SVG_NS}}}{tag}", {names[k]: v for k, v in attributes.items()})
        element.text = text
        return element

    sub(root, "rect", x=str(left), y=str(top), width=str(width - left - right), height=str(height - top - bottom),
        fill="none", stroke="#999")
    for value in (0.0, 0.5, 1.0):
        x, y = xy(0, value)
        if value == 0.5:
            sub(root, "line", x1=x, y1=y, x2=str(width - right), y2=y, stroke="#bbb")
        sub(root, "text", f"{value:.0%}", x=str(left - 3), y=y, text_anchor="end", dominant_baseline="middle")
    for ply in sorted({0, plies}):
        sub(root, "text", str(ply), x=xy(ply, 0)[0], y=str(height - 3), text_anchor="middle")
    sub(root, "text", "black's win rate", x=str(left + 4), y=str(top + 10), fill="#666")
    if len(points) > 1:
        sub(root, "polyline", points=" ".join(",".join(xy(*point)) for point in points), fill="none",
            stroke="black", stroke_width="1.5", class_="curve")
    for ply, black in points:
        x, y = xy(ply, black)
        dot = sub(root, "circle", cx=x, cy=y, r="2.5", fill="black", class_="point", data_ply=str(ply))
        sub(dot, "title", f"move {ply}: black {black:.1%}")
    for ply, side in mistakes:
        x, y = xy(ply, at[ply])
        colour = "black" if side == cshogi.BLACK else "#d62728"
        ring = sub(root, "circle", cx=x, cy=y, r="5", fill="none", stroke=colour, stroke_width="1.5",
                   class_="mistake")
        sub(ring, "title", f"move {ply}: a mistake by {'black' if side == cshogi.BLACK else 'white'}")
    return ET.tostring(root, encoding="unicode")


def _kif(board: cshogi.Board, move: int) -> str:
    """``move`` on ``board`` as the move list writes it: the mover's mark and the KIF move."""
    return MARKS[board.turn] + KIF.move_to_kif(move, board.peek())


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
        self.options = overrides(options, Search=search)
        self.engine = Engine.from_options(self.options, evaluator)
        self.nodes = nodes  # a node budget instead of the time (tests)
        self.lock = threading.Lock()
        self.game = Game(1, cshogi.BLACK, movetime, self.engine.settings["Strength"])

    # -- requests ------------------------------------------------------------------------------------------

    def new_game(self, side: object, movetime: object, strength: object = 0) -> dict:
        """Start a new game: ``side`` 'black' or 'white' (the person's), ``movetime`` ms per engine move, the
        engine's ``strength`` (its Strength option: 1..LEVELS, 0 full strength; the README's table places each)."""
        if side not in ("black", "white"):
            raise PlayError(f"side must be 'black' or 'white', got {side!r}")
        movetime = _int(movetime, "movetime", 50, 600_000)
        strength = _int(strength, "strength", 0, LEVELS)
        with self.lock:
            if strength != self.engine.settings["Strength"]:  # the same engine at another level, on the same model
                evaluator = self.engine.evaluator
                self.engine.close()
                self.engine = Engine.from_options({**self.options, "Strength": str(strength)}, evaluator)
            self.game = Game(self.game.id + 1, cshogi.BLACK if side == "black" else cshogi.WHITE, movetime, strength)
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
            self._finish("you resigned: messiah wins", "%TORYO", "resign")
            return self.state()

    def scores(self, game_id: object) -> str:
        """The move-score picture of the current position, searched within the engine's limits."""
        with self.lock:
            self._check(game_id, playing=False)
            game = self.game
            picture = analysis(self.engine, game.board, **self._limits()).picture(flip=game.human == cshogi.WHITE)
            picture.scale = BOARD_SCALE
            return picture.to_svg()

    def record(self, game_id: object, kind: object) -> tuple[str, bytes]:
        """The game so far as a ``kind`` ('kif' or 'csa') file, by cshogi's exporters: its file name and its
        bytes (a .kif in Shift_JIS, as GUIs read it; a .csa in UTF-8). The players are "you" and "messiah";
        a finished game ends with its result (a mate as the mated side's resignation: cshogi's KIF exporter
        has no 詰み, and floodgate's records end a mate with %TORYO too)."""
        if kind not in ("kif", "csa"):
            raise PlayError(f"a record is .kif or .csa, not .{kind}", 404)
        with self.lock:
            self._check(game_id, playing=False)
            game = self.game
            start = game.start()
            with tempfile.TemporaryDirectory() as folder:
                path = str(Path(folder) / f"game.{kind}")
                if kind == "kif":
                    kif = KIF.Exporter(path)
                    kif.header(game.names(), game.started, None if start.sfen() == cshogi.STARTING_SFEN else start)
                    for move in game.board.history:
                        kif.move(move)
                    if game.end:
                        kif.end(game.end[1])
                    kif.close()
                else:
                    csa = CSA.Exporter(path, encoding="utf-8")
                    csa.info(start, game.names(), {"START_TIME": f"{game.started:%Y/%m/%d %H:%M:%S}"}, version="V2.2")
                    for move in game.board.history:
                        csa.move(move)
                    if game.end:
                        csa.endgame(game.end[0])
                    csa.close()
                content = Path(path).read_bytes()
            return f"messiah-{game.started:%Y%m%d-%H%M%S}.{kind}", content

    def annotate(self, game_id: object, movetime: object = None) -> dict:
        """Annotate the finished game as ``messiah annotate`` does, with this engine's options, each position
        searched for ``movetime`` ms (ANNOTATE_MOVETIME when None) or, when the server has one, its node budget;
        the game's state, with the annotation under "annotation" (kept with the game, so a reopened page shows
        it). It holds the lock, as the evaluator is the game's: the page's other requests wait for it."""
        with self.lock:
            self._check(game_id, playing=False)
            game = self.game
            if game.result is None:
                raise PlayError("the game is still going: annotate it once it is over (resign to end it now)", 409)
            if not game.board.history:
                raise PlayError("the game has no moves to annotate")
            limits = ({"nodes": self.nodes} if self.nodes else
                      {"movetime": _int(ANNOTATE_MOVETIME if movetime is None else movetime, "movetime", 10, 10_000)})
            record = Record(game.start().sfen(), list(game.board.history), game.names(), game.end[0])
            notes = annotate_record(record, self.engine.evaluator, progress=False, options=self.options, **limits)
            budget = f"{self.nodes} nodes" if self.nodes else f"{limits['movetime'] / 1000:g} s"
            game.annotation = self._annotation(notes, f"{budget} per position")
            return self.state()

    def state(self) -> dict:
        """Everything the page shows."""
        game, board = self.game, self.game.board
        moves, replay = [], game.start()
        for number, move in enumerate(board.history, 1):
            moves.append(f"{number} {_kif(replay, move)}")
            replay.push(move)
        hand = board.pieces_in_hand[game.human]
        return {
            "game": game.id,
            "sfen": board.sfen(),
            "human": "black" if game.human == cshogi.BLACK else "white",
            "your_turn": game.result is None and board.turn == game.human,
            "movetime": game.movetime,
            "strength": game.strength,
            "svg": clickable_board(board, game.human == cshogi.WHITE),
            "moves": moves,
            "hand": [{"piece": HAND_LETTERS[i], "kanji": HAND_KANJI[i], "count": n} for i, n in enumerate(hand) if n],
            "engine": game.engine,
            "winrates": game.winrates,
            "graph": winrate_graph(game.winrates, len(board.history)),
            "result": game.result,
            "annotation": game.annotation,
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

    def _annotation(self, notes: GameAnalysis, budget: str) -> dict:
        """What the page shows of an annotation: the summary per side, the mistakes, the graph."""
        board, mistakes = cshogi.Board(notes.record.sfen), []
        for note in notes.notes:
            if note.mistake:
                mistakes.append({"ply": note.ply, "player": notes.record.names[note.turn],
                                 "move": _kif(board, note.move), "best": _kif(board, note.best),
                                 "loss": round(note.loss, 4)})
            board.push(note.move)
        graph = winrate_graph(list(enumerate(notes.black_winrates().tolist())), len(notes.notes),
                              [(n.ply, n.turn) for n in notes.notes if n.mistake], width=640, height=220)
        return {"budget": budget, "threshold": notes.threshold, "summary": notes.summary(), "mistakes": mistakes,
                "graph": graph}

    def _finish(self, result: str, csa: str, kif: str) -> None:
        """End the game: ``result`` for the page, ``csa`` (CSA's %-code) and ``kif`` (KIF.Exporter.end's
        reason) for the records."""
        self.game.result, self.game.end = result, (csa, kif)

    def _engine_move(self) -> None:
        game, board = self.game, self.game.board
        if self.engine.rules.declaration(board) == 0:  # under the engine's EnteringKingRule
            self._finish("messiah declares an entering-king win", "%KACHI", "win")
            return
        book, _ = self.engine.book_move(board)
        if book is not None:  # the engine's book, as a GUI's engine plays it: at once, with the book's value
            value = self.engine.scale.to_winrate(book.value)
            game.engine = {"winrate": round(value, 4), "mate": None, "pv": f"book: {book.move}", "depth": book.depth,
                           "nodes": 0}
            self._play(board.move_from_usi(book.move), value)
            return
        result = self.engine.search(board, **self._limits())
        if self.engine.resigns(result):  # ResignValue, as the USI engine resigns
            self._finish("messiah resigns: you win", "%TORYO", "resign")
            return
        pv, replay = [], board.copy()
        for move in result.pv:
            pv.append(_kif(replay, move))
            replay.push(move)
        game.engine = {"winrate": round(result.winrate, 4), "mate": result.mate, "pv": " ".join(pv),
                       "depth": result.depth, "nodes": result.nodes}
        # at a Strength level maybe another move than the best; the position's value is the search's
        self._play(self.engine.choose(board, result), result.winrate)

    def _play(self, move: int, value: float) -> None:
        """Play messiah's ``move``, worth ``value`` to it, and note black's win rate at it: GUIs draw an engine's
        value at the move it chose."""
        board = self.game.board
        black = value if board.turn == cshogi.BLACK else 1 - value
        self.game.winrates.append((len(board.history) + 1, round(black, 4)))
        self._push(move)

    def _push(self, move: int) -> None:
        """Play ``move`` and see whether the game has ended (mate, or the fourth time the same position)."""
        board, game = self.game.board, self.game
        mover = board.turn
        board.push(move)
        if board.is_game_over():
            self._finish(f"checkmate: {'you win' if mover == game.human else 'messiah wins'}", "%TORYO", "resign")
            return
        replay, seen = game.start(), {}
        for played in board.history:
            replay.push(played)
            seen[replay.zobrist_hash()] = seen.get(replay.zobrist_hash(), 0) + 1
        if seen[board.zobrist_hash()] >= 4:
            repetition = board.is_draw()
            winner = perpetual_check_winner(board, repetition)
            if winner is not None:
                loser = cshogi.opponent(winner)
                # CSA names the side that broke the rule; cshogi's KIF exporter, whether it made the last move.
                self._finish(f"perpetual check by {'you: messiah wins' if loser == game.human else 'messiah: you win'}",
                             f"%{'+-'[loser]}ILLEGAL_ACTION", "illegal_lose" if loser == mover else "illegal_win")
            else:
                self._finish("fourfold repetition: a draw", "%SENNICHITE", "sennichite")


def _options(values: Iterable[int], selected: int, label: Callable[[int], str]) -> str:
    """The HTML ``<option>`` of each of ``values``, shown as ``label(value)``, the ``selected`` one selected."""
    return "".join(f'<option value="{value}"{" selected" if value == selected else ""}>{label(value)}</option>'
                   for value in values)


def _seconds(ms: int) -> str:
    """``ms`` as the page's choices show a time: in seconds."""
    return f"{ms / 1000:g} s"


def _page(page: str, game: Game) -> str:
    """The page with its choices filled in: messiah's time a move (the usual ones and the game's), the time a
    position of an annotation, and messiah's strength (the game's selected)."""
    movetimes = _options(sorted({*MOVETIMES, game.movetime}), game.movetime, _seconds)
    annotate = _options(ANNOTATE_MOVETIMES, ANNOTATE_MOVETIME, _seconds)
    levels = _options(range(LEVELS + 1), game.strength, lambda level: str(level or "full"))
    return page.replace("<!--MOVETIMES-->", movetimes).replace("<!--ANNOTATE-->", annotate) \
        .replace("<!--STRENGTHS-->", levels)


def _body() -> dict:
    """The request's JSON object; a PlayError when it is not one."""
    from flask import request

    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise PlayError("expected a JSON object")
    return data


def _add_error_handlers(app: Flask, server: PlayServer) -> None:
    """Every error answers JSON with an ``error`` for the page to show: a refused request (PlayError) with the
    game's state too, an HTTP error (a wrong route or method) with its code, anything else as a server failure."""
    from flask import jsonify
    from werkzeug.exceptions import HTTPException

    @app.errorhandler(PlayError)
    def refused(error: PlayError):
        with server.lock:
            return jsonify({"error": str(error), "state": server.state()}), error.status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        return jsonify({"error": f"{error.code} {error.name}: {error.description}"}), error.code

    @app.errorhandler(Exception)
    def failed(error: Exception):  # a bug or an engine failure: the page shows it as a message
        app.logger.exception("request failed")
        return jsonify({"error": f"the server failed: {type(error).__name__}: {error}"}), 500


def _add_game_routes(app: Flask, server: PlayServer) -> None:
    """The page and the requests that play the game: its state, a new game, a piece's targets, the person's move,
    messiah's reply, resigning."""
    from flask import Response, jsonify

    page = (resources.files("messiah") / "data" / "play.html").read_text(encoding="utf-8")

    @app.get("/")
    def index():
        return Response(_page(page, server.game), mimetype="text/html")

    @app.get("/state")
    def state():
        with server.lock:
            return jsonify(server.state())

    @app.post("/new")
    def new():
        data = _body()
        return jsonify(server.new_game(data.get("side"), data.get("movetime"), data.get("strength", 0)))

    @app.post("/targets")
    def targets():
        data = _body()
        return jsonify({"targets": server.targets(data.get("game"), data.get("from"), data.get("drop"))})

    @app.post("/move")
    def move():
        data = _body()
        return jsonify(server.play(data.get("game"), data.get("from"), data.get("to"), data.get("drop"),
                                   data.get("promote")))

    @app.post("/reply")
    def reply():
        return jsonify(server.reply(_body().get("game")))

    @app.post("/resign")
    def resign():
        return jsonify(server.resign(_body().get("game")))


def _add_analysis_routes(app: Flask, server: PlayServer) -> None:
    """The requests about the game rather than moves in it: the move-score picture, the records, the annotation."""
    from flask import Response, jsonify, request

    @app.post("/scores")
    def scores():
        return jsonify({"svg": server.scores(_body().get("game"))})

    @app.get("/record.<kind>")
    def record(kind: str):
        name, content = server.record(request.args.get("game"), kind)
        charset = "shift_jis" if kind == "kif" else "utf-8"
        return Response(content, content_type=f"text/plain; charset={charset}",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.post("/annotate")
    def annotate():
        data = _body()
        return jsonify(server.annotate(data.get("game"), data.get("movetime")))


def create_app(server: PlayServer) -> Flask:
    """The Flask app of the page and its JSON requests."""
    from flask import Flask

    app = Flask("messiah.tools.web")
    _add_error_handlers(app, server)
    _add_game_routes(app, server)
    _add_analysis_routes(app, server)
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
