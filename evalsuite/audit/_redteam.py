r"""Generated red-team policies: cheap strategies built from the oracle's passing episodes.

The audit keeps, in memory, the call trace of every passing dev oracle episode (`_sweep.Trace`).
For each stratum it abstracts them into templates (`template_of`): a string argument that
occurs in the item's prompt and names an entity (it holds a digit or an ``@``) becomes a
*slot* (the entity's shape, a regex of its character classes such as ``P-\\d+`` or an e-mail,
and its ordinal among the prompt's distinct entities of that shape); a value found in an
earlier tool result becomes a *result reference* (the call and the JSON path it came from); an
entity-like value found in neither is *unknown* (the answer key's, e.g. an id the oracle read
off the target); free text (a reply, a note, the final answer) keeps its words with the
prompt's entities in it as slots; anything else is a constant.

For an item, its stratum's most frequent template among the *other* items (leave one out: an
item's own oracle never writes its policy) is replayed (`generated_policies`) as:

* ``blind_oracle_order``: slots filled from this item's prompt by the oracle's ordinals; calls
  needing a tool result dropped (nothing read); the most frequent texts;
* ``blind_first`` / ``blind_second`` / ``blind_last``: every slot the first / second / last
  entity of its shape;
* ``copy_oracle_order``: the oracle's ordinals, result references filled from the same place in
  this episode's results (structural copy), unknown values by the first value of their shape
  any result showed;
* ``kitchen_sink``: ``copy_oracle_order`` with every free text (and the final answer) replaced
  by all the distinct texts the stratum's other passing oracle episodes used there.

Every generated policy gets the episode redacted (`evalsuite.kit.redacted`): prompt, tools and
tool results, never the target or the metadata. See docs/design/grader-audit.md.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evalsuite.kit import Episode, Policy, ToolResult, redacted

__all__ = [
    "GENERATED",
    "REFERENCE_VARIANTS",
    "Template",
    "description_of",
    "entities",
    "generated_policies",
    "shape_of",
    "source_name",
    "template_of",
]

GENERATED = (
    "blind_oracle_order",
    "blind_first",
    "blind_second",
    "blind_last",
    "copy_oracle_order",
    "kitchen_sink",
)
"""The generated policies, played on every audited item whose stratum has a template."""

DESCRIPTIONS = {
    "blind_oracle_order": "the oracle's calls with this prompt's entities in the oracle's "
    "order, nothing read",
    "blind_first": "the oracle's calls with the first-named entity of each kind, nothing read",
    "blind_second": "the oracle's calls with the second-named entity of each kind, nothing read",
    "blind_last": "the oracle's calls with the last-named entity of each kind, nothing read",
    "copy_oracle_order": "the oracle's calls, values copied from the same place in the tool "
    "results",
    "kitchen_sink": "the oracle's calls with every text any passing oracle episode of the "
    "stratum used, at once",
}

EMAIL = r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
_ID = re.compile(r"([A-Z]{1,4})-(\d+)")
_TOKEN = re.compile(rf"{EMAIL}|[A-Za-z0-9][A-Za-z0-9._:/-]*[A-Za-z0-9]|[A-Za-z0-9]")
_TEXT_MIN = 12


def shape_of(value: str) -> str | None:
    r"""The regex of an entity's shape (None: not an entity: no digit and no ``@``).

    E-mails share one shape; ids keep their letter prefix (``P-\\d+``); anything else maps
    each run of upper-case letters, lower-case letters and digits to its class.
    """
    value = value.strip()
    if not value or not any(c.isdigit() or c == "@" for c in value) or len(value) > 60:
        return None
    if re.fullmatch(EMAIL, value):
        return EMAIL
    match = _ID.fullmatch(value)
    if match:
        return re.escape(match[1]) + r"-\d+"
    parts: list[str] = []
    for run in re.finditer(r"[A-Z]+|[a-z]+|\d+|\s+|.", value):
        text = run[0]
        if text.isdigit():
            parts.append(r"\d+")
        elif text.isupper() and text.isalpha():
            parts.append("[A-Z]+")
        elif text.islower() and text.isalpha():
            parts.append("[a-z]+")
        elif text.isspace():
            parts.append(r"\s+")
        else:
            parts.append(re.escape(text))
    return "".join(parts)


def entities(text: str, shape: str) -> list[str]:
    """The distinct entities of `shape` in `text`, in order of first mention."""
    found: list[str] = []
    pattern = rf"(?<![A-Za-z0-9]){shape}(?![A-Za-z0-9])"
    for match in re.finditer(pattern, text):
        if match[0] not in found:
            found.append(match[0])
    return found


def prompt_entities(prompt: str) -> list[str]:
    """Every entity token of the prompt (holding a digit or an ``@``), in order, distinct."""
    found: list[str] = []
    for match in _TOKEN.finditer(prompt):
        token = match[0]
        if shape_of(token) is not None and token not in found:
            found.append(token)
    return found


# ---- abstract values ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Const:
    value: Any


@dataclass(frozen=True, slots=True)
class Slot:
    shape: str
    index: int


@dataclass(frozen=True, slots=True)
class FromResult:
    call: int
    path: tuple[str | int, ...]
    shape: str | None
    exemplar: Any


@dataclass(frozen=True, slots=True)
class Unknown:
    shape: str
    exemplar: str


@dataclass(frozen=True, slots=True)
class Text:
    pieces: tuple[str | Slot, ...]


@dataclass(frozen=True, slots=True)
class Obj:
    fields: tuple[tuple[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Seq:
    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Call:
    function: str
    arguments: Obj


@dataclass(frozen=True, slots=True)
class Template:
    """One oracle episode, abstracted."""

    calls: tuple[Call, ...]
    answer: Text

    def key(self) -> Any:
        """What two episodes share when they did the same thing (texts left out)."""
        return tuple((c.function, _key(c.arguments)) for c in self.calls)

    def texts(self) -> list[tuple[tuple[int, tuple[str | int, ...]], Text]]:
        """Every free text of the calls, by (call, path), and the answer (call -1)."""
        found: list[tuple[tuple[int, tuple[str | int, ...]], Text]] = []
        for index, call in enumerate(self.calls):
            _texts(call.arguments, (index, ()), found)
        found.append(((-1, ()), self.answer))
        return found


def _key(value: Any) -> Any:
    if isinstance(value, Text):
        return "<text>"
    if isinstance(value, Unknown):
        return ("<unknown>", value.shape)
    if isinstance(value, FromResult):
        return ("<result>", value.call, value.path, value.shape)
    if isinstance(value, Obj):
        return tuple((k, _key(v)) for k, v in value.fields)
    if isinstance(value, Seq):
        return tuple(_key(v) for v in value.values)
    if isinstance(value, Const):
        return ("<const>", json.dumps(value.value, sort_keys=True, default=str))
    return value


def _texts(
    value: Any,
    where: tuple[int, tuple[str | int, ...]],
    found: list[tuple[tuple[int, tuple[str | int, ...]], Text]],
) -> None:
    if isinstance(value, Text):
        found.append((where, value))
    elif isinstance(value, Obj):
        for key, item in value.fields:
            _texts(item, (where[0], (*where[1], key)), found)
    elif isinstance(value, Seq):
        for position, item in enumerate(value.values):
            _texts(item, (where[0], (*where[1], position)), found)


Path = tuple[str | int, ...]


def _find_in(data: Any, value: Any, path: Path = ()) -> Path | None:
    if isinstance(data, dict):
        for key in sorted(data, key=str):
            found = _find_in(data[key], value, (*path, str(key)))
            if found is not None:
                return found
        return None
    if isinstance(data, list):
        for position, item in enumerate(data):
            found = _find_in(item, value, (*path, position))
            if found is not None:
                return found
        return None
    if isinstance(data, bool) or isinstance(value, bool):
        return path if data is value else None
    if data == value or (isinstance(data, str) and isinstance(value, str) and data == value):
        return path
    if isinstance(data, int | float) and isinstance(value, str):
        return path if str(data) == value else None
    return None


def _text(value: str, prompt: str) -> Text:
    """Free text with the prompt's entities in it as slots."""
    spans: list[tuple[int, int, Slot]] = []
    for token in sorted(prompt_entities(prompt), key=len, reverse=True):
        shape = shape_of(token)
        if shape is None:
            continue
        index = entities(prompt, shape).index(token) if token in entities(prompt, shape) else -1
        if index < 0:
            continue
        for match in re.finditer(re.escape(token), value):
            if not any(s < match.end() and match.start() < e for s, e, _ in spans):
                spans.append((match.start(), match.end(), Slot(shape, index)))
    pieces: list[str | Slot] = []
    cursor = 0
    for start, end, slot in sorted(spans, key=lambda s: s[0]):
        if start > cursor:
            pieces.append(value[cursor:start])
        pieces.append(slot)
        cursor = end
    if cursor < len(value):
        pieces.append(value[cursor:])
    return Text(tuple(pieces))


