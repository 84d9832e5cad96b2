"""Every ``schedlab ...`` command shown in README.md and docs/*.md code blocks runs and answers: exit 0,
non-empty output, and no solve reports an infeasible instance. Commands that need what the repository
does not ship (a placeholder such as ``PATH`` or ``[--opt]``, a data file, an output folder) are
skipped, each with its reason. Fenced blocks (```bash, ```sh, ```console, ```) and indented (4-space)
blocks are read; a command is a line whose first word is ``schedlab`` (after an optional ``$ ``,
``.venv/bin/`` or ``python -m`` prefix, or after ``&&``); lines ending in ``\\`` continue it;
``# comments`` are dropped. ``solve`` and ``bench`` commands (solvers and suites run for seconds to
minutes) and commands marked with a ``# slow`` comment in the doc run under ``pytest -m slow``; the rest
in every CI run. A transcript whose shown output starts with ``error:`` documents a refusal: it must
exit 2 with one clean ``error:`` line.

Commands that write (``--out DIR``, ``--save FILE``) run with that path moved into one scratch folder per
test session; ``report``/``compare`` of a results folder read it from there (so ``bench --out X`` then
``report X`` run in doc order; a folder no documented command writes, or one whose writer did not run in
this selection, is a skip saying so). Where a doc shows a command's output (the lines after it in the
same block), every figure it quotes must be printed: each shown line, cut at ``...``, must appear in the
output (whitespace-insensitive), except measured times (``events in 0.52 s``, ``in 2.2 s``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^\s*(```|~~~)")
_PREFIX = re.compile(r"^(?:\$\s+)?(?:\S*/)?(?:\.venv/bin/)?(?:python3?\s+-m\s+)?schedlab(?:\s|$)")
_PLACEHOLDER = re.compile(r"(^|[\s=/:])([A-Z][A-Z0-9_]{2,})(?=$|[\s/,.=:\]])|\[--|\[[A-Za-z]|\.\.\.|<[a-z_]+>")
_SLOW = re.compile(r"#\s*slow\b")
_ARG_WITH_PATH = {"--trace", "--instance", "--dir", "--columns-file"}
_WRITES = {"--out", "-o", "--save"}
#: shown fragments that are measurements of this machine, not figures of the result
_MEASURED = re.compile(r"events in|\bin [\d.]+ s\b|elapsed|\d+/s\)|wall [\d.]+ s|[\d.]+ s wall")


@dataclass(frozen=True)
class DocCommand:
    doc: str           # path relative to the repository
    line: int          # 1-based line of the command's first line
    argv: tuple[str, ...]  # arguments after "schedlab"
    text: str
    skip: str | None   # why it cannot run here (None: it runs)
    slow: bool = False  # `solve`/`bench`, or a `# slow` comment on the command in the doc
    problem: str | None = None  # the command cannot even be read (e.g. unbalanced quotes)
    expect_error: bool = False  # a transcript whose shown output is an `error:` line: it must fail cleanly
    shown: tuple[str, ...] = ()  # the output the doc shows after the command (same block)

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def doc_files() -> list[Path]:
    return [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if p.is_file()]


def _code_lines(text: str):
    """``(line number, code line)`` of every line inside a fenced or indented code block."""
    fenced = False
    prev_blank = True
    in_indented = False
    for i, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            in_indented = False
            prev_blank = False
            continue
        if fenced:
            yield i, line
        elif line.startswith("    ") and (prev_blank or in_indented):
            in_indented = True
            yield i, line[4:]
        elif line.strip():
            in_indented = False
        prev_blank = not line.strip()


def _strip_comment(line: str) -> str:
    out, quote = [], None
    for k, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1].isspace()):
            break
        out.append(ch)
    return "".join(out).rstrip()


def _why_not(argv: list[str], text: str, root: Path) -> str | None:
    m = _PLACEHOLDER.search(text)
    if m:
        return f"placeholder {m.group(0).strip()!r}"
    for k, a in enumerate(argv):
        name, _, val = a.partition("=")
        value = val if val else (argv[k + 1] if k + 1 < len(argv) else "")
        if name in _ARG_WITH_PATH and value and not (root / value).exists():
            return f"needs {value!r}, which is not in the repository"
    if argv[:1] == ["bench"] and len(argv) > 1 and not argv[1].startswith("-"):
        from schedlab.benchmarks.harness.suites import SUITES

        if argv[1] not in SUITES and not (root / argv[1]).exists():
            return f"needs the suite {argv[1]!r}: not registered here (a plugin's) nor a file in the repository"
    return None


def results_dirs(argv: tuple[str, ...]) -> list[int]:
    """Indices of the results folders ``report``/``compare`` read (positional arguments)."""
    if argv[:1] not in (("report",), ("compare",)):
        return []
    out, skip_next = [], False
    for k, a in enumerate(argv[1:], start=1):
        if skip_next:
            skip_next = False
        elif a.startswith("-"):
            skip_next = "=" not in a and a in ("--out", "--format")
        else:
            out.append(k)
    return out


def in_workspace(argv: tuple[str, ...], workspace: Path) -> tuple[list[str], list[str]]:
    """``argv`` with written paths and results folders moved into ``workspace``; and the folders read
    that are not there (their writer did not run)."""
    args = list(argv)
    missing = []
    for k, a in enumerate(args):
        name, eq, val = a.partition("=")
        if name in _WRITES and eq:
            args[k] = f"{name}={workspace / val}"
        elif k > 0 and args[k - 1] in _WRITES and not a.startswith("-"):
            args[k] = str(workspace / a)
    for k in results_dirs(argv):
        moved = workspace / argv[k]
        if not moved.exists():
            missing.append(argv[k])
        args[k] = str(moved)
    return args, missing


def figures_missing(shown: tuple[str, ...], printed: str) -> list[str]:
    """The fragments of ``shown`` (lines cut at ``...``) not in ``printed``, whitespace-insensitive;
    measured times are not compared."""
    text = " ".join(printed.split())
    out = []
    for line in shown:
        for frag in re.split(r"\.\.\.|\u2026", line):
            frag = " ".join(frag.split()).strip(" ,;")
            if len(frag) < 6 or _MEASURED.search(frag):
                continue
            if frag not in text:
                out.append(frag)
    return out


def extract(path: Path, root: Path = ROOT) -> list[DocCommand]:
    rel = str(path.relative_to(root))
    lines = list(_code_lines(path.read_text(encoding="utf-8")))
    shown = {i: line.strip() for i, line in lines}
    out: list[DocCommand] = []
    pending: list[str] = []
    start, slow = 0, False

    def done(text: str, last: int) -> None:
        cmd = _command(rel, start, text, root, slow)
        if shown.get(last + 1, "").startswith("error:"):  # the doc shows it failing
            cmd = replace(cmd, expect_error=True)
        follow = []
        for k in range(last + 1, last + 200):  # the output shown under it: up to the next command or gap
            line = shown.get(k)
            if not line or _PREFIX.match(line) or line.startswith(("#", "$")):
                break
            follow.append(line)
        if follow and text.lstrip().startswith("$"):  # only transcripts ("$ schedlab ...") show output
            cmd = replace(cmd, shown=tuple(follow))
        out.append(cmd)

    for i, raw in lines:
        line = _strip_comment(raw)
        marked = bool(_SLOW.search(raw[len(line):]))
        if pending:
            slow = slow or marked
            pending.append(line.strip().rstrip("\\").strip())
            if not line.endswith("\\"):
                done(" ".join(pending), i)
                pending = []
            continue
        for part in line.split("&&"):
            seg = part.strip()
            if _PREFIX.match(seg):
                start, slow = i, marked
                if seg.endswith("\\"):
                    pending = [seg.rstrip("\\").strip()]
                else:
                    done(seg, i)
    if pending:
        done(" ".join(pending), lines[-1][0])
    return out


def _command(doc: str, line: int, text: str, root: Path, slow: bool = False) -> DocCommand:
    try:
        words = shlex.split(text)
    except ValueError as e:
        return DocCommand(doc, line, (), text, None, slow, f"cannot split the command: {e}")
    k = next(k for k, w in enumerate(words) if w.endswith("schedlab"))
    argv = words[k + 1:]
    return DocCommand(doc, line, tuple(argv), text, _why_not(argv, text, root), slow or argv[:1] in (["solve"], ["bench"]))


def all_commands() -> list[DocCommand]:
    return [c for p in doc_files() for c in extract(p)]


def _params():
    out = []
    for c in all_commands():
        marks = []
        if c.skip:
            marks.append(pytest.mark.skip(reason=f"{c.id}: {c.skip}"))
        elif c.slow:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@pytest.fixture(scope="session")
def workspace(tmp_path_factory) -> Path:
    """Where documented commands write (``--out``, ``--save``) and from where ``report``/``compare`` read."""
    return tmp_path_factory.mktemp("doc-workspace")


@pytest.mark.parametrize("command", _params())
def test_documented_command_runs(cli, command, workspace):
    where = f"{command.doc}, line {command.line}: `{command.text}`"
    assert command.problem is None, f"{where}: {command.problem}"
    argv, missing = in_workspace(command.argv, workspace)
    if missing:
        pytest.skip(f"{command.id}: reads the results folder {missing[0]!r}, which no documented command run here "
                    "wrote")
    r = cli(*argv)
    if command.expect_error:  # shown failing: one clean error line, as the doc shows
        errors = [line for line in r.err.splitlines() if line.startswith("error:")]
        assert r.code == 2 and len(errors) == 1 and "Traceback" not in r.err, f"{where}: {r}"
        return
    assert r.code == 0, f"{where} exited {r.code}: {r.err.strip()[-500:]}"
    assert r.out.strip(), f"{where} printed nothing"
    if command.argv[:1] == ("solve",):
        assert "infeasible" not in r.out.lower(), f"{where} reports an infeasible instance:\n{r.out[-500:]}"
    lost = figures_missing(command.shown, r.out + "\n" + r.err)
    assert not lost, f"{where}: the doc shows figures the command does not print: {lost}"


def test_the_docs_show_commands():
    cmds = all_commands()
    assert any(c.doc == "README.md" and not c.skip for c in cmds), "README.md shows no runnable schedlab command"


SAMPLE = """Intro `schedlab inline` is prose.

