"""The README is a user's guide: its option table must say exactly what the engine advertises."""

import re
from pathlib import Path

from messiah.engine.usi import UsiEngine

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| `(\w+)` \| `?([^|`]*?)`? \| ")


def advertised() -> dict[str, str]:
    """What ``usi`` declares: option name -> its default as written on the option line."""
    lines: list[str] = []
    UsiEngine(lines.append).handle("usi")
    options = {}
    for line in lines:
        words = line.split()
        if words[:2] == ["option", "name"]:
            options[words[2]] = words[words.index("default") + 1]
    return options


def test_the_readme_option_table_lists_every_option_with_its_default():
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Options"):].split("\n\n")[1]
    rows = dict(ROW.match(line).groups() for line in table.splitlines()[2:])
    engine = advertised()
    assert len(engine) > 15
    assert rows == engine


def test_one_version_everywhere():
    """pyproject's version is what ``id name`` says, what the README tells a GUI user to look for, and a
    CHANGELOG section."""
    from messiah import __version__
    from messiah.engine.usi import ENGINE_NAME

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert __version__ == version
    lines: list[str] = []
    UsiEngine(lines.append).handle("usi")
    assert lines[0] == f"id name messiah {version}" == f"id name {ENGINE_NAME}"
    assert f'lists it as "messiah {version}"' in (ROOT / "README.md").read_text()
    assert re.search(rf"^## {re.escape(version)}\b", (ROOT / "CHANGELOG.md").read_text(), re.M)
