"""The rule templates' reference calls on real code with the real ast-grep, and the text-baseline
check that keeps only targets where the structural search matters: Go package calls (the shipped
telemetry corpus), Java method annotations (ledger), classes implementing an interface (Java and
TypeScript, written here: no shipped corpus has one)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codesearch_core.synthesis import Target
from codesearch_core.synthesis.baselines import measure_baselines
from codesearch_core.synthesis.mine import MIN_MARGIN, candidates, measure


def _measured(corpus: str, rule: str) -> dict[str, tuple[Target | None, str]]:
    out: dict[str, tuple[Target | None, str]] = {}
    for c in candidates(corpus):
        if c.template.id != rule:
            continue
        target, why = measure(corpus, c)
        if target is not None:
            [(best, label)] = measure_baselines(corpus, [target])
            target = replace(target, baseline_reward=best, baseline_label=label)
            if best is not None and best > target.reference_reward - MIN_MARGIN:
                why = "baseline_close"
        out[c.subject] = (target, why)
    return out


def _kept(found: dict[str, tuple[Target | None, str]], subject: str) -> Target:
    target, why = found[subject]
    assert target is not None and why == "", (subject, why)
    return target


def test_go_package_calls_are_kept_where_the_text_search_finds_more() -> None:
    found = _measured("telemetry", "go-package-call")
    printf = _kept(found, "fmt.Printf")
    assert printf.call.arguments["rule"]["kind"] == "call_expression"
    assert {s.path for s in printf.expected} == {
        "cmd/agent/main.go", "internal/collector/collector.go", "internal/export/http.go",
    }  # fmt: skip
    assert printf.baseline_reward is not None and printf.baseline_reward < 0.75
    # os.Getenv is called twice and mentioned nowhere else: `rg -F` finds exactly the calls, so
    # the task would not need ast-grep, and it is dropped.
    assert found["os.Getenv"][1] == "baseline_close"
    # `e.Send(...)`: a method on a variable, not an imported package's function.
    assert "e.Send" not in found


def test_java_methods_with_an_annotation() -> None:
    found = _measured("ledger", "annotated-method")
    test = _kept(found, "Test")
    assert all(s.path.endswith("AccountTest.java") for s in test.expected)
    assert all(s.end_line > s.start_line for s in test.expected)  # the whole methods
    assert _kept(found, "Deprecated").baseline_label == "rg -F '@Deprecated' -t java"


JAVA = """\
package shop;

/** Unlike Runnable, a Job implements nothing itself. */
public class Job {}

class Worker extends Base implements Runnable, Comparable<Worker> {
    public void run() {}
    public int compareTo(Worker o) { return 0; }
}

final class Retry implements Runnable {
    public void run() {}
}

interface Runnable2 extends Runnable {}
"""
TS = """\
// Only a class can implement Shape; a comment that says `implements Shape` is not one.
export interface Shape { area(): number }
export class Square implements Shape {
  area() {
    return 1;
  }
}
abstract class Base implements Shape, Named<string> {
  abstract area(): number;
}
const note = "Circle implements Shape";
"""


def test_classes_implementing_an_interface(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for rel, text in {"src/Job.java": JAVA, "src/Worker2.java": JAVA, "web/shapes.ts": TS,
                      "web/more.ts": TS}.items():  # fmt: skip
        (tmp_path / "shop" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "shop" / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    found = _measured("shop", "implements")
    runnable = _kept(found, "Runnable")
    assert runnable.language == "java"
    # Worker and Retry in each file; not Job (its comment), not the interface extending it.
    assert [(s.path, s.start_line) for s in runnable.expected] == [
        ("src/Job.java", 6), ("src/Job.java", 11), ("src/Worker2.java", 6), ("src/Worker2.java", 11),
    ]  # fmt: skip
    shape = _kept(found, "Shape")
    assert [(s.path, s.start_line) for s in shape.expected] == [
        ("web/more.ts", 3), ("web/more.ts", 8), ("web/shapes.ts", 3), ("web/shapes.ts", 8),
    ]  # fmt: skip
    assert found["Comparable"][1] == "too_small" or found["Comparable"][0] is not None


UNICODE_PY = '''"""Prices for the café: the docstring's accent is not a name."""