```bash
$ schedlab list policies   # a comment
.venv/bin/schedlab topology dally-8 \\
    --format json
python3 -m venv .venv && .venv/bin/schedlab list
schedlab simulate --trace PATH/x.csv
schedlab simulate -w smoke   # slow: a long one
schedlab topology "unbalanced
$ schedlab topology nope
error: nope: not a preset
```

    schedlab solve --instance missing.json --method joint

text
```
schedlab topology NAME_OR_FILE [--format json]
```
"""


def test_extractor(tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text(SAMPLE)
    got = [(c.line, c.argv, c.skip is None, c.slow, c.problem is None) for c in extract(doc, tmp_path)]
    assert [c.expect_error for c in extract(doc, tmp_path)] == [False] * 6 + [True, False, False]
    assert got == [
        (4, ("list", "policies"), True, False, True),
        (5, ("topology", "dally-8", "--format", "json"), True, False, True),
        (7, ("list",), True, False, True),
        (8, ("simulate", "--trace", "PATH/x.csv"), False, False, True),
        (9, ("simulate", "-w", "smoke"), True, True, True),
        (10, (), True, False, False),
        (11, ("topology", "nope"), True, False, True),
        (15, ("solve", "--instance", "missing.json", "--method", "joint"), False, True, True),
        (19, ("topology", "NAME_OR_FILE", "[--format", "json]"), False, False, True),
    ]


def test_written_paths_move_into_the_workspace(tmp_path):
    args, missing = in_workspace(("bench", "gap", "--out", "results/gap", "-j", "2"), tmp_path)
    assert args == ["bench", "gap", "--out", str(tmp_path / "results/gap"), "-j", "2"] and not missing
    args, missing = in_workspace(("compare", "a", "b", "--out", "c.csv"), tmp_path)
    assert args[1:3] == [str(tmp_path / "a"), str(tmp_path / "b")] and missing == ["a", "b"]
    assert args[4] == str(tmp_path / "c.csv")
    (tmp_path / "r").mkdir()
    assert in_workspace(("report", "r", "--format", "json"), tmp_path) == (
        ["report", str(tmp_path / "r"), "--format", "json"], [])


def test_quoted_figures_must_be_printed():
    shown = ("  span 4.41 h (arrivals over 1.33 h), 131.3 GPU-hours",
             "  fifo  avg JCT 1.22 h  median 1.07 h  ...",
             "                 48 events in 0.52 s (92/s)")
    printed = "trace x\n  span 4.41 h (arrivals over 1.33 h), 131.3 GPU-hours\n  fifo avg JCT 1.22 h median 1.07 h P95\n" \
              "  48 events in 0.01 s (3,809/s)"
    assert figures_missing(shown, printed) == []  # whitespace-insensitive, cut at "...", times not compared
    assert figures_missing(shown, printed.replace("1.22 h", "1.25 h")) == ["fifo avg JCT 1.22 h median 1.07 h"]


def test_transcripts_carry_their_shown_output(tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text("```\n$ schedlab list suites\nsuites (2):\n  quick\n\n$ schedlab list policies\n```\n")
    a, b = extract(doc, tmp_path)
    assert a.shown == ("suites (2):", "quick") and b.shown == ()
