"""The card of a built data set: `card.json` (what a program reads) and `README.md` (what a person
and the Hugging Face Hub read), both rendered from one dict.

It holds the recipe verbatim and its sha256, the corpora's snapshot ids, the tool versions, the
counts per stage and split, the mix (tool, rule, language, difficulty, empty answers, plans), the
intents' lexical diversity and, once a QA sample was reviewed, the estimated share of correct
items with its 95% Wilson interval. No build time: the same recipe on the same pins gives the
same card, byte for byte.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from codesearch_core.dataset.items import PLAN_TOOL, Item
from codesearch_core.synthesis import LANGUAGE_LABELS

CARD_JSON: Final = "card.json"
CARD_README: Final = "README.md"
#: How many words open an intent, for the share of the most common opening.
OPENING_WORDS: Final = 2


def _shares(counter: Counter[str], total: int) -> dict[str, dict[str, float | int]]:
    return {
        k: {"count": n, "share": round(n / total, 4) if total else 0.0}
        for k, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    }


def mix(items: Sequence[Item]) -> dict[str, Any]:
    """What the items are made of: counts and shares per tool, rule, language and difficulty, and
    how many expect nothing (empty answers) or need several steps (plans)."""
    total = len(items)
    empty = sum(1 for i in items if not i["expected"])
    plans = sum(1 for i in items if i["tool"] == PLAN_TOOL)
    return {
        "items": total,
        **{key: _shares(Counter(i[key] for i in items), total)
           for key in ("tool", "rule", "language", "difficulty", "corpus")},
        "empty_answers": {"count": empty, "share": round(empty / total, 4) if total else 0.0},
        "plans": {"count": plans, "share": round(plans / total, 4) if total else 0.0},
    }  # fmt: skip


#: The filter stage's reasons that are the mix caps (the funnel's last step), not filters.
_MIX_REASONS: Final = ("mix_",)


def funnel(
    drafted: Sequence[Item],
    verified: Sequence[Item],
    second: Mapping[str, Any],
    filtered: Mapping[str, int],
    kept: int,
) -> list[dict[str, Any]]:
    """Every stage's count, from the drafts to the items kept, with what each stage dropped and
    why: verification (the call failed or missed its own spans), the second opinion (each rule's
    checks, by reason), the filters (QA's rejections, reward, de-duplication) and the mix caps."""
    ok = sum(1 for i in verified if i["verified"]["ok"])
    second_dropped = {str(k): int(v) for k, v in second["dropped"].items()}
    after_second = ok - sum(second_dropped.values())
    filters = {
        k: v for k, v in filtered.items() if not k.startswith(_MIX_REASONS) and k != "run_failed"
    }
    caps = {k: v for k, v in filtered.items() if k.startswith(_MIX_REASONS)}
    after_filters = after_second - sum(filters.values())
    return [
        {"stage": "drafted", "items": len(drafted), "dropped": {}},
        {"stage": "verified", "items": ok, "dropped": {"run_failed": len(verified) - ok}},
        {"stage": "second opinion", "items": after_second, "dropped": second_dropped,
         "judged": int(second["judged"])},
        {"stage": "filters", "items": after_filters, "dropped": filters},
        {"stage": "kept", "items": kept, "dropped": caps},
    ]  # fmt: skip


def _funnel_lines(stages: Sequence[Mapping[str, Any]] | None) -> list[str]:
    if not stages:
        return []
    rows = ["", "## Funnel", "", "| stage | items | dropped | why |", "|---|---:|---:|---|"]
    for s in stages:
        dropped = s["dropped"]
        why = ", ".join(
            f"{k} {v}" for k, v in sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0])) if v
        )
        rows.append(f"| {s['stage']} | {s['items']} | {sum(dropped.values())} | {why or '-'} |")
    return rows


def _wording_lines(w: Mapping[str, Any] | None) -> list[str]:
    if not w:
        return []
    return [
        "",
        f"With subject and language taken out, the intents are {w['distinct']} "
        f"wordings; the ten most common make {_pct(w['top10_share'])} of the items.",
    ]


