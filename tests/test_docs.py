"""The README is a landing page, and docs/ holds the rest: the README stays short, names every page of
docs/, and every relative link in the README and in docs/ leads to a file (and a heading) that exists."""
import re
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_LINES = 200

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")   # [text](target "title"), not images
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _links(text: str) -> list[str]:
    """The targets of a markdown file's links, leaving out code blocks and code spans."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    return LINK.findall(prose)


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and MyST (`myst_heading_anchors`) make it."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)}


def _relative(target: str) -> bool:
    return not re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) and not target.startswith("//")


def _pages():
    return sorted(DOCS.glob("*.md"))


def test_readme_is_a_landing_page_under_200_lines():
    lines = README.read_text().splitlines()
    assert len(lines) < MAX_README_LINES, f"README.md has {len(lines)} lines: move a section into docs/"


def test_every_docs_page_the_readme_links_exists_and_every_page_is_named_there():
    readme = README.read_text()
    linked = [t.split("#")[0] for t in _links(readme) if t.startswith("docs/")]
    assert linked, "the README links no page of docs/"
    for target in linked:
        assert (ROOT / target).is_file(), f"the README links {target}, which does not exist"
    for page in _pages():
        assert f"docs/{page.name}" in readme, f"the README does not say where docs/{page.name} is"


def test_every_relative_link_in_the_readme_and_docs_resolves():
    broken = []
    for path in [README, *_pages()]:
        for target in _links(path.read_text()):
            if not _relative(target):
                continue
            file, _, anchor = urllib.parse.unquote(target).partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_link_checks_see_links_and_headings():
    """The helpers above find what they must: a link outside code, a heading's anchor."""
    text = "See [speed](docs/speed.md#the-contract-floor) and `[not](a-link.md)`.\n```\n[nor](this.md)\n```\n"
    assert _links(text) == ["docs/speed.md#the-contract-floor"]
    assert _slug("The engine, views and memory, as torch's") == "the-engine-views-and-memory-as-torchs"
    assert _slug("`make bench` and the floor") == "make-bench-and-the-floor"
    assert not _relative("https://github.com/rsokl/MyGrad") and _relative("../README.md")
