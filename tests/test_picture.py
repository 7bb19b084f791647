"""The move-score picture: every legal move drawn once, coloured by Q, the PV marked, both colours' views."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET

import cshogi
import pytest
from conftest import require

from messiah.cli import main
from messiah.tools.analyze import analyze_position, read_position
from messiah.tools.picture import (
    GENERIC_FAMILY,
    JAPANESE_FONTS,
    LEFT,
    SVG_NS,
    WIDTH,
    MovePicture,
    installed_japanese_fonts,
    png_converter,
    square_centre,
    svg_to_png,
    text_width,
)

# White to move with a bishop in hand (so with drops), after a bishop exchange.
POSITION = "startpos moves 7g7f 3c3d 8h2b+ 3a2b 1g1f"
T = f"{{{SVG_NS}}}"


@pytest.fixture(scope="module")
def analysis():
    return analyze_position(POSITION, nodes=400)


def _titles(root: ET.Element, group: str) -> list[str]:
    layer = next(g for g in root.iter(f"{T}g") if g.get("class") == group)
    return [e.find(f"{T}title").text for e in layer if e.find(f"{T}title") is not None]


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i: i + 2], 16) for i in (1, 3, 5))


def test_every_legal_move_is_drawn_once(analysis):
    root = ET.fromstring(analysis.picture().to_svg())
    board = read_position(POSITION)
    legal = list(board.legal_moves)
    drops = [m for m in legal if cshogi.move_is_drop(m)]
    pairs = {(cshogi.move_from(m), cshogi.move_to(m)) for m in legal if not cshogi.move_is_drop(m)}
    titles = _titles(root, "moves")
    assert drops and len(titles) == len(pairs) + len(drops)
    # Each legal move is named in exactly one tooltip (a move that may promote shares its arrow).
    named = [word for t in titles for word in re.findall(r"^(\S+) ", t, re.M)]
    assert sorted(named) == sorted(cshogi.move_to_usi(m) for m in legal)


def test_the_colour_runs_from_the_worst_move_to_the_best(analysis):
    root = ET.fromstring(analysis.picture().to_svg())
    scores = analysis.scores
    best = cshogi.move_to_usi(int(scores.moves[scores.q.argmax()]))
    worst = cshogi.move_to_usi(int(scores.moves[scores.q.argmin()]))
    colours = {}
    layer = next(g for g in root.iter(f"{T}g") if g.get("class") == "moves")
    for mark in layer:
        first = mark.find(f"{T}title").text.split()[0]
        shape = mark.find(f"{T}polygon")
        colours[first] = (shape if shape is not None else mark).get("fill")
    r, g, _ = _rgb(colours[best])
    assert g > r  # green
    r, g, _ = _rgb(colours[worst])
    assert r > g  # red


def test_the_best_move_and_the_pv_are_marked(analysis):
    root = ET.fromstring(analysis.picture().to_svg())
    pv = analysis.result.pv
    titles = _titles(root, "pv")
    assert titles[0].startswith(f"best {cshogi.move_to_usi(pv[0])}")
    assert len(pv) > 1 and any(t.startswith("PV 2:") for t in titles)
    legend = "".join(next(g for g in root.iter(f"{T}g") if g.get("class") == "legend").itertext())
    assert f"{len(analysis.scores.moves)} moves" in legend and "win rate" in legend


def test_a_long_pv_wraps_inside_the_picture():
    """Seven plies with drops, promotions and a 同 are wider than the board: the legend's PV wraps onto a second
    line, every ply written and every line inside the picture (it ran off the right edge, two plies lost)."""
    board = read_position("startpos moves 7g7f 3c3d 8h2b+ 3a2b")
    pv = []
    for usi in "B*4e 2b3c 4e3d+ 8b2b 3d4d 3c4d 1g1f".split():
        pv.append(board.move_from_usi(usi))
        board.push(pv[-1])
    board = read_position("startpos moves 7g7f 3c3d 8h2b+ 3a2b")
    moves = list(board.legal_moves)
    root = ET.fromstring(MovePicture(board, moves, [0.5] * len(moves), pv[0], pv, 0.55).to_svg())
    legend = next(g for g in root.iter(f"{T}g") if g.get("class") == "legend")
    lines = [e for e in legend.iter(f"{T}text") if e.text and e.text.startswith(("PV ", "☗", "☖"))]
    assert len(lines) == 2 and lines[0].text.startswith("PV ")
    assert " ".join(e.text for e in lines).count("☗") + " ".join(e.text for e in lines).count("☖") == len(pv)
    height = float(root.get("viewBox").split()[3])
    for line in lines:
        assert LEFT + text_width(line.text, float(line.get("font-size"))) <= WIDTH
        assert float(line.get("y")) + 2 <= height


def test_white_sees_the_board_turned():
    # From white's seat black's camp is at the top: 1a is at the bottom left, 9i at the top right.
    assert square_centre(0, flip=True) == square_centre(80, flip=False)
    assert square_centre(80, flip=True) == square_centre(0, flip=False)
    board = read_position(POSITION)
    moves = [int(m) for m in board.legal_moves]
    black = ET.fromstring(MovePicture(board, moves, [0.5] * len(moves)).to_svg())
    white = ET.fromstring(MovePicture(board, moves, [0.5] * len(moves), flip=True).to_svg())
    labels = [[t.text for t in root.iter(f"{T}text") if t.get("y") == "8"] for root in (black, white)]
    assert labels[0] == list("987654321") and labels[1] == list("123456789")
    # The pieces lie in a group turned half a turn about the board's centre.
    turned = [g for g in white.iter(f"{T}g") if (g.get("transform") or "").startswith("rotate(180 110.5")]
    on_board = sum(board.piece(square) != cshogi.NONE for square in range(81))
    assert len(turned) == 1 and len(turned[0].findall(f"{T}use")) == on_board


def test_jupyter_shows_the_picture(analysis):
    svg = analysis._repr_svg_()
    assert svg == analysis.picture(flip=True).to_svg()  # white to move: from white's seat


def test_png(analysis, tmp_path):
    require(png_converter() is not None, "rsvg-convert (Debian package librsvg2-bin) or cairosvg")
    path = analysis.picture().save(tmp_path / "scores.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_every_text_names_japanese_fonts_first_and_the_generic_family_last(analysis):
    """cshogi writes font-family="serif" alone, which cairosvg drew in DejaVu Serif: every kanji a blank box."""
    root = ET.fromstring(analysis.picture().to_svg())
    families = [e.get("font-family") for e in root.iter() if e.get("font-family") and e.text != "2"]
    named = [[name.strip(" '") for name in family.split(",")] for family in families if family != "sans-serif"]
    assert len(named) > 40  # cshogi's pieces, hands and coordinates, the drops and the legend
    for names in named:
        assert names[0] in (installed_japanese_fonts() or JAPANESE_FONTS) and names[-1] == GENERIC_FAMILY
        assert set(JAPANESE_FONTS) <= set(names)


def _converter_present(converter: str) -> bool:
    if converter == "rsvg-convert":
        return shutil.which("rsvg-convert") is not None
    try:
        import cairosvg  # noqa: F401
    except (ImportError, OSError):  # OSError: the package without its cairo library
        return False
    return True


CONVERTERS = {"rsvg-convert": "rsvg-convert (Debian package librsvg2-bin)",
              "cairosvg": "cairosvg (pip install cairosvg; the dev extra has it)"}
# Squares of black's back rank with three different kanji, and an empty one (cshogi: file * 9 + rank, 0 = 1a).
LANCE_9I, KNIGHT_8I, SILVER_7I, EMPTY_5E = 80, 71, 62, 40


@pytest.mark.parametrize("converter", CONVERTERS)
def test_each_converter_draws_the_kanji(converter, monkeypatch, tmp_path):
    """Where a kanji stands the PNG has a glyph's dark pixels, and each kanji its own: cairosvg drew every kanji as
    the same blank box (the font it was given, DejaVu Serif, has none), rsvg-convert drew them (its fonts fall back).
    The PNGs are kept in the test's folder to be looked at."""
    import messiah.tools.picture

    require(_converter_present(converter), CONVERTERS[converter])
    require(bool(installed_japanese_fonts()), "a Japanese font (Debian package fonts-ipafont-gothic)")
    image_module = pytest.importorskip("PIL.Image")  # pillow: cairosvg's and matplotlib's, in the dev extra
    monkeypatch.setattr(messiah.tools.picture, "png_converter", lambda: converter)
    scale = 3.0
    path = MovePicture(cshogi.Board(), [], [], scale=scale).save(tmp_path / f"{converter}.png")
    drawn = image_module.open(path).convert("RGBA")  # on a transparent background: laid on white
    image = image_module.alpha_composite(image_module.new("RGBA", drawn.size, "white"), drawn).convert("L")
    assert image.width == WIDTH * scale

    def inside(square: int) -> list[int]:
        """The grey levels of the square's inside (its grid lines left out), row by row."""
        x, y = square_centre(square, flip=False)
        half = 7 * scale  # of a 20-unit square, 14 units about its centre
        box = tuple(round(v) for v in (scale * x - half, scale * y - half, scale * x + half, scale * y + half))
        return list(image.crop(box).tobytes())

    def dark(pixels: list[int]) -> int:
        return sum(p < 128 for p in pixels)

    pieces = [inside(square) for square in (LANCE_9I, KNIGHT_8I, SILVER_7I)]
    size = len(pieces[0])
    assert dark(inside(EMPTY_5E)) == 0
    assert all(dark(piece) > size // 20 for piece in pieces), [dark(p) for p in pieces]
    for a, b in ((0, 1), (0, 2), (1, 2)):  # the same box for each would differ nowhere
        differ = sum(abs(p - q) > 96 for p, q in zip(pieces[a], pieces[b], strict=True))
        assert differ > size // 20, (a, b, differ)


def test_a_png_without_a_japanese_font_warns(monkeypatch, tmp_path):
    import messiah.tools.picture

    require(png_converter() is not None, "rsvg-convert (Debian package librsvg2-bin) or cairosvg")
    monkeypatch.setattr(messiah.tools.picture, "installed_japanese_fonts", lambda: ())
    with pytest.warns(UserWarning, match="no Japanese font found .* fonts-ipafont-gothic"):
        svg_to_png(MovePicture(cshogi.Board(), [], []).to_svg(), tmp_path / "x.png")


def test_no_converter_is_a_clear_error(monkeypatch, tmp_path):
    import builtins
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    real_import = builtins.__import__

    def no_cairosvg(name, *args, **kwargs):
        if name == "cairosvg":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cairosvg)
    with pytest.raises(ValueError, match="rsvg-convert"):
        svg_to_png("<svg/>", tmp_path / "x.png")


