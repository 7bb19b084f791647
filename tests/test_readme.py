"""The README is a user's guide: its option table must say exactly what the engine advertises, each option's
default and range."""

import re
from pathlib import Path

from messiah.engine.usi import UsiEngine

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| `(\w+)` \| `?([^|`]*?)`? \| ([^|]*?) \| ")
# How the table writes each type's range: spin "min .. max", combo its values, check both, a filename "a file".
RANGE = {"check": "true, false", "filename": "a file", "string": "text"}


def declarations() -> dict[str, list[str]]:
    """What ``usi`` declares: option name -> the words of its option line after the name."""
    lines: list[str] = []
    UsiEngine(lines.append).handle("usi")
    return {line.split()[2]: line.split()[3:] for line in lines if line.split()[:2] == ["option", "name"]}


def advertised() -> dict[str, str]:
    """Option name -> its default as written on the option line."""
    return {name: words[words.index("default") + 1] for name, words in declarations().items()}


def declared_range(words: list[str]) -> str:
    kind = words[words.index("type") + 1]
    if kind == "spin":
        return f"{words[words.index('min') + 1]} .. {words[words.index('max') + 1]}"
    if kind == "combo":
        return ", ".join(words[i + 1] for i, word in enumerate(words) if word == "var")
    return RANGE[kind]


def table_rows() -> list[tuple[str, str, str]]:
    """(option, default, range) of each row of the README's options table."""
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Options"):].split("\n\n")[1].splitlines()
    assert table[0] == "| option | default | range | meaning |"
    return [ROW.match(line).groups() for line in table[2:]]


def test_the_readme_option_table_lists_every_option_with_its_default():
    rows = {name: default for name, default, _ in table_rows()}
    engine = advertised()
    assert len(engine) > 15
    assert rows == engine


def test_the_readme_option_table_gives_each_option_the_range_usi_declares():
    """A spin's min and max, a combo's values in their order, as ``usi`` writes them."""
    engine = declarations()
    rows = {name: written for name, _, written in table_rows()}
    assert rows == {name: declared_range(words) for name, words in engine.items()}
    assert rows["Threads"] == "1 .. 256" and rows["Search"].startswith("puct, ")


def test_the_readme_names_the_version_a_gui_lists():
    """What a GUI lists the engine as is ``id name`` (tests/test_release.py keeps the version in step)."""
    from messiah.engine.usi import ENGINE_NAME

    assert f'lists it as "{ENGINE_NAME}"' in (ROOT / "README.md").read_text()
