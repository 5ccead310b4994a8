"""Fitting a long log into the model's context budget
(docs/log-format.md#fitting-the-context-budget).

`build_prompt` makes the prompt text (a JSON array) of at most `budget` tokens of a counter;
the caller keeps room for the fixed system message, the tool schemas and the answer. When the
whole log fits, the text is exactly `ContextLog.prompt_text()`. Otherwise long texts (user
text, system content, postMessage text) are cut to a head and a marker naming
`expandEntry(index=K)`, except in entry 0, pinned and exempt entries; and the oldest other
entries are left out, each omitted range replaced in place by a note object. Entry 0 and pinned
entries keep their places; a tool call and the system entry right after it (its result) go
together; the newest unit stays. The cut is the first candidate after which the rest fits;
candidates are where the droppable entries' cumulative tokens cross a multiple of the chunk,
a function of old entries, which never change. So the cut (and the prompt's prefix, and the
provider's cache) stays put as the log grows until the rest outgrows the budget, then moves
forward by about a chunk. If nothing fits, pinned and exempt entries are cut too; then
`BudgetError`. The pieces themselves (whole, cut, notes) come from `context/prompt_pieces.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import accumulate

from context.entry import Entry
from context.memory import is_memory_entry
from context.prompt_pieces import PromptCache, omission_note
from context.tokens import TokenCounter

EntryTest = Callable[[Entry], bool] | Collection[int] | None


@dataclass(frozen=True, slots=True)
class BuiltPrompt:
    """The prompt text, its token count, and what was left out or shortened in it."""

    text: str
    tokens: int  # exact, or an upper bound when PromptBuilder extended the last prompt
    omitted: tuple[tuple[int, int], ...] = ()  # inclusive index ranges left out
    shortened: tuple[int, ...] = ()  # indexes of entries shown with their text cut


INSTRUCTIONS_PREFIX = "Instructions:"


def carries_instructions(entry: Entry) -> bool:
    """A system entry that instructs the model (besides entry 0), or the channel's memory entry
    (docs/log-format.md#channel-memory): kept in place like entry 0, whatever is pruned."""
    if entry.role != "system":
        return False
    text = str(entry.content)
    return text.startswith(INSTRUCTIONS_PREFIX) or is_memory_entry(text)


class BudgetError(ValueError):
    """Even entry 0, the pinned entries and the newest unit, all shortened, exceed the budget."""


def _test(spec: EntryTest) -> Callable[[Entry], bool]:
    if spec is None or callable(spec):
        return spec or (lambda _: False)
    indexes = frozenset(spec)
    return lambda entry: entry.index in indexes


def build_prompt(
    entries: Sequence[Entry],
    budget: int,
    counter: TokenCounter,
    *,
    pinned: EntryTest = None,
    exempt: EntryTest = None,
    head_chars: int = 2000,
    chunk_tokens: int | None = None,
    cache: PromptCache | None = None,
) -> BuiltPrompt:
    """The prompt text for `entries` (a whole log) within `budget` tokens of `counter`.

    `pinned`: entries kept whatever their age (entry 0 always is), as a predicate or indexes.
    `exempt`: entries not shortened unless nothing else fits (e.g. the result of expandEntry
    in the current run), but left out like any other when old.
    """
    if not entries or entries[0].index != 0 or entries[-1].index != len(entries) - 1:
        raise ValueError("build_prompt needs a whole log: entries indexed 0, 1, 2, ...")
    if budget < 1 or head_chars < 1:
        raise ValueError("budget and head_chars must be positive")
    cache = cache if cache is not None else PromptCache()
    forms = [cache.forms(entry, head_chars) for entry in entries]
    jsons = [whole for whole, _ in forms]
    if 1 + sum(cache.tokens(counter, j) + 1 for j in jsons) <= budget + budget // 4:
        text = "[" + ",".join(jsons) + "]"
        tokens = counter.count(text)
        if tokens <= budget:
            return BuiltPrompt(text, tokens)
    plan = _Plan(entries, forms, budget, counter, cache, _test(pinned), _test(exempt))
    for level in (1, 2):
        built = plan.fit(level, chunk_tokens)
        if built is not None:
            return built
    raise BudgetError(
        f"the prompt cannot fit {budget} tokens: entry 0, the pinned entries and the newest "
        f"entries need {plan.least} even with their texts cut to {head_chars} characters"
    )


class PromptBuilder:
    """`build_prompt` step after step on one growing log, at the cost of the new entries.

    While the last prompt plus the new entries stays within the budget, the next prompt is
    the last one extended (so the cut, and the provider's cache, stay put); only when it does
    not is the whole log planned again by `build_prompt`. The extended prompt's token count is
    an upper bound: the last count plus each new piece's count and one for its comma (joining
    pieces never costs more than counting them apart: BPE and the estimate split at the same
    punctuation; tests/context/test_budget.py checks it on random logs for every counter).
    """

    def __init__(
        self,
        budget: int,
        counter: TokenCounter,
        *,
        pinned: EntryTest = None,
        head_chars: int = 2000,
        chunk_tokens: int | None = None,
    ) -> None:
        self.budget, self.counter, self.head_chars = budget, counter, head_chars
        self.chunk_tokens = chunk_tokens
        self.pinned, self._is_pinned = pinned, _test(pinned)
        self.cache = PromptCache()
        self._last: BuiltPrompt | None = None
        self._parts: list[str] = []  # the last prompt's text without its closing "]"
        self._through = -1  # the last index it holds

    def build(self, entries: Sequence[Entry], exempt: EntryTest = None) -> BuiltPrompt:
        """The prompt for `entries`, the log as it is now (it must extend the last one's)."""
        extended = self._extend(entries, _test(exempt))
        if extended is not None:
            return extended
        built = build_prompt(
            entries,
            self.budget,
            self.counter,
            pinned=self.pinned,
            exempt=exempt,
            head_chars=self.head_chars,
            chunk_tokens=self.chunk_tokens,
            cache=self.cache,
        )
        self._last, self._parts, self._through = built, [built.text[:-1]], len(entries) - 1
        return built

    def _extend(
        self, entries: Sequence[Entry], is_exempt: Callable[[Entry], bool]
    ) -> BuiltPrompt | None:
        last = self._last
        if last is None or len(entries) <= self._through:
            return None
        pruned = bool(last.omitted or last.shortened)
        pieces, shortened = [], list(last.shortened)
        for entry in entries[self._through + 1 :]:
            whole, short = self.cache.forms(entry, self.head_chars)
            # As build_prompt shows it: whole while nothing is pruned, else cut when long.
            if pruned and short is not None and not (self._is_pinned(entry) or is_exempt(entry)):
                pieces.append(short)
                shortened.append(entry.index)
            else:
                pieces.append(whole)
        tokens = last.tokens + sum(self.cache.tokens(self.counter, p) + 1 for p in pieces)
        if tokens > self.budget:
            return None
        for piece in pieces:
            self._parts += (",", piece)
        self._parts.append("]")
        text = "".join(self._parts)
        self._parts.pop()
        self._last = BuiltPrompt(text, tokens, last.omitted, tuple(shortened))
        self._through = len(entries) - 1
        return self._last


@dataclass
class _Plan:
    """One build in pruned form: the units, their shown forms and sizes, the cut."""

    entries: Sequence[Entry]
    forms: list[tuple[str, str | None]]  # canonical and shortened JSON, by index
    budget: int
    counter: TokenCounter
    cache: PromptCache
    is_pinned: Callable[[Entry], bool]
    is_exempt: Callable[[Entry], bool]
    least: int = 0  # what the prompt needs at the least, for the error message

    def __post_init__(self) -> None:
        # Entry 0 alone, then each entry alone, but a tool call with the system entry after it.
        entries, self.units, start = self.entries, [range(0, 1)], 1
        while start < len(entries):
            pair = entries[start].role == "assistant" and start + 1 < len(entries)
            stop = start + (2 if pair and entries[start + 1].role == "system" else 1)
            self.units.append(range(start, stop))
            start = stop
        self.pinned = [
            u.start == 0 or any(self.is_pinned(self.entries[i]) for i in u) for u in self.units
        ]

    def _size(self, pieces: list[str]) -> int:
        return sum(self.cache.tokens(self.counter, piece) + 1 for piece in pieces)

    def _shown(self, unit: int, level: int) -> list[str]:
        shown = []
        for entry in (self.entries[i] for i in self.units[unit]):
            whole, short = self.forms[entry.index]
            # Pinned and exempt entries are cut only as a last resort (level 2).
            kept = entry.index == 0 or self.is_pinned(entry) or self.is_exempt(entry)
            shown.append(whole if kept and level < 2 else short or whole)
        return shown

    def fit(self, level: int, chunk_tokens: int | None) -> BuiltPrompt | None:
        units = self.units
        shown = [self._shown(u, level) for u in range(len(units))]
        droppable = [u for u in range(len(units) - 1) if not self.pinned[u]]  # never the newest
        fixed = 1 + sum(self._size(shown[u]) for u in set(range(len(units))) - set(droppable))
        # rest[k]: the tokens of the droppable units from the k-th on; runs[k]: the omitted
        # ranges when k are left out (a pinned unit between two dropped ones starts a new one).
        rest = [*accumulate((self._size(shown[u]) for u in reversed(droppable)), initial=0)][::-1]
        starts = (
            k == 0 or units[droppable[k - 1]].stop != units[u].start
            for k, u in enumerate(droppable)
        )
        runs = [*accumulate(starts, initial=0)]
        note = self._size([omission_note(len(units), len(self.entries))]) + 2  # a bound, to plan
        self.least = fixed + runs[-1] * note
        for cut in self._candidates(droppable, chunk_tokens):
            if fixed + rest[cut] + runs[cut] * note <= self.budget:
                built = self._build(shown, droppable[:cut])
                if built.tokens <= self.budget:
                    return built
        return None

    def _candidates(self, droppable: list[int], chunk_tokens: int | None) -> list[int]:
        """Cuts (how many droppable units to leave out) in the order to try: first those where
        the droppable units' cumulative size crosses a multiple of the chunk, then the rest.
        Sizes are of the shortened forms whatever the exemptions: a function of the old
        entries alone. The default chunk depends on entry 0 alone, which never changes."""
        if chunk_tokens is None:
            chunk_tokens = max(1, (self.budget - self._size([self.forms[0][0]])) // 2)
        boundaries, total = [0], 0
        for k, u in enumerate(droppable, start=1):
            size = self._size([self.forms[i][1] or self.forms[i][0] for i in self.units[u]])
            if (total + size) // chunk_tokens > total // chunk_tokens:
                boundaries.append(k)
            total += size
        chosen = set(boundaries)
        return boundaries + [k for k in range(len(droppable) + 1) if k not in chosen]

    def _build(self, shown: list[list[str]], dropped: list[int]) -> BuiltPrompt:
        runs: list[tuple[int, int]] = []
        for u in dropped:
            unit = self.units[u]
            if runs and runs[-1][1] == unit.start - 1:
                runs[-1] = (runs[-1][0], unit.stop - 1)
            else:
                runs.append((unit.start, unit.stop - 1))
        notes = {first: omission_note(first, last) for first, last in runs}
        gone = set(dropped)
        parts: list[str] = []
        shortened: list[int] = []
        for u, unit in enumerate(self.units):
            if unit.start in notes:
                parts.append(notes[unit.start])
            if u in gone:
                continue
            parts.extend(shown[u])
            shortened += [
                i for i, s in zip(unit, shown[u], strict=True) if s is not self.forms[i][0]
            ]
        text = "[" + ",".join(parts) + "]"
        return BuiltPrompt(text, self.counter.count(text), tuple(runs), tuple(shortened))