def _normal(value: str) -> str:
    return re.sub(r"[^0-9a-z]", "", value.lower())


def _as_written(value: str, prompt: str) -> Slot | None:
    """The slot of the prompt's entity that is `value` written another way.

    Case, spaces and punctuation aside (``ln144fu`` in the prompt for ``LN14 4FU``): the
    policy then fills in the entity as this prompt writes it.
    """
    wanted = _normal(value)
    for token in prompt_entities(prompt):
        if _normal(token) == wanted:
            shape = shape_of(token)
            if shape is not None and token in entities(prompt, shape):
                return Slot(shape, entities(prompt, shape).index(token))
    return None


def _abstract(value: Any, prompt: str, earlier: Sequence[ToolResult], *, free: bool) -> Any:
    if isinstance(value, dict):
        return Obj(
            tuple(
                (str(k), _abstract(v, prompt, earlier, free=free))
                for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
            )
        )
    if isinstance(value, list):
        return Seq(tuple(_abstract(v, prompt, earlier, free=free) for v in value))
    if isinstance(value, str):
        stripped = value.strip()
        shape = shape_of(stripped)
        if shape is not None and stripped in prompt:
            found = entities(prompt, shape)
            if stripped in found:
                return Slot(shape, found.index(stripped))
        if shape is not None:
            written = _as_written(stripped, prompt)
            if written is not None:
                return written
        if free and (" " in stripped and len(stripped) >= _TEXT_MIN):
            return _text(value, prompt)
    if isinstance(value, str) and shape_of(value) is None:
        return Const(value)  # a word, not an entity: the oracle chose it, not a tool result
    source = _from_results(value, earlier)
    if source is not None:
        return source
    if isinstance(value, str):
        return Unknown(shape_of(value) or "", value)
    return Const(value)


