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


def test_the_readme_says_what_messiah_is_and_how_to_install_it_in_its_first_ten_lines():
    """A newcomer met twelve lines of match statistics before the install command."""
    top = (ROOT / "README.md").read_text().splitlines()[:10]
    assert top[2].startswith("messiah is a shogi engine")
    assert any(line.strip().startswith("pip install . && messiah analyze ") for line in top)


def first_analysis() -> tuple[list[str], list[str]]:
    """The README's first command (``messiah analyze ...``, its words) and the lines it shows that command print, each
    as the command prints it (the sample's first lines: the rest are counted in the text below it)."""
    text = (ROOT / "README.md").read_text()
    text = text[text.index("## Install and first run"):]
    command = re.search(r"^    pip install \. && messiah (analyze .*)$", text, re.M).group(1).split()
    shown = text[text.index("\n    bestmove "):].split("\n\n")[0].strip("\n").splitlines()
    return command, [line[4:] for line in shown]


def test_the_readme_first_analysis_is_what_the_shipped_model_prints(capsys):
    """The README's sample of its first command is the shipped model's: the one-pass Q list as any run prints it, and
    the search above it as ``--nodes N`` (N the sample's nodes, in place of its --movetime) prints it again, the
    milliseconds aside. On a CPU, which runs the model's int8 copy, as the README says (an x86-64 one with AVX-512
    VNNI printed it; another CPU's integer kernels may round otherwise)."""
    from messiah.cli import main

    command, printed = first_analysis()
    assert command[:4] == ["analyze", "startpos", "moves", "7g7f"] and command[4] == "--movetime"
    text = (ROOT / "README.md").read_text()
    total = int(re.search(r"one line for each of the (\d+) legal moves", text).group(1))
    nodes = re.search(r" nodes (\d+) ", printed[0]).group(1)
    main([*command[:4], "--nodes", nodes, "--option", "Device=cpu"])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 + total
    q_list = [line for line in printed if line.startswith("  ")]
    first_q = out.index(q_list[0]) if q_list[0] in out else 2
    mine = [(line.split()[0], float(line.split()[1])) for line in out[first_q : first_q + len(q_list)]]
    theirs = [(line.split()[0], float(line.split()[1])) for line in q_list]
    # the one-pass Q list, to the last digit shown on a CPU like the sample's, within its last digit on any other
    assert [m for m, _ in mine] == [m for m, _ in theirs]
    assert all(abs(a - b) <= 2e-4 for (_, a), (_, b) in zip(mine, theirs, strict=True)), (mine, theirs)
    if mine == theirs:  # the same scores: the same tree, so the search prints the same but for the milliseconds
        without_time = re.compile(r"  \d+ ms$")
        assert without_time.sub("", out[0]) == without_time.sub("", printed[0])
        assert out[1 : len(printed)] == printed[1:]
