"""Every relative link in the project's Markdown points at a file that exists and, where it names a
``#section``, at a heading of that file, by GitHub's anchor rule."""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "CHANGELOG.md", "NOTICE.md", "tests/data/README.md",
         *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target); the target stops at whitespace (an optional "title" may follow).
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:, ...


def prose_lines(text: str):
    """(line number, line) of the text outside fenced and indented code blocks."""
    fenced = False
    previous_blank = True
    in_indented = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        blank = not line.strip()
        if line.startswith(("    ", "\t")) and (previous_blank or in_indented) and not blank:
            in_indented = True  # an indented code block starts after a blank line (a list's continuation does not)
            previous_blank = False
            continue
        if not blank:
            in_indented = False
        previous_blank = blank
        yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: the rendered text lowercased, punctuation other than '-' and
    '_' removed, each space a '-'."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "-_ " or category[0] in "LN" or category in ("Mn", "Mc"):
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every section anchor of a Markdown page; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(text):
        found.update(HTML_ANCHOR.findall(line))
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(text: str):
    """(line number, target) of every link in the prose, code spans left out."""
    for number, line in prose_lines(text):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            yield number, target


def broken_links(page: Path) -> list[str]:
    """What is wrong with the relative links of one Markdown file: 'file:line: target: why' each."""
    problems = []
    text = page.read_text(encoding="utf-8")
    for number, target in links(text):
        if EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            problems.append(f"{page.name}:{number}: {target}: no such file")
            continue
        if anchor and where.is_file() and where.suffix == ".md":
            if anchor not in anchors(where.read_text(encoding="utf-8")):
                problems.append(f"{page.name}:{number}: {target}: no section #{anchor} in {where.name}")
        elif anchor and where.is_file():
            problems.append(f"{page.name}:{number}: {target}: an anchor into a file that is not Markdown")
    return problems


MENTION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b")
WRITTEN_BY_TOOLS = {"ladder.md"}  # files a command writes (messiah ladder's report), not pages of the repository


def missing_pages(page: Path) -> list[str]:
    """Markdown files a page names in its text (not only in links) that are neither beside it nor at that
    path in the repository: 'file:line: name' each."""
    problems = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        for name in MENTION.findall(line):
            if name in WRITTEN_BY_TOOLS:
                continue
            if not ((page.parent / name).exists() or (ROOT / name).exists()):
                problems.append(f"{page.name}:{number}: {name}")
    return problems


@pytest.mark.parametrize("page", PAGES)
def test_every_markdown_file_a_page_names_exists(page):
    """A page that cites another by name (METHOD.md, say) cites one a reader of the repository has."""
    assert missing_pages(ROOT / page) == []


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_points_at_a_file_and_a_section_that_exist(page):
    assert (ROOT / page).exists(), page
    assert broken_links(ROOT / page) == []


def test_the_pages_link_to_each_other():
    """The check reads links at all: README's links to docs/ are found."""
    targets = [target for _, target in links((ROOT / "README.md").read_text())]
    assert "docs/method.md" in targets
    assert any("#" in target for target in targets)


def test_github_anchor_rule():
    text = "\n".join([
        "# The method", "## 1. One forward pass scores every legal move", "## Data ($MESSIAH_DATA)",
        "## `messiah rl`: self-play", "## Threads: root-parallel processes", "## Notes", "## Notes",
        "    ## not a heading (code)", "```", "## nor this", "```", "## [Linked](x.md) heading",
        "## 勝率 and Elo", "## Q, PUCT & UCB1", "## snake_case stays",
    ])
    assert anchors(text) == {
        "the-method", "1-one-forward-pass-scores-every-legal-move", "data-messiah_data",
        "messiah-rl-self-play", "threads-root-parallel-processes", "notes", "notes-1",
        "linked-heading", "勝率-and-elo", "q-puct--ucb1", "snake_case-stays",
    }


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A section\n")
    (tmp_path / "sub").mkdir()
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "# Page", "",
        "[fine](other.md) and [fine too](other.md#a-section), [here](#page), [web](https://example.com/x.md)",
        "[a folder](sub/) and `[in code](missing.md)`", "",
        "    [indented code](missing.md)", "",
        "[gone](missing.md)", "[no such section](other.md#no-section)", "[nor here](#nowhere)",
        "- a list item [wrong path](docs/other.md)",
    ]))
    assert broken_links(page) == [
        "page.md:8: missing.md: no such file",
        "page.md:9: other.md#no-section: no section #no-section in other.md",
        "page.md:10: #nowhere: no section #nowhere in page.md",
        "page.md:11: docs/other.md: no such file",
    ]
    # a name in code counts too: a page cites files by name in backticks as often as by link
    assert missing_pages(page) == ["page.md:4: missing.md", "page.md:6: missing.md", "page.md:8: missing.md",
                                   "page.md:11: docs/other.md"]