def café(name: str) -> str:
    return f"Café {name}"  # a string and a comment: crème brûlée


class Größe:
    unit = "cm"


def plain(x: int) -> int:
    return x


def price(x: int) -> int:
    return x * 2


class Menu:
    pass
'''
UNICODE_JS = """// Übersicht: a comment with a non-ASCII letter
const größe = 3;
let naïve = true;
const label = "naïve";
function total() { return größe; }
const menu = [];
let count = 0;
function add(item) { menu.push(item); }
"""


def test_names_with_letters_outside_ascii_against_any_non_ascii_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Translated messages: the non-ASCII text most code bases have, and the decoys here.
    messages = "".join(f'MSG_{i} = "Entrée n°{i}: déjà payé"\n' for i in range(8))
    files = {"shop/prices.py": UNICODE_PY, "web/sizes.js": UNICODE_JS, "shop/messages.py": messages}
    for rel, text in files.items():
        (tmp_path / "uni" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "uni" / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    found = _measured("uni", "unicode-identifier")
    target = _kept(found, "non-ASCII identifier")
    assert target.call.arguments["pcre2"] is True
    # The declarations only: not the docstring, comments or strings, nor the uses of a name.
    assert [(s.path, s.start_line) for s in target.expected] == [
        ("shop/prices.py", 4), ("shop/prices.py", 8), ("web/sizes.js", 2), ("web/sizes.js", 3),
    ]  # fmt: skip
    assert target.baseline_reward is not None and target.baseline_reward < 0.75


DECORATED_PY = """from flask import Flask
app = Flask(__name__)


@app
def bare():
    pass


@app.route("/a")
def a():
    pass


@app.route("/b")
def b():
    pass


@app  # the bare decorator again
def again():
    pass
"""
HANDLERS_PY = """def load(path):
    try:
        return open(path).read()
    except OSError:
        pass


def parse(text):
    try:
        return int(text)
    except ValueError as err:
        raise RuntimeError("bad number") from err


def save(path):
    try:
        write(path)
    except OSError:
        self.logger.error("cannot save %s", path)


def close(handle):
    try:
        handle.close()
    except OSError:
        pass  # closed already
"""


def test_a_decorator_is_its_whole_name_and_a_handler_that_raises_is_not_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for rel, text in {"web/app.py": DECORATED_PY, "io/handlers.py": HANDLERS_PY}.items():
        (tmp_path / "py" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "py" / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    found = _measured("py", "decorated")
    # `@app` is not `@app.route(...)`: each decorator is asked for by its whole name.
    assert [s.start_line for s in _kept(found, "app").expected] == [5, 20]
    assert [s.start_line for s in _kept(found, "app.route").expected] == [10, 15]
    silent = _measured("py", "catch-silent")
    # The handlers that do nothing (`pass`); not a re-raise, not `self.logger.error`.
    assert [s.start_line for s in _kept(silent, "").expected] == [4, 25]
    logging = _measured("py", "catch-logging")
    assert found and logging[""][1] in ("too_small", "baseline_close")  # one handler logs


LOGS = """2024-06-02T07:00:00Z edge-01 INFO  agent started
2024-06-02T07:00:30Z edge-01 ERROR export failed: INFO lost
2024-06-02T07:00:45Z edge-01 INFO  retry after ERROR
[2024-06-02 07:01:00] worker.ERROR: job 7 failed
2024-06-02T07:01:15Z ERROR flush failed
"""


def test_a_log_records_level_is_its_first_level_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "agent.log").write_text(LOGS, encoding="utf-8")
    (tmp_path / "logs" / "notes.py").write_text('LEVEL = "ERROR"  # ERROR\n', encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    found = _measured("logs", "log-level")
    # After a host field too; not a level word later in a message (line 3).
    assert [s.start_line for s in _kept(found, "ERROR").expected] == [2, 5]