def _from_results(value: Any, earlier: Sequence[ToolResult]) -> FromResult | None:
    if value is None or isinstance(value, bool) or value == "":
        return None
    for index in range(len(earlier) - 1, -1, -1):
        result = earlier[index]
        if not result.ok:
            continue
        parsed = result.parsed()
        if parsed is not None:
            path = _find_in(parsed, value)
            if path is not None:
                return FromResult(index, path, None, value)
        if isinstance(value, str) and shape_of(value) is not None:
            shape = shape_of(value) or ""
            found = entities(result.text, shape)
            if value in found:
                return FromResult(index, (), shape, value)
    return None


def template_of(prompt: str, calls: Sequence[ToolResult], answer: str) -> Template:
    """The abstraction of one (passing) oracle episode; see the module doc."""
    abstract: list[Call] = []
    for index, call in enumerate(calls):
        arguments = _abstract(dict(call.arguments), prompt, calls[:index], free=True)
        abstract.append(Call(call.function, arguments if isinstance(arguments, Obj) else Obj(())))
    return Template(tuple(abstract), _text(answer, prompt))


# ---- playing a template -------------------------------------------------------------------------
Ordinal = Literal["oracle", "first", "second", "last"]


@dataclass(frozen=True, slots=True)
class _Variant:
    ordinal: Ordinal
    copy: bool
    texts: Mapping[tuple[int, tuple[str | int, ...]], str] | None = None
    """Replacement texts by (call, path) (kitchen sink); None: the template's own."""


def _fill(slot: Slot, prompt: str, ordinal: Ordinal) -> str:
    found = entities(prompt, slot.shape)
    if not found:
        return ""
    index = {"oracle": slot.index, "first": 0, "second": 1, "last": len(found) - 1}[ordinal]
    return found[min(index, len(found) - 1)]


def _render_text(text: Text, prompt: str, ordinal: Ordinal) -> str:
    return "".join(p if isinstance(p, str) else _fill(p, prompt, ordinal) for p in text.pieces)


class _Dropped(Exception):
    """The value needs a tool result the blind variant never asked for."""