def test_cli_writes_the_picture_and_refuses_a_malformed_sfen(tmp_path, capsys):
    main(["analyze", *POSITION.split(), "--nodes", "100", "--svg", str(tmp_path / "a.svg"), "--flip"])
    assert ET.parse(tmp_path / "a.svg").getroot().tag == f"{T}svg"
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["analyze", "lnsgkgsnl/9", "b", "-", "1", "--svg", str(tmp_path / "b.svg")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sfen board needs 9 ranks" in err
    assert not (tmp_path / "b.svg").exists()


def test_analyze_png_without_a_converter_fails_before_it_searches(monkeypatch, tmp_path, capsys):
    """A missing converter is found before the search, not after it: the search is never started."""
    import messiah.tools.analyze
    import messiah.tools.picture

    monkeypatch.setattr(messiah.tools.picture, "png_converter", lambda: None)

    def no_search(*args, **kwargs):
        raise AssertionError("searched, then failed on the picture")

    monkeypatch.setattr(messiah.tools.analyze, "analyze_position", no_search)
    with pytest.raises(SystemExit) as exit_:
        main(["analyze", *POSITION.split(), "--nodes", "100", "--png", str(tmp_path / "a.png")])
    assert exit_.value.code == 2 and "rsvg-convert" in capsys.readouterr().err
    assert not (tmp_path / "a.png").exists()


def test_analyze_writes_the_svg_beside_a_png_it_cannot_make(monkeypatch, tmp_path, capsys):
    """With no converter, --png alone stops before the search; beside --svg the search runs, the analysis is printed
    and the SVG written, and only then does the PNG's error end the command (it once stopped before all three)."""
    import messiah.tools.picture

    monkeypatch.setattr(messiah.tools.picture, "png_converter", lambda: None)
    with pytest.raises(SystemExit) as exit_:
        main(["analyze", *POSITION.split(), "--nodes", "50", "--svg", str(tmp_path / "a.svg"),
              "--png", str(tmp_path / "a.png")])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("bestmove ") and "rsvg-convert" in captured.err
    assert ET.parse(tmp_path / "a.svg").getroot().tag == f"{T}svg"
    assert not (tmp_path / "a.png").exists()