def _words(text: str) -> list[str]:
    return re.findall(r"[\w$.@`'-]+", text.casefold())


def diversity(intents: Iterable[str]) -> dict[str, Any]:
    """Lexical diversity: distinct word 2-grams over all intents (and their share of all 2-grams),
    and how often the most common openings (first words) start an intent. A few templates
    repeated show as few distinct 2-grams and one opening taking a large share."""
    bigrams: Counter[tuple[str, str]] = Counter()
    openings: Counter[str] = Counter()
    n = 0
    for text in intents:
        words = _words(text)
        n += 1
        bigrams.update(itertools.pairwise(words))
        openings[" ".join(words[:OPENING_WORDS])] += 1
    total = sum(bigrams.values())
    top = sorted(openings.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return {
        "intents": n,
        "distinct_bigrams": len(bigrams),
        "distinct_bigram_share": round(len(bigrams) / total, 4) if total else 0.0,
        "top_opening_share": round(top[0][1] / n, 4) if top else 0.0,
        "top_openings": [{"words": w, "count": c, "share": round(c / n, 4)} for w, c in top],
    }


#: How many of the most common wordings the card adds up (issue 36: no ten may make half).
TOP_WORDINGS: Final = 10


def wording(item: Mapping[str, Any]) -> str:
    """An intent with its subject and language taken out: what is left is how it is asked, so two
    items that differ only in the name they ask about read as one wording."""
    text = str(item["intent"])
    subject = str(item.get("subject") or "")
    if subject:
        text = text.replace(subject, "{subject}")
    label = LANGUAGE_LABELS.get(str(item.get("language", "")), "")
    if label:
        text = re.sub(rf"(?<!\w){re.escape(label)}(?!\w)", "{lang}", text)
    return text


def wordings(items: Sequence[Item]) -> dict[str, Any]:
    """How many wordings the intents reduce to, and the share of items the most common ten make:
    a few templates repeated show as few wordings and a large top-ten share."""
    counts = Counter(wording(i) for i in items)
    top = counts.most_common(TOP_WORDINGS)
    n = len(items)
    return {
        "distinct": len(counts),
        "top10_share": round(sum(c for _, c in top) / n, 4) if n else 0.0,
        "top": [{"wording": w, "count": c} for w, c in top[:3]],
    }


def card_json_text(card: Mapping[str, Any]) -> str:
    return json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%"


def _table(title: str, shares: Mapping[str, Mapping[str, Any]], limit: int = 12) -> list[str]:
    rows = [f"| {title} | items | share |", "|---|---:|---:|"]
    items = list(shares.items())
    rows += [f"| `{k}` | {v['count']} | {_pct(v['share'])} |" for k, v in items[:limit]]
    if len(items) > limit:
        rest = sum(v["count"] for _, v in items[limit:])
        rows.append(f"| {len(items) - limit} more | {rest} | |")
    return ["", *rows]


def _qa_lines(qa: Mapping[str, Any] | None) -> list[str]:
    if not qa:
        return ["", "No QA sample reviewed yet (`codesearch dataset sample DIR --n N --queue`, "
                    "then review it in the studio's QA queue, or `--import-verdicts FILE`)."]  # fmt: skip
    o = qa["overall"]
    weighting = qa.get("weighting", "none (sample share)")
    how = (f"each stratum weighted by its share of the data set ({_pct(o['covered'])} of it in "
           f"strata with a verdict; effective sample size {o['effective_n']})"
           if "covered" in o else "the sample's own share")  # fmt: skip
    lines = [
        "",
        f"Estimated share of wrong items: **{_pct(1 - o['share'])}** (95% interval "
        f"{_pct(1 - o['high'])} to {_pct(1 - o['low'])}); correct {_pct(o['share'])} "
        f"({_pct(o['low'])} to {_pct(o['high'])}). From {o['reviewed']} reviewed of a sample of "
        f"{qa['sampled']} ({o['correct']} correct), stratified by {', '.join(qa['stratify'])}; "
        f"{how}. Weighting: {weighting}.",
        *_queue_line(qa.get("queue")),
        "",
        "| stratum | reviewed | correct | share | 95% interval |",
        "|---|---:|---:|---:|---|",
    ]
    for name, s in qa["strata"].items():
        lines.append(f"| `{name}` | {s['reviewed']} | {s['correct']} | {_pct(s['share'])} | "
                     f"{_pct(s['low'])} to {_pct(s['high'])} |")  # fmt: skip
    if qa.get("rules"):
        lines += [
            "",
            "| rule | reviewed | wrong | error | 95% interval |",
            "|---|---:|---:|---:|---|",
        ]
        for name, r in qa["rules"].items():
            lines.append(f"| `{name}` | {r['reviewed']} | {r['wrong']} | {_pct(r['error'])} | "
                         f"{_pct(r['low'])} to {_pct(r['high'])} |")  # fmt: skip
    return lines


def _queue_line(queue: Mapping[str, Any] | None) -> list[str]:
    if not queue:
        return []
    return ["", f"QA queue of data set `{queue['dataset']}`: {queue['settled']} settled, "
                f"{queue['open']} open, {queue['conflict']} in conflict (open items and conflicts "
                "are not counted)."]  # fmt: skip


def card_markdown(card: Mapping[str, Any]) -> str:
    """The README: a YAML header with one config per export format (train and eval splits), then
    the card in prose and tables."""
    configs = []
    for fmt, files in card["exports"].items():
        configs += [f"  - config_name: {json.dumps(fmt)}", "    data_files:"]
        for split, f in files.items():
            configs += [
                f"      - split: {json.dumps(split)}",
                f"        path: {json.dumps(f['path'])}",
            ]
    header = ["---", f"license: {json.dumps(card['license'])}",
              f"pretty_name: {json.dumps(card['name'])}",
              "tags: [\"function-calling\", \"tool-use\", \"code-search\", \"ripgrep\", \"ast-grep\"]",
              *(["configs:", *configs] if configs else []), "---"]  # fmt: skip
    m, d = card["mix"], card["diversity"]
    body = [
        "",
        f"# {card['name']}",
        "",
        "Code-search tasks (an intent, the `ripgrep_search` / `ast_grep_search` call that answers "
        "it, the spans it must find), each run again with the real tools and graded before it "
        "was kept. Built by `codesearch dataset build` from the recipe below.",
        "",
        "## Splits (by corpus: no corpus is on both sides)",
        "",
        *(f"- {split}: {s['items']} items from {', '.join(s['corpora']) or '-'}"
          for split, s in card["splits"].items()),
        "",
        "## Corpora",
        "",
        *(f"- {name}: snapshot `{sid}`" for name, sid in card["corpora"].items()),
        "",
        f"Tools: {', '.join(f'{k} ({v})' for k, v in card['tools'].items())}.",
        "",
        "## Estimated correctness (QA sample)",
        *_qa_lines(card.get("qa")),
        *_funnel_lines(card.get("funnel")),
        "",
        "## Mix",
        "",
        f"{m['items']} items; empty answers {m['empty_answers']['count']} "
        f"({_pct(m['empty_answers']['share'])}), plans {m['plans']['count']} "
        f"({_pct(m['plans']['share'])}).",
        *_table("tool", m["tool"]),
        *_table("rule", m["rule"]),
        *_table("language", m["language"]),
        *_table("difficulty", m["difficulty"]),
        "",
        "## Lexical diversity of the intents",
        "",
        f"{d['distinct_bigrams']} distinct word 2-grams ({_pct(d['distinct_bigram_share'])} of "
        f"all); the most common opening takes {_pct(d['top_opening_share'])}: "
        + ", ".join(f"\"{o['words']}\" {_pct(o['share'])}" for o in d["top_openings"]) + ".",
        *_wording_lines(card.get("wordings")),
        "",
        "## How it was built",
        "",
        f"Stage counts: `{json.dumps(card['stages'], sort_keys=True)}`",
        "",
        f"Recipe `{card['recipe']['path']}`, sha256 `{card['recipe']['sha256']}`:",
        "",
        "```toml",
        card["recipe"]["text"].rstrip("\n"),
        "```",
        "",
    ]  # fmt: skip
    return "\n".join([*header, *body])