def _walk(data: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        if isinstance(data, dict) and str(step) in data:
            data = data[str(step)]
        elif isinstance(data, list) and isinstance(step, int) and step < len(data):
            data = data[step]
        else:
            return None
    return data


def _render(
    value: Any,
    prompt: str,
    results: Mapping[int, ToolResult],
    variant: _Variant,
    where: tuple[int, tuple[str | int, ...]],
) -> Any:
    if isinstance(value, Const):
        return value.value
    if isinstance(value, Slot):
        return _fill(value, prompt, variant.ordinal)
    if isinstance(value, Text):
        if variant.texts is not None and where in variant.texts:
            return variant.texts[where]
        return _render_text(value, prompt, variant.ordinal)
    if isinstance(value, Obj):
        return {
            k: _render(v, prompt, results, variant, (where[0], (*where[1], k)))
            for k, v in value.fields
        }
    if isinstance(value, Seq):
        return [
            _render(v, prompt, results, variant, (where[0], (*where[1], i)))
            for i, v in enumerate(value.values)
        ]
    if isinstance(value, FromResult):
        return _copied(value, results, variant)
    if isinstance(value, Unknown):
        if variant.copy:
            for result in results.values():
                candidates = entities(result.text, value.shape) if result.ok else []
                if candidates:
                    return candidates[0]
        return value.exemplar
    return value


def _copied(value: FromResult, results: Mapping[int, ToolResult], variant: _Variant) -> Any:
    """The value at the same place of this episode's result (structural copy)."""
    if not variant.copy or value.call not in results:
        raise _Dropped
    result = results[value.call]
    if value.shape is None:
        found = _walk(result.parsed(), value.path)
        if found is not None:
            return found
    shape = value.shape or (shape_of(str(value.exemplar)) if value.exemplar else None)
    if shape is not None:
        candidates = entities(result.text, shape)
        if candidates:
            return candidates[0]
    return value.exemplar


def _play(template: Template, variant: _Variant) -> Policy:
    def policy(episode: Episode) -> str:
        seen = redacted(episode)
        results: dict[int, ToolResult] = {}
        for index, call in enumerate(template.calls):
            try:
                arguments = _render(call.arguments, seen.prompt, results, variant, (index, ()))
            except _Dropped:
                continue
            results[index] = seen.call(call.function, **arguments)
        if variant.texts is not None and (-1, ()) in variant.texts:
            return variant.texts[(-1, ())]
        return _render_text(template.answer, seen.prompt, variant.ordinal)

    return policy


def _kitchen_sink(
    chosen: Template, others: Sequence[Template], prompt: str
) -> dict[tuple[int, tuple[str | int, ...]], str]:
    """Every distinct text the other episodes used at each place of the chosen template."""
    by_place: dict[tuple[int, tuple[str | int, ...]], list[str]] = defaultdict(list)
    for template in others:
        if template.key() != chosen.key():
            continue
        for where, text in template.texts():
            rendered = _render_text(text, prompt, "oracle")
            if rendered.strip() and rendered not in by_place[where]:
                by_place[where].append(rendered)
    return {where: "\n\n".join(texts) for where, texts in by_place.items()}


def most_frequent(templates: Sequence[Template]) -> Template | None:
    """The template of the most frequent shape, with its most frequent texts (ties: first)."""
    if not templates:
        return None
    counts = Counter(t.key() for t in templates)
    top = max(counts.values())
    key = next(t.key() for t in templates if counts[t.key()] == top)
    alike = [t for t in templates if t.key() == key]
    texts = Counter(tuple(text for _, text in t.texts()) for t in alike)
    best = texts.most_common(1)[0][0]
    return next(t for t in alike if tuple(text for _, text in t.texts()) == best)


REFERENCE_VARIANTS = ("blind_oracle_order", "copy_oracle_order", "kitchen_sink")
"""The variants generated from a reference agent's passing episodes (besides the oracle's)."""


def generated_policies(
    prompt: str, others: Sequence[Template], variants: Sequence[str] = GENERATED
) -> dict[str, Policy]:
    """The generated policies of one item, from its stratum's other passing templates.

    Empty when no other item of the stratum has a passing episode of the source (nothing to
    learn from: the audit says so).
    """
    chosen = most_frequent(others)
    if chosen is None:
        return {}
    sink = _kitchen_sink(chosen, others, prompt)
    made = {
        "blind_oracle_order": _Variant("oracle", copy=False),
        "blind_first": _Variant("first", copy=False),
        "blind_second": _Variant("second", copy=False),
        "blind_last": _Variant("last", copy=False),
        "copy_oracle_order": _Variant("oracle", copy=True),
        "kitchen_sink": _Variant("oracle", copy=True, texts=sink),
    }
    return {name: _play(chosen, made[name]) for name in variants}


def source_name(variant: str, source: str) -> str:
    """A generated policy's name: the variant, and ``@<agent>`` when a reference taught it."""
    return variant if source == "oracle" else f"{variant}@{source.rsplit('/', 1)[-1]}"


def description_of(name: str) -> str:
    """What a generated policy does, in words."""
    variant, _, source = name.partition("@")
    text = DESCRIPTIONS.get(variant, variant)
    if source:
        text = text.replace("oracle", f"{source} reference agent")
    return text
