"""The documentation site: generated reference pages equal to the code, a short README whose map resolves,
and a strict MkDocs build whose pages load nothing from another host."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from evaluator.app import docs_reference
from evaluator.training.config.help import field_help

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
REGENERATE = f"run `{docs_reference.REGENERATE}` from the repository root"


def test_generated_pages_equal_what_the_code_generates() -> None:
    pages = docs_reference.pages()
    assert set(pages) == {Path("docs/reference") / n for n in ("cli.md", "config.md", "api.md", "openapi.json")}
    for rel, text in pages.items():
        committed = (REPO / rel).read_text(encoding="utf-8") if (REPO / rel).exists() else None
        assert committed == text, f"{rel} is out of date: {REGENERATE}"


def test_cli_page_has_every_command_and_subcommand() -> None:
    from typer.main import get_command

    from evaluator.app.cli import app

    page = docs_reference.cli_page()
    root = get_command(app)
    ctx = root.context_class(root, info_name="evaluator")
    groups = 0
    for name in root.list_commands(ctx):
        assert f"## `evaluator {name}`\n" in page
        sub = root.get_command(ctx, name)
        if hasattr(sub, "list_commands"):
            groups += 1
            sub_ctx = sub.context_class(sub, info_name=name, parent=ctx)
            for leaf in sub.list_commands(sub_ctx):
                assert f"### `evaluator {name} {leaf}`\n" in page
    assert groups >= 4  # domains, model, db, keys, fund, …: the walk went below the top level
    assert "╭" not in page and "\x1b[" not in page  # plain help text, no Rich panels or colours
    assert "Usage: evaluator fund evaluate [OPTIONS]" in page


def test_config_and_api_pages_cover_the_declarations() -> None:
    config = docs_reference.config_page()
    assert all(f"| `{name}` |" in config for name, _, _ in field_help())
    doc = docs_reference.openapi_document()
    api = docs_reference.api_page(doc)
    operations = [(m.upper(), p) for p, ops in doc["paths"].items() for m in ops]
    assert len(operations) >= 5
    for method, path in operations:
        assert f"## `{method} {path}`\n" in api
    # a hostile description cannot break the table: pipes are escaped, newlines folded
    fake = {"info": {}, "paths": {"/x": {"get": {"parameters": [
        {"name": "q", "in": "query", "description": "a | b\nc", "schema": {"type": "string"}}]}}}}
    assert "| `q` | query | string | no | a \\| b c |" in docs_reference.api_page(fake)


def test_regenerating_writes_the_committed_pages(tmp_path: Path) -> None:
    assert docs_reference.main(["--root", str(tmp_path)]) == 0
    for rel in docs_reference.pages():
        assert (tmp_path / rel).read_text(encoding="utf-8") == (REPO / rel).read_text(encoding="utf-8")
    assert not list(tmp_path.rglob("*.tmp"))


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", markdown)


def test_readme_is_short_and_its_docs_map_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count("\n") <= 300, "README.md is the newcomer's page: at most 300 lines; move the rest to docs/"
    local = [link for link in _links(text) if not link.startswith(("http://", "https://", "#"))]
    assert len([link for link in local if link.startswith("docs/")]) >= 20
    missing = [link for link in local if not (REPO / link.split("#")[0]).is_file()]
    assert not missing, f"README links to files that do not exist: {missing}"
    # every page in the site's navigation is reachable from the README's map (or the page it points at)
    nav = set(re.findall(r":\s+(\S+\.md)\s*$", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), re.M))
    mapped = {link.removeprefix("docs/").split("#")[0] for link in local}
    mapped |= {"analysts/fund-pack.md", "benchmarks.md"}  # shown on GitHub as domains/fund/… and benchmarks/…
    assert nav - mapped <= {"index.md", "researchers/korean-grammar-pack.md", "experiments.md"}


def test_readme_commands_are_the_getting_started_commands() -> None:
    fence = re.compile(r"```bash\n(python3 -m venv .venv[^\n]*)\n```")
    readme = fence.findall(README.read_text(encoding="utf-8"))
    page = fence.findall((REPO / "docs" / "getting-started.md").read_text(encoding="utf-8"))
    assert len(readme) == 2 and readme == page
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "mkdocs build --strict" in readme[1] and "mkdocs build --strict" in ci
    assert ci.index("ruff check .") < ci.index("mkdocs build --strict") < ci.index("pytest -q")


class _ExternalRefs(HTMLParser):
    """Every src/href of a script, stylesheet, font, image or frame that names a host."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.mermaid = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if "mermaid" in (values.get("class") or "").split():
            self.mermaid = True  # Material would fetch mermaid.js from a CDN for such an element
        if tag in {"script", "link", "img", "iframe", "source", "embed", "object"}:
            for key in ("src", "href", "data"):
                value = values.get(key) or ""
                if re.match(r"(?i)^(https?:)?//", value):
                    self.found.append(f"<{tag} {key}={value}>")


def test_strict_build_renders_every_page_and_loads_nothing_from_another_host(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install '.[dev]')")
    site = tmp_path / "site"
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(site)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={"PATH": str(Path(sys.executable).parent),
                                                      "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 25
    for page in pages:
        html = page.read_text(encoding="utf-8")
        parser = _ExternalRefs()
        parser.feed(html)
        assert not parser.found, f"{page.relative_to(site)} loads from another host: {parser.found}"
        assert not parser.mermaid, f"{page.relative_to(site)} has a mermaid diagram (Material loads it from a CDN)"
        assert not re.search(r"(?i)url\(\s*['\"]?(https?:)?//", html), f"{page.relative_to(site)}: remote CSS url()"
        assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html
    css = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.css"))
    assert not re.search(r"(?i)url\(\s*['\"]?(https?:)?//", css) and "@import" not in css
    # the pages rendered: the generated references, an included README and the architecture picture
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    assert "Usage: evaluator fund evaluate [OPTIONS]" in cli
    fund = (site / "analysts" / "fund-pack.html").read_text(encoding="utf-8")
    assert "Engine conventions" in fund and "--8&lt;--" not in fund and "--8<--" not in fund
    arch = (site / "architecture.html").read_text(encoding="utf-8")
    assert 'src="images/floors.svg"' in arch and (site / "images" / "floors.svg").is_file()
    assert "Trainer overhead" in (site / "benchmarks.html").read_text(encoding="utf-8") or \
        "trainer_overhead" in (site / "benchmarks.html").read_text(encoding="utf-8")
