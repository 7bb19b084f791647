"""`messiah play --web` in a real browser: Debian's headless Chromium driven by Selenium.

The test clicks the board as a person would (a piece, then a square), plays three legal moves, waits for
the three replies, and checks that an illegal click is refused on the page. It reads the game's position
from the server's /state only to choose its moves and to check the replies with cshogi. Then it checks
what the page shows of the game: the move list, a point of the win-rate graph per reply, the move-score
picture beside the board (in a 1400-pixel window), the KIF and CSA links (read back with cshogi's parsers),
and, after resigning, the annotation. The engine's opening book answers the first move. Screenshots of the book
move (book.png), the refusal (refused.png), the game with the picture (play.png) and the annotation
(annotated.png) are left in the test's temp directory. Without Chromium,
chromedriver or selenium the test skips, except in CI (CI=true), where .ci/run installs them and a skip
would hide a broken page.
"""

from __future__ import annotations

import json
import shutil
import threading
import urllib.request

import cshogi
import pytest
from conftest import require
from cshogi import CSA, KIF

from messiah.evaluator import Evaluator
from messiah.tools.web import PlayServer, create_app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


# The engine's book answers the test's first move (1g1f, the first legal move by name): the page plays it at once.
BOOK = """#YANEURAOU-DB2016 1.00
sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/8P/PPPPPPPP1/1B5R1/LNSGKGSNL w - 2
3c3d none 0 20 1
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    from werkzeug.serving import make_server

    book = tmp_path_factory.mktemp("book") / "book.db"
    book.write_text(BOOK)
    # A node budget keeps the replies short and independent of the machine's speed.
    app = create_app(PlayServer(Evaluator(threads=1), nodes=300, options={"BookFile": str(book)}))
    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{http.port}"
    http.shutdown()


@pytest.fixture(scope="module")
def browser():
    require(CHROMIUM is not None and CHROMEDRIVER is not None,
            "chromium and chromedriver (Debian packages chromium, chromium-driver; .ci/run installs them)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        require(False, "selenium (pip install -e '.[dev]')")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1400"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _state(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/state", timeout=60) as response:
        return json.load(response)


def _click(driver, square: int) -> None:
    driver.find_element("css selector", f"#board [data-square='{square}']").click()


def test_play_three_moves_and_refuse_an_illegal_click(url, browser, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 120)
    browser.get(url)
    wait.until(lambda d: d.find_elements("css selector", "#board [data-square]"))
    assert _state(url)["human"] == "black"
    played, moves = 0, []
    for _ in range(3):
        state = _state(url)
        board = cshogi.Board(state["sfen"])
        assert board.turn == cshogi.BLACK and state["your_turn"]
        # A legal board move that cannot promote (a promotion would open the browser's confirm dialog).
        move = next(m for m in sorted(board.legal_moves, key=cshogi.move_to_usi)
                    if not cshogi.move_is_drop(m) and not cshogi.move_is_promotion(m)
                    and board.move_from_usi(cshogi.move_to_usi(m) + "+") not in set(board.legal_moves))
        _click(browser, cshogi.move_from(move))
        # The server's legal destinations are marked before the second click.
        wait.until(lambda d: d.find_elements("css selector", "#board .square.target"))
        targets = {int(e.get_attribute("data-square"))
                   for e in browser.find_elements("css selector", "#board .square.target")}
        assert targets == {cshogi.move_to(m) for m in board.legal_moves
                           if not cshogi.move_is_drop(m) and cshogi.move_from(m) == cshogi.move_from(move)}
        _click(browser, cshogi.move_to(move))
        played += 2
        wait.until(lambda d, n=played: d.find_element("id", "moves").get_attribute("data-count") == str(n))
        after = _state(url)
        board.push(move)
        replies = [m for m in board.legal_moves if _after(board, m) == after["sfen"].split(" ")[:3]]
        assert len(replies) == 1, "the engine's reply is not one legal move"
        moves += [move, replies[0]]
        assert "win rate" in browser.find_element("id", "engine").text
        assert browser.find_element("id", "pv").text.startswith("PV ")
        if played == 2:  # the first reply is the engine's book move, as a GUI's engine would play it
            assert cshogi.move_to_usi(replies[0]) == "3c3d"
            assert browser.find_element("id", "pv").text == "PV book: 3c3d"
            assert browser.save_screenshot(str(tmp_path / "book.png"))

    # An illegal click: a piece, then a square it cannot reach.
    state = _state(url)
    board = cshogi.Board(state["sfen"])
    source = cshogi.move_from(next(m for m in board.legal_moves if not cshogi.move_is_drop(m)))
    reachable = {cshogi.move_to(m) for m in board.legal_moves
                 if not cshogi.move_is_drop(m) and cshogi.move_from(m) == source}
    wrong = next(sq for sq in range(81) if sq not in reachable and sq != source)
    _click(browser, source)
    wait.until(lambda d: d.find_elements("css selector", "#board .square.target"))
    _click(browser, wrong)
    wait.until(lambda d: d.find_element("id", "message").get_attribute("class") == "error")
    message = browser.find_element("id", "message").text
    assert "illegal move" in message and cshogi.SQUARE_NAMES[wrong] in message
    assert _state(url)["sfen"] == state["sfen"]
    assert browser.find_element("id", "moves").get_attribute("data-count") == str(played)
    assert browser.save_screenshot(str(tmp_path / "refused.png"))

    # The game lives on the server: a page opened again (a closed tab) shows it as it was.
    browser.get(url)
    wait.until(lambda d: d.find_element("id", "moves").get_attribute("data-count") == str(played))

    # The move list (in KIF, as cshogi writes each move) and a point of the graph at each of messiah's moves.
    listed = [e.text for e in browser.find_elements("css selector", "#moves > div")]
    board = cshogi.Board()
    for number, (text, move) in enumerate(zip(listed, moves, strict=True), 1):
        assert text.startswith(f"{number} ") and text.endswith(KIF.move_to_kif(move, board.peek())), text
        board.push(move)
    points = browser.find_elements("css selector", "#graph svg .point")
    assert [int(p.get_attribute("data-ply")) for p in points] == [2, 4, 6]

    # The move-score picture of the current position, beside the board.
    browser.find_element("id", "show-scores").click()
    wait.until(lambda d: d.find_elements("css selector", "#scores svg .moves"))
    arrows = browser.find_elements("css selector", "#scores svg .moves > g, #scores svg .moves > text")
    assert len(arrows) > 0
    board_box = browser.find_element("css selector", "#board svg").rect
    picture = browser.find_element("css selector", "#scores svg").rect
    assert picture["x"] >= board_box["x"] + board_box["width"]
    assert picture["y"] < board_box["y"] + board_box["height"] and board_box["y"] < picture["y"] + picture["height"]
    screenshot = tmp_path / "play.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")

    # The records behind the download links: the names and the moves played.
    for link, parse in (("kif", lambda data: KIF.Parser.parse_str(data.decode("cp932"))),
                        ("csa", lambda data: CSA.Parser.parse_str(data.decode("utf-8"))[0])):
        with urllib.request.urlopen(browser.find_element("id", link).get_attribute("href"), timeout=60) as response:
            record = parse(response.read())
        assert record.names == ["you", "messiah"] and record.moves == moves, link

    # Resigning ends the game; its annotation appears on the page: a row per side, a point per position.
    assert not browser.find_element("id", "annotate").is_displayed()
    browser.find_element("id", "resign").click()
    wait.until(lambda d: d.find_element("id", "annotate").is_displayed())
    browser.find_element("id", "annotate").click()
    wait.until(lambda d: d.find_elements("css selector", "#annotation .graph svg"))
    rows = browser.find_elements("css selector", "#annotation table:first-of-type tbody tr")
    assert [r.find_elements("tag name", "td")[1].text for r in rows] == ["you", "messiah"]
    assert len(browser.find_elements("css selector", "#annotation .graph svg .point")) == len(moves) + 1
    assert "game over: you resigned" in browser.find_element("id", "message").text
    screenshot = tmp_path / "annotated.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")


def _after(board: cshogi.Board, move: int) -> list[str]:
    """The board, side and hands of the sfen after ``move`` (the move number aside)."""
    board.push(move)
    words = board.sfen().split(" ")[:3]
    board.pop()
    return words
