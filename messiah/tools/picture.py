"""Pictures of a position: cshogi's SVG board with every legal move coloured by its Q.

The all-moves network scores every legal move in one forward pass, so a picture can show them all: board
moves as arrows from their square to their destination, drops as the dropped piece written small in the
destination square, each coloured on a red-yellow-green scale from the position's worst Q to its best.
The searched best move is drawn thick with an outline, the rest of the principal variation as numbered
dashed arrows, and a legend under the board gives the scale and the search's verdict. Every mark carries
a ``<title>`` (a tooltip in a browser or Jupyter) with the move and its Q.

The board itself is ``cshogi.Board.to_svg``; seen from white, its squares, pieces and hands are turned
half a turn and only the coordinates are rewritten so that they read upright. Every text names Japanese fonts
before the generic family (:func:`font_family`): cshogi's ``serif`` alone drew every kanji as a blank box in
cairosvg, which draws a text with the first family named and no other.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import unicodedata
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cshogi
from cshogi import KIF

from messiah.errors import UserError

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

# cshogi's board geometry (Board.to_svg): 20-unit squares from (20.5, 10.5); a 230 x 192 canvas.
CELL = 20.0
LEFT, TOP = 20.5, 10.5
WIDTH, HEIGHT = 230, 192
CENTRE = (LEFT + 4.5 * CELL, TOP + 4.5 * CELL)  # the board's centre, about which the white view turns
LEGEND_HEIGHT = 34
# Red (the position's worst move) to yellow to green (its best), ColorBrewer's RdYlGn end points.
STOPS = ((0xD7, 0x30, 0x27), (0xFE, 0xE0, 0x8B), (0x1A, 0x98, 0x50))
PV_COLOUR = "#2166ac"
PV_SHOWN = 6  # plies of the principal variation drawn after the best move
PV_FONT = 5.5  # the legend's PV line: its font size, and the space between its lines when it wraps
PV_LEADING = 7.0
HAND_KANJI = "歩香桂銀金角飛"  # cshogi's hand piece order: P L N S G B R
# Where in its destination square each hand piece's drop is written (a 3 x 3 grid, centre left free).
DROP_SLOTS = ((-6, -6), (0, -6), (6, -6), (-6, 0), (6, 0), (-6, 6), (0, 6))
ARABIC = "123456789"
KANJI_RANKS = "一二三四五六七八九"
# Japanese fonts by family, Mincho (the look of cshogi's serif pieces) before Gothic: Linux's IPA and Noto fonts,
# macOS's Hiragino, Windows's Yu and MS fonts. A viewer takes the first it has for each glyph; the generic family is
# last (cshogi's own), for whatever none of them holds.
JAPANESE_FONTS = ("IPAexMincho", "IPAMincho", "Noto Serif CJK JP", "Hiragino Mincho ProN", "Yu Mincho", "MS Mincho",
                  "IPAexGothic", "IPAGothic", "Noto Sans CJK JP", "Hiragino Sans", "Yu Gothic", "MS Gothic")
GENERIC_FAMILY = "serif"
NO_JAPANESE_FONT = ("no Japanese font found (fc-list :lang=ja lists none): the picture's kanji will be blank boxes; "
                    "install one, e.g. Debian's fonts-ipafont-gothic")


def q_colour(t: float) -> str:
    """The colour at ``t`` in [0, 1] of the red-yellow-green scale."""
    t = min(1.0, max(0.0, t))
    (r0, g0, b0), (r1, g1, b1) = (STOPS[0], STOPS[1]) if t < 0.5 else (STOPS[1], STOPS[2])
    u = t * 2 if t < 0.5 else t * 2 - 1
    return "#{:02x}{:02x}{:02x}".format(*(round(a + (b - a) * u) for a, b in ((r0, r1), (g0, g1), (b0, b1))))


def text_width(text: str, font_size: float) -> float:
    """An upper bound of ``text``'s width: a wide character (kanji, full-width digits, the shogi marks) one em, any
    other 0.6 em, more than the Latin serif and Japanese Gothic fonts that draw them take."""
    return font_size * sum(1.0 if unicodedata.east_asian_width(c) in "WF" or c in "☗☖" else 0.6 for c in text)


def wrap(words: Sequence[str], width: float, font_size: float) -> list[str]:
    """``words`` in lines of at most ``width`` (by :func:`text_width`), a word never split."""
    lines: list[str] = []
    for word in words:
        if lines and text_width(f"{lines[-1]} {word}", font_size) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def square_centre(square: int, flip: bool) -> tuple[float, float]:
    """The centre of cshogi square ``square`` (file * 9 + rank) on the picture."""
    file, rank = divmod(square, 9)
    x, y = LEFT + (8 - file) * CELL + CELL / 2, TOP + rank * CELL + CELL / 2
    return (2 * CENTRE[0] - x, 2 * CENTRE[1] - y) if flip else (x, y)


@functools.cache
def installed_japanese_fonts() -> tuple[str, ...] | None:
    """The font families fontconfig has for Japanese (``fc-list :lang=ja``), sorted; None where fontconfig cannot be
    asked (not installed: Windows and macOS as a rule)."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    try:
        listed = subprocess.run([fc_list, ":lang=ja", "family"], capture_output=True, text=True, timeout=60,
                                check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return tuple(sorted({line.split(",")[0].strip() for line in listed.splitlines() if line.strip()}))


def font_family() -> str:
    """The pictures' font-family: a Japanese font this machine has first (cairosvg draws a text in the first family
    named alone, and a glyph that font lacks as a blank box), then :data:`JAPANESE_FONTS` and the generic family."""
    installed = installed_japanese_fonts() or ()
    first = [name for name in JAPANESE_FONTS if name in installed] or list(installed)
    return ", ".join(f"'{name}'" if " " in name else name
                     for name in dict.fromkeys([*first[:1], *JAPANESE_FONTS, GENERIC_FAMILY]))


def _name_japanese_fonts(root: ET.Element) -> ET.Element:
    """``root`` with every font-family cshogi wrote (its generic family alone) replaced by :func:`font_family`."""
    family = font_family()
    for element in root.iter():
        if element.get("font-family") == GENERIC_FAMILY:
            element.set("font-family", family)
    return root


def board_svg(board: cshogi.Board, flip: bool = False, lastmove: int | None = None) -> ET.Element:
    """cshogi's SVG of ``board`` as an element tree, seen from white (turned half a turn) when ``flip``, its texts
    in Japanese fonts (:func:`font_family`)."""
    root = ET.fromstring(str(board.to_svg(lastmove=lastmove or None)))
    if not flip:
        return _name_japanese_fonts(root)
    coordinates = ET.fromstring(cshogi.SVG_COORDINATES)
    turned = ET.Element(f"{{{SVG_NS}}}g", {"transform": f"rotate(180 {CENTRE[0]} {CENTRE[1]})"})
    # The hands sit beside the board at the canvas's edges, and the canvas is wider on the right of the
    # board than on its left: they turn about the canvas's centre line to keep inside it.
    hands = ET.Element(f"{{{SVG_NS}}}g", {"transform": f"rotate(180 {WIDTH / 2} {CENTRE[1]})"})
    for child in list(root):
        if child.tag == f"{{{SVG_NS}}}defs":
            continue
        root.remove(child)
        if child.tag == f"{{{SVG_NS}}}text":
            hands.append(child)
        elif not _is_coordinates(child):
            turned.append(child)
    root.extend([turned, hands])
    # The same labels at the same places, numbered from the other side.
    for text in coordinates:
        if text.text in ARABIC:
            text.text = ARABIC[8 - ARABIC.index(text.text)]
        elif text.text in KANJI_RANKS:
            text.text = KANJI_RANKS[8 - KANJI_RANKS.index(text.text)]
    root.append(_namespaced(coordinates))
    return _name_japanese_fonts(root)


def _is_coordinates(element: ET.Element) -> bool:
    """Whether ``element`` is cshogi's group of coordinate labels (SVG_COORDINATES)."""
    texts = [e.text for e in element if e.tag == f"{{{SVG_NS}}}text"]
    return len(texts) == 18 and all(t and t in ARABIC + KANJI_RANKS for t in texts)


def _namespaced(element: ET.Element) -> ET.Element:
    """``element`` (parsed from a fragment without a namespace) with its tags in the SVG namespace."""
    copy = ET.fromstring(ET.tostring(element))
    for e in copy.iter():
        if not e.tag.startswith("{"):
            e.tag = f"{{{SVG_NS}}}{e.tag}"
    return copy


def _sub(parent: ET.Element, tag: str, title: str | None = None, **attributes: object) -> ET.Element:
    element = ET.SubElement(parent, f"{{{SVG_NS}}}{tag}",
                            {k.rstrip("_").replace("_", "-"): str(v) for k, v in attributes.items()})
    if title:
        ET.SubElement(element, f"{{{SVG_NS}}}title").text = title
    return element


def _arrow(parent: ET.Element, start: tuple[float, float], end: tuple[float, float], colour: str, width: float,
           title: str, outline: bool = False, dash: str | None = None, opacity: float = 0.85) -> None:
    """A straight arrow from ``start`` to ``end`` whose head is a triangle (marker colours vary too much)."""
    (x0, y0), (x1, y1) = start, end
    length = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head = 2.2 * width + 2
    # Stop short of the centre so that arrows into one square stay apart, and the shaft under the head.
    tip = (x1 - ux * 3, y1 - uy * 3)
    base = (tip[0] - ux * head, tip[1] - uy * head)
    left = (base[0] - uy * head * 0.55, base[1] + ux * head * 0.55)
    right = (base[0] + uy * head * 0.55, base[1] - ux * head * 0.55)
    group = _sub(parent, "g", title, opacity=opacity)
    shaft = {"x1": f"{x0 + ux * 3:.2f}", "y1": f"{y0 + uy * 3:.2f}", "x2": f"{base[0]:.2f}", "y2": f"{base[1]:.2f}"}
    points = " ".join(f"{x:.2f},{y:.2f}" for x, y in (tip, left, right))
    if outline:
        _sub(group, "line", stroke="black", stroke_width=width + 1.4, stroke_linecap="round", **shaft)
        _sub(group, "polygon", points=points, fill="black", stroke="black", stroke_width=1.4, stroke_linejoin="round")
    line = _sub(group, "line", stroke=colour, stroke_width=width, stroke_linecap="round", **shaft)
    if dash:
        line.set("stroke-dasharray", dash)
    _sub(group, "polygon", points=points, fill=colour)


@dataclass
class MovePicture:
    """A position with the Q of each legal move, and optionally a search's best move, PV and win rate.

    ``q`` is the win rate of the side to move after each move of ``moves`` (cshogi move ints). Displays
    itself in Jupyter (``_repr_svg_``); ``save`` writes an .svg or a .png.
    """

    board: cshogi.Board
    moves: Sequence[int]
    q: Sequence[float]
    bestmove: int | None = None
    pv: Sequence[int] = field(default_factory=list)
    winrate: float | None = None
    flip: bool = False
    scale: float = 3.0

    def to_svg(self) -> str:
        root = board_svg(self.board, self.flip)
        pv_lines = self.pv_lines() if self.moves else []
        height = HEIGHT + LEGEND_HEIGHT + PV_LEADING * max(0, len(pv_lines) - 1)
        root.set("viewBox", f"0 0 {WIDTH} {height:g}")
        root.set("width", str(WIDTH * self.scale))
        root.set("height", f"{height * self.scale:g}")
        if self.moves:
            low, high = min(self.q), max(self.q)
            self._draw_moves(root, low, high)
            self._draw_pv(root)
            self._draw_legend(root, low, high, pv_lines)
        else:
            _sub(root, "text", font_family=font_family(), font_size=7, x=LEFT, y=HEIGHT + 12).text = "no legal move"
        return ET.tostring(root, encoding="unicode")

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture to ``path``: SVG, or PNG when the name ends in .png (see ``svg_to_png``)."""
        path = Path(path)
        if path.suffix.lower() == ".png":
            svg_to_png(self.to_svg(), path)
        else:
            path.write_text(self.to_svg(), encoding="utf-8")
        return path

    def _label(self, move: int) -> str:
        return f"{cshogi.move_to_usi(move)} {KIF.move_to_kif(move)}"

    def _draw_moves(self, root: ET.Element, low: float, high: float) -> None:
        span = high - low or 1.0
        # One arrow per (from, to): a move that may promote or not shows the better of the two.
        arrows: dict[tuple[int, int], list[tuple[float, int]]] = {}
        drops: list[tuple[float, int]] = []
        for move, q in zip(self.moves, self.q, strict=True):
            if cshogi.move_is_drop(move):
                drops.append((float(q), int(move)))
            else:
                arrows.setdefault((cshogi.move_from(move), cshogi.move_to(move)), []).append((float(q), int(move)))
        marks = _sub(root, "g", class_="moves")
        # The worst first, so that the best lie on top.
        for (start, end), options in sorted(arrows.items(), key=lambda item: max(item[1])[0]):
            q, _ = max(options)
            title = "\n".join(f"{self._label(m)}  Q {v:.1%}" for v, m in sorted(options, reverse=True))
            _arrow(marks, square_centre(start, self.flip), square_centre(end, self.flip), q_colour((q - low) / span),
                   1.3, title)
        for q, move in sorted(drops):
            x, y = square_centre(cshogi.move_to(move), self.flip)
            dx, dy = DROP_SLOTS[cshogi.move_drop_hand_piece(move)]
            _sub(marks, "text", f"{self._label(move)}  Q {q:.1%}", x=f"{x + dx:.2f}", y=f"{y + dy + 2.2:.2f}",
                 font_family=font_family(), font_size=6.5, font_weight="bold", text_anchor="middle",
                 fill=q_colour((q - low) / span), stroke="black", stroke_width=0.15).text = \
                HAND_KANJI[cshogi.move_drop_hand_piece(move)]

    def _draw_pv(self, root: ET.Element) -> None:
        if not self.bestmove:
            return
        line = _sub(root, "g", class_="pv")
        pv = list(self.pv) if self.pv and self.pv[0] == self.bestmove else [self.bestmove]
        board = self.board.copy()
        for ply, move in enumerate(pv[: PV_SHOWN + 1]):
            end = square_centre(cshogi.move_to(move), self.flip)
            title = f"PV {ply + 1}: {KIF.move_to_kif(move)}"
            if cshogi.move_is_drop(move):
                start = None
            else:
                start = square_centre(cshogi.move_from(move), self.flip)
            if ply == 0:
                q = dict(zip(map(int, self.moves), self.q, strict=True)).get(int(move))
                title = f"best {self._label(move)}" + ("" if q is None else f"  Q {q:.1%}")
                if start is None:
                    _sub(line, "circle", title, cx=end[0], cy=end[1], r=8.5, fill="none", stroke="black",
                         stroke_width=2.2)
                else:
                    _arrow(line, start, end, "#ffffff", 2.4, title, outline=True, opacity=1.0)
            else:
                if start is not None:
                    _arrow(line, start, end, PV_COLOUR, 1.1, title, dash="2 1.2", opacity=0.9)
                _sub(line, "circle", None, cx=end[0] + 6.5, cy=end[1] - 6.5, r=3.2, fill=PV_COLOUR)
                _sub(line, "text", title, x=end[0] + 6.5, y=end[1] - 4.9, font_family="sans-serif", font_size=4.6,
                     fill="white", text_anchor="middle").text = str(ply + 1)
            if not board.is_legal(move):
                break
            board.push(move)

    def pv_lines(self) -> list[str]:
        """The legend's principal variation in KIF, wrapped to the picture's width (a PV of seven moves with
        promotions is wider than the board)."""
        if not self.bestmove:
            return []
        board, words = self.board.copy(), []
        for move in list(self.pv)[: PV_SHOWN + 1]:
            if not board.is_legal(move):
                break
            words.append(("☗" if board.turn == cshogi.BLACK else "☖") + KIF.move_to_kif(move, board.peek()))
            board.push(move)
        return wrap(["PV", *words], WIDTH - LEFT - 2, PV_FONT) if words else []

    def _draw_legend(self, root: ET.Element, low: float, high: float, pv_lines: Sequence[str]) -> None:
        legend = _sub(root, "g", class_="legend", font_family=font_family(), font_size=6.5)
        top = HEIGHT + 4
        gradient = _sub(root.find(f"{{{SVG_NS}}}defs"), "linearGradient", id="q-scale")
        for i in range(5):
            _sub(gradient, "stop", offset=f"{i * 25}%", stop_color=q_colour(i / 4))
        _sub(legend, "rect", x=LEFT + 52, y=top, width=92, height=6, fill="url(#q-scale)", stroke="black",
             stroke_width=0.3)
        side = "☗" if self.board.turn == cshogi.BLACK else "☖"
        _sub(legend, "text", x=LEFT, y=top + 5.5).text = f"Q for {side}"
        _sub(legend, "text", x=LEFT + 50, y=top + 5.5, text_anchor="end", font_size=5.5).text = f"{low:.1%}"
        _sub(legend, "text", x=LEFT + 146, y=top + 5.5, font_size=5.5).text = f"{high:.1%}"
        _sub(legend, "text", x=WIDTH - 2, y=top + 5.5, text_anchor="end", font_size=5.5).text = \
            f"{len(self.moves)} moves"
        if self.bestmove:
            verdict = f"best {side}{KIF.move_to_kif(self.bestmove)}"
            if self.winrate is not None:
                verdict += f"  win rate {self.winrate:.1%}"
            _sub(legend, "text", x=LEFT, y=top + 15).text = verdict
            for k, line in enumerate(pv_lines):
                _sub(legend, "text", x=LEFT, y=top + 24 + PV_LEADING * k, font_size=PV_FONT).text = line


def png_converter() -> str | None:
    """The SVG-to-PNG converter ``svg_to_png`` would use: 'rsvg-convert' (librsvg), 'cairosvg', or None."""
    if shutil.which("rsvg-convert"):
        return "rsvg-convert"
    try:
        import cairosvg  # noqa: F401
    except (ImportError, OSError):  # OSError: the package is there but its cairo library is not
        return None
    return "cairosvg"


def require_png_converter() -> str:
    """The converter :func:`svg_to_png` will use; a UserError naming what to install when there is none. A
    command that will write a PNG asks first, so that no search is thrown away on a missing program."""
    converter = png_converter()
    if converter is None:
        raise UserError("no SVG-to-PNG converter: install rsvg-convert (apt install librsvg2-bin) or cairosvg "
                        "(pip install cairosvg), or write --svg")
    return converter


def svg_to_png(svg: str, path: str | os.PathLike) -> None:
    """Rasterise ``svg`` to ``path`` with librsvg's rsvg-convert or, failing that, cairosvg.

    Raises UserError naming what to install when neither is there. The kanji need a Japanese font
    (e.g. Debian's fonts-ipafont-gothic): without one either converter draws blank boxes, and a warning says so
    where fontconfig lists none.
    """
    converter = require_png_converter()
    if installed_japanese_fonts() == ():
        warnings.warn(NO_JAPANESE_FONT, stacklevel=2)
    if converter == "rsvg-convert":
        subprocess.run(["rsvg-convert", "--format", "png", "--output", str(path)], input=svg.encode(), check=True)
    elif converter == "cairosvg":
        import cairosvg

        cairosvg.svg2png(bytestring=svg.encode(), write_to=str(path))
