"""Writing a target's intent: from the rule's wordings (`TemplateWriter`), or by a model's samples
held to `{"intent", "difficulty"}` (`synthesis.model_intents`), checked and ranked here.

A model's sample is dropped, and counted, when it is not that JSON (`invalid_json`), when the
intent quotes the search (`quotes_pattern`: the pattern, a metavariable or the regex: an intent
must say what to find, not how), when it names the tool's flags or syntax (`gives_call_away`:
"whole word", ".rst files", "case-insensitive") or when it is too short to be one (`empty`). The
rule templates' own wordings are held to the same test (`tests/synthesis/test_wordings.py`). Among the samples
left, the best names the target's subject (what the findings have in common) and reads like a
request of ordinary length.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from codesearch_core.models import Difficulty, sha256_hex
from codesearch_core.synthesis.mine import Target

MIN_INTENT_CHARS: Final = 12
MAX_INTENT_CHARS: Final = 300
_METAVARIABLE: Final = re.compile(r"\$\$?\$?[A-Z_][A-Z0-9_]*")
#: Regex syntax no request in plain words has.
_REGEX_BITS: Final = re.compile(r"\\[bdswSW]|\(\?[:=!<i]|\[\^|\.\*|\\\(")
#: Words that name a search tool's flags or syntax rather than what to find (`-w` is "whole
#: word", `-g '*.rst'` is ".rst files", `-i` is "case-insensitive"): an intent that says them
#: hands the model its call, and the item teaches a transliteration (issue 36: a fifth of a data
#: set was such items).
FLAG_TALK: Final = re.compile(
    r"(?i)\bwhole[- ]words?\b|\bword[- ]boundar|\bregex|\bregular expression|\bglob"
    r"|\bfixed[- ]strings?\b|\bcase[- ]?(?:in)?sensitiv|\bignor(?:e|ing)[- ]case\b|\bpcre"
    r"|\blook-?(?:ahead|behind)|\bback-?reference|\bast-grep\b|\bripgrep\b|\brg\b"
    r"|\bby extension\b|\bmetavariable|(?:^|[\s(,/])\*?\.[a-z]{1,10}\b(?!\.)(?=[\s),/]|$)"
    r"|(?:^|\s)--?[a-z][\w-]*\b"
)

INTENT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "intent": {"type": "string", "minLength": MIN_INTENT_CHARS, "maxLength": MAX_INTENT_CHARS},
        "difficulty": {"type": "string", "enum": [d.value for d in Difficulty]},
    },
    "required": ["intent", "difficulty"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class WrittenIntent:
    """A target's chosen intent (None when every sample was dropped) and how it was made."""

    intent: str | None
    difficulty: Difficulty
    prompt: str = ""
    samples: tuple[str, ...] = ()
    dropped: Mapping[str, int] = field(default_factory=dict)


class IntentWriter(Protocol):
    """Writes the intents of a batch of targets (a model: all of them in one generate call)."""

    @property
    def engine(self) -> str: ...

    @property
    def model(self) -> str: ...

    def write(self, targets: Sequence[Target], *, seed: int) -> list[WrittenIntent]: ...


class TemplateWriter:
    """No model: each intent is one of its rule's wordings, picked by the seed and the target, so
    a run is reproducible and neighbouring drafts are not all worded alike."""

    engine = "templates"
    model = ""

    def write(self, targets: Sequence[Target], *, seed: int) -> list[WrittenIntent]:
        out = []
        for target in targets:
            rng = random.Random(sha256_hex(f"{seed}\n{target.corpus}\n{target.key}"))
            wording = rng.choice(target.template.intents)
            out.append(
                WrittenIntent(
                    wording.format(**target.wording),
                    target.template.difficulty,
                    prompt=f"template:{target.template.id}",
                    samples=(wording,),
                )
            )
        return out


def quotes_pattern(intent: str, target: Target) -> bool:
    """The intent gives the search away: the call's pattern text, a metavariable, regex syntax."""
    args = target.call.arguments
    patterns = [str(args["pattern"])] if "pattern" in args else []
    if "rule" in args:
        patterns += re.findall(r'"(?:pattern|regex)":\s*"((?:[^"\\]|\\.)*)"', json.dumps(args))
    if _METAVARIABLE.search(intent) or _REGEX_BITS.search(intent):
        return True
    return any(len(p) >= 6 and p in intent for p in patterns)


def gives_call_away(intent: str) -> bool:
    """The intent names the tool's flags or syntax (`FLAG_TALK`): what to type, not what to find."""
    return FLAG_TALK.search(intent) is not None


def check_sample(raw: str, target: Target) -> tuple[tuple[str, Difficulty] | None, str]:
    """((intent, difficulty), "") for a usable sample; (None, why) otherwise."""
    try:
        # strict=False: a raw control character in a string is the model's slip, not bad JSON;
        # it is dropped from the intent below.
        value = json.loads(raw, strict=False)
        intent, difficulty = value["intent"], Difficulty(value["difficulty"])
        if not isinstance(intent, str):
            raise TypeError("intent is not a string")
    except (ValueError, TypeError, KeyError):
        return None, "invalid_json"
    intent = " ".join("".join(c for c in intent if c.isprintable() or c.isspace()).split())
    if len(intent) < MIN_INTENT_CHARS or not any(c.isalpha() for c in intent):
        return None, "empty"
    if quotes_pattern(intent, target):
        return None, "quotes_pattern"
    if gives_call_away(intent):
        return None, "gives_call_away"
    return (intent[:MAX_INTENT_CHARS], difficulty), ""


def rank(intent: str, target: Target) -> tuple[int, int]:
    """Higher is better: names the subject, then closeness to a usual request's length."""
    names = bool(target.subject) and target.subject.casefold() in intent.casefold()
    return int(names), -abs(len(intent) - 70)


def choose(samples: Sequence[str], target: Target, prompt: str) -> WrittenIntent:
    """The best usable sample of a target's, with the dropped ones counted by reason."""
    dropped: Counter[str] = Counter()
    usable: list[tuple[str, Difficulty]] = []
    for raw in samples:
        checked, why = check_sample(raw, target)
        if checked is None:
            dropped[why] += 1
        else:
            usable.append(checked)
    if not usable:
        return WrittenIntent(None, target.template.difficulty, prompt, tuple(samples), dropped)
    intent, difficulty = max(usable, key=lambda u: rank(u[0], target))
    return WrittenIntent(intent, difficulty, prompt, tuple(samples), dropped)
