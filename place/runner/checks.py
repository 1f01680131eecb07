"""Every configuration value checked before anything runs.

`check_config(cfg)` returns one line per problem, each naming the key, its value and what is
allowed (`experiment.k=0: must be an integer >= 1`). In order, stopping after the first stage
that finds problems (later stages need sound values):

1. mandatory keys without a value;
2. each key's own rule, read by pydantic from the key's annotation in `place.runner.config`
   (the one place bounds, sets and file rules are stated);
3. rules across keys (a Qdrant server needs a URL, Ollama needs a model tag, the GGUF's
   tokenizer must load, reply caps must fit in the context window);
4. the trajectory file's content (`place validate`);
5. the context window holds the longest prompt the run will send, plus its reply (see
   `prompt_needs` and docs/configuration.md, "Prompts must fit").

Before any of that, `place.runner.overrides.override_problems` refuses an override whose
key the schema lacks or whose group option is no file under configs/.

`configuration_markdown()` renders the reference of every key from the same schema.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Union, cast, get_args, get_origin, get_type_hints

from annotated_types import Ge, Gt, Le, Lt

from place.errors import PlaceError
from place.runner.config import Doc, Rule, run_schema

# --- problems --------------------------------------------------------------------------------


class ConfigProblems(PlaceError):
    """The configuration breaks rules; `problems` has one message per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


# --- the schema, read back from config.py ------------------------------------------------------


@dataclass(frozen=True)
class SchemaField:
    key: str
    """Dotted key, e.g. experiment.k."""
    type: type
    optional: bool
    default: Any
    bounds: tuple[Any, ...]
    rules: tuple[Rule, ...]
    doc: str

    @property
    def numeric(self) -> bool:
        return self.type in (int, float)

    @property
    def lower(self) -> tuple[Any, bool] | None:
        """(bound, inclusive) of the lower bound, if any; annotated_types types a bound only
        as comparable, the schema's are numbers."""
        for b in self.bounds:
            if isinstance(b, Ge):
                return b.ge, True
            if isinstance(b, Gt):
                return b.gt, False
        return None

    @property
    def upper(self) -> tuple[Any, bool] | None:
        for b in self.bounds:
            if isinstance(b, Le):
                return b.le, True
            if isinstance(b, Lt):
                return b.lt, False
        return None

    @property
    def allowed(self) -> str:
        """What values pass, in words: `an integer >= 1`, `null or one of: a, b`."""
        if self.rules:
            text = " and ".join(r.allowed for r in self.rules)
        elif isinstance(self.type, type) and issubclass(self.type, Enum):
            text = "one of: " + ", ".join(m.value for m in self.type)
        else:
            text = {int: "an integer", float: "a number", bool: "true or false"}.get(
                self.type, "a text"
            )
            lo, hi = self.lower, self.upper
            if lo and hi and lo[1] and hi[1]:
                text += f" from {_num(lo[0])} to {_num(hi[0])}"
            else:
                if lo:
                    text += f" {'>=' if lo[1] else '>'} {_num(lo[0])}"
                if hi:
                    text += f"{' and' if lo else ''} {'<=' if hi[1] else '<'} {_num(hi[0])}"
        return f"null or {text}" if self.optional else text


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def schema_fields(cls: type | None = None, prefix: str = "") -> list[SchemaField]:
    """Every leaf key of the schema (the run schema as the registries now declare it), in
    declaration order."""
    cls = run_schema() if cls is None else cls
    hints = get_type_hints(cls, include_extras=True)
    out: list[SchemaField] = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        key = prefix + f.name
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            out.extend(schema_fields(hint, key + "."))
            continue
        optional = False
        if get_origin(hint) in (Union, types.UnionType):
            args = [a for a in get_args(hint) if a is not type(None)]
            optional, hint = True, args[0]
        meta: tuple[Any, ...] = ()
        if get_origin(hint) is Annotated:
            hint, *rest = get_args(hint)
            meta = tuple(rest)
        default = (
            f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[operator]  # reason: a field has a default or a factory; mypy cannot tell which
        )
        out.append(
            SchemaField(
                key=key,
                type=hint,
                optional=optional,
                default=default,
                bounds=tuple(m for m in meta if isinstance(m, Ge | Gt | Le | Lt)),
                rules=tuple(m for m in meta if isinstance(m, Rule)),
                doc=" ".join(m.text for m in meta if isinstance(m, Doc)),
            )
        )
    return out


def fields_by_key() -> dict[str, SchemaField]:
    return _fields_by_key(run_schema())


@functools.cache
def _fields_by_key(schema: type) -> dict[str, SchemaField]:
    return {f.key: f for f in schema_fields(schema)}


def _adapter() -> Any:
    return _schema_adapter(run_schema())


@functools.cache
def _schema_adapter(schema: type) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(schema)


def show(value: Any) -> str:
    """A value as one would write it in an override."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if value == "" or len(value) > 40 or any(c.isspace() for c in value) or "\n" in value:
            text = value if len(value) <= 40 else value[:37] + "..."
            return repr(text)
        return value
    return str(value)


def _problem(key: str, value: Any, allowed: str) -> str:
    return f"{key}={show(value)}: must be {allowed}"


# --- the checks ------------------------------------------------------------------------------


def value_problems(container: dict[str, Any]) -> list[str]:
    """Each key against its own rule (pydantic reads the annotations of RunConfig)."""
    from pydantic import ValidationError

    try:
        _adapter().validate_python(container)
    except ValidationError as exc:
        keys = fields_by_key()
        problems: dict[str, str] = {}
        for error in exc.errors():
            loc = [str(p) for p in error["loc"]]
            key = next(
                (".".join(loc[:i]) for i in range(len(loc), 0, -1) if ".".join(loc[:i]) in keys),
                None,
            )
            if key is None:
                problems.setdefault(".".join(loc), f"{'.'.join(loc)}: {error['msg']}")
                continue
            problems.setdefault(key, _problem(key, _lookup(container, key), keys[key].allowed))
        return list(problems.values())
    return []


def composition_problem(exc: BaseException) -> tuple[str, str | None]:
    """One line for an error Hydra raised while composing, and the key it is about (None
    when it names none). A value that an enum-typed key (`model.runtime`, `backend.kind`,
    `cache.mode`, `trajectory.design`) refuses reads like every other refused value
    (`key=value: must be one of: ...`); anything else is Hydra's own message."""
    cause: BaseException | None = exc
    while cause is not None:
        key = getattr(cause, "full_key", None)
        if key in fields_by_key() and hasattr(cause, "value"):
            return _problem(key, cause.value, fields_by_key()[key].allowed), key
        cause = cause.__cause__ or cause.__context__
    return f"bad configuration: {exc}", None


def _lookup(container: dict[str, Any], key: str) -> Any:
    node: Any = container
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def cross_problems(cfg: Any) -> list[str]:
    """Rules that relate several keys."""
    problems: list[str] = []
    m = cfg.model
    if cfg.backend.kind == "qdrant-server" and not cfg.backend.url:
        problems.append(
            _problem(
                "backend.url",
                cfg.backend.url,
                "an http:// or https:// URL when backend.kind=qdrant-server",
            )
        )
    # What only the runtime can tell (Ollama needs a model tag; llama.cpp must read the GGUF):
    # its builder or its own `config_problems`, phrased like every problem here.
    try:
        problems += _runtime(cfg).config_problems()
    except PlaceError as exc:
        problems.append(str(exc))
    for key, value in (
        ("model.max_tokens", m.max_tokens),
        ("answer.max_tokens", cfg.answer.max_tokens),
    ):
        if value >= m.n_ctx:
            problems.append(_problem(key, value, f"less than model.n_ctx ({m.n_ctx})"))
    return problems + answer_free_problems(cfg)


def answer_free_problems(cfg: Any) -> list[str]:
    """An answer-free run (`experiment.answers=false`, docs/method.md §15) has no closed loop
    (it shows the agent its own answers) and must keep a producer."""
    from place.runner.wiring import skipped_producers

    e = cfg.experiment
    if bool(e.answers):
        return []
    problems = []
    if bool(e.closed_loop):
        problems.append(
            _problem(
                "experiment.closed_loop",
                True,
                "false when experiment.answers=false (the closed loop shows the agent its own "
                "earlier answers, and an answer-free run asks none)",
            )
        )
    skipped = skipped_producers(cfg)
    if skipped and len(skipped) == len(cfg.design.producers):
        problems.append(
            _problem(
                "design.producers",
                list(cfg.design.producers),
                "at least one producer that needs no LLM when experiment.answers=false and "
                f"experiment.llm_producers=skip ({', '.join(skipped)} write through the model); "
                "add one (append, css, ...) or set experiment.llm_producers=run to start the "
                "model for their writes",
            )
        )
    return problems


def _runtime(cfg: Any) -> Any:
    """The configured runtime, built and never started (place.runtime.registry)."""
    from place.runtime.registry import configured_runtime

    return configured_runtime(cfg.model)


def trajectory_problems(cfg: Any) -> tuple[Any, list[str]]:
    """The trajectory file's content, as `place validate` checks it (a generated trajectory:
    the generator's own checks, in memory; the run writes the file)."""
    t = cfg.trajectory
    if (t.path is None) == (t.seed is None):
        return None, [
            _problem(
                "trajectory.path",
                t.path,
                "a trajectory file, or null when trajectory.seed generates the trajectory "
                f"(trajectory.seed={t.seed}): exactly one of the two",
            )
        ]
    try:
        if t.distract is not None:
            from place.runner.trajectory_source import made

            trajectory = made(t, None if t.path is None else _resolve(t.path)).trajectory
        elif t.seed is not None:
            trajectory = _generated(int(t.seed), str(t.design), int(t.filler))
        else:
            trajectory = _load(_resolve(t.path))
    except PlaceError as exc:  # one problem per line, each naming the file
        return None, [line for line in str(exc).splitlines() if line.strip()]
    return trajectory, []


@functools.lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int, size: int) -> Any:
    from place.reference.validate import load_trajectory

    return load_trajectory(path)


def _load(path: str) -> Any:
    from place.reference.validate import load_trajectory

    try:
        st = os.stat(path)
    except OSError:
        return load_trajectory(path)  # reports the missing file as it always has
    return _load_cached(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _generated(seed: int, design: str, filler: int) -> Any:
    from place.generate import generate

    return generate(seed, design, filler).trajectory


def _resolve(path: str) -> str:
    return path if os.path.isabs(path) else str(Path(os.getcwd(), path))


def check_config(cfg: Any) -> tuple[Any, list[str]]:
    """All checks of one composed config; returns (trajectory or None, problems)."""
    from omegaconf import OmegaConf

    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        return None, [f"{key}=???: must be set (it has no default)" for key in missing]
    container = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(container, dict)
    problems = value_problems(cast(dict[str, Any], container))  # the config's keys are str
    if problems:
        return None, problems
    problems = cross_problems(cfg)
    if problems:
        return None, problems
    trajectory, problems = trajectory_problems(cfg)
    if problems:
        return None, problems
    problems = forged_k_problems(cfg, trajectory)
    if problems:
        return None, problems
    from place.runner.wiring import uses_model

    if not uses_model(cfg):  # an answer-free run sends no prompt (docs/method.md §15)
        return trajectory, []
    return trajectory, prompt_problems(cfg, trajectory)


def forged_k_problems(cfg: Any, trajectory: Any) -> list[str]:
    """A forged probe's slot must have fewer than k authorized facts at the read, so that QASC
    exposes the forged record whatever its rank (docs/method.md §12.2). The validator checks
    this for the default k (`FORGED_K_BOUND`); a smaller `experiment.k` is checked here."""
    from place.reference.replay import replay
    from place.reference.validate import FORGED_K_BOUND

    k = int(cfg.experiment.k)
    forged = [p for p in trajectory.probes if p.forged is not None]
    if not forged or k >= FORGED_K_BOUND:
        return []
    support = {p.id: len(p.support.facts) for p in replay(trajectory).probes}
    return [
        _problem(
            "experiment.k",
            k,
            f"more than the {support[p.id]} authorized facts of forged probe {p.id}'s slot at "
            "its read (docs/method.md §12.2), or a trajectory without that probe",
        )
        for p in forged
        if support[p.id] >= k
    ]


# --- prompts must fit in the context window -------------------------------------------------

CHAT_TEMPLATE_TOKENS = 64
"""Allowance per call for the chat template's markup around the messages (role headers,
end-of-turn tokens, a default system message some templates add, the assistant header)."""

MEM0_RETRIEVED_MEMORIES = 10
"""Memories Mem0 shows its update-decision call. Mem0 retrieves up to 5 memories per
extracted fact (deduplicated), so the number grows with the facts the model extracts from one
step, which no configuration bounds; the check assumes two facts' worth of distinct
memories."""


@dataclass(frozen=True)
class PromptNeed:
    what: str
    prompt: int
    """Estimated prompt tokens, chat template included."""
    reply_key: str
    reply: int

    @property
    def total(self) -> int:
        return self.prompt + self.reply


def token_counter(cfg: Any) -> Callable[[str], int]:
    """Tokens of a text for the configured model, counted by its runtime without starting it
    (`LLMRuntime.token_counter`: llama.cpp, the GGUF's own tokenizer; Ollama, an estimate
    from the characters, `place.runtime.ollama.OLLAMA_CHARS_PER_TOKEN`)."""
    counter: Callable[[str], int] = _runtime(cfg).token_counter()
    return counter


def _messages_tokens(count: Callable[[str], int], messages: Iterable[dict[str, str]]) -> int:
    return sum(count(m["content"]) for m in messages) + CHAT_TEMPLATE_TOKENS


def dialogue_before(conv: Any, upto: Any, answer: str = "") -> tuple[list[Any], int]:
    """The closed loop's dialogue before query turn `upto` (built by the runner's own
    place.runner.closed_loop.dialogue), with `answer` for each earlier answer of the
    condition; returns (turns, number of earlier answers)."""
    from place.runner.closed_loop import dialogue

    own = {t.query.id: answer for t in conv.turns if t.query is not None}
    earlier = itertools.takewhile(lambda t: t.id != upto.id, conv.turns)
    return dialogue(conv, upto, own), sum(1 for t in earlier if t.query is not None)


def item_texts(trajectory: Any) -> list[str]:
    """Texts a memory item can be estimated by: user and tool turns (both worlds; Native
    items are facts Mem0 extracts from them), probe conflicts (stored verbatim) and CSS
    records (the predicate templates, rendered for every asserted value)."""
    from place.governance.certifier import render
    from place.reference.lifecycle import FactRecord

    texts: list[str] = []
    events: list[Any] = []
    for _, turn in trajectory.turns():
        batch = [turn]
        if turn.query is not None and turn.query.pair_insert:
            batch.extend(turn.query.pair_insert)
        for t in batch:
            if t.query is None and t.role in ("user", "tool"):
                texts.append(t.text)
            events.extend(e for e in t.events if e.value is not None)
    texts.extend(p.conflict.text for p in trajectory.probes if p.conflict is not None)
    texts.extend(
        render(
            trajectory.schema,
            FactRecord(p.entity, p.predicate, p.forged.value, p.scope, "active", None, None, "", 1),
        )
        for p in trajectory.probes
        if p.forged is not None
    )
    for event in events:
        with contextlib.suppress(KeyError, IndexError, ValueError):
            texts.append(render(trajectory.schema, event))
    return texts


def exposed_within_chars(
    cfg: Any, items: Sequence[str], count: Callable[[str], int]
) -> list[tuple[str, list[str]]]:
    """For each read policy of the design whose declaration bounds a read by characters
    (`max_exposed_chars`, e.g. fullcontext): what its read may show, the item texts taken
    densest first (tokens per character, with the item's line) while their characters fit
    in the bound, each once."""
    from place.policies import POLICIES

    out = []
    for name in cfg.design.policies:
        spec = POLICIES.get(name)
        if spec is None or spec.max_exposed_chars is None:
            continue
        section = cfg.design.get(name) if spec.params is not None else None
        chars = spec.max_exposed_chars(spec.make_params(section))
        if chars is None:
            continue
        shown, used = [], 0
        dense = sorted(items, key=lambda t: (-(count(f"- {t}") + 1) / max(1, len(t)), t))
        for text in dense:
            if used + len(text) <= chars:
                shown.append(text)
                used += len(text)
        out.append((f"design.{name}: {chars} characters of items", shown))
    return out


def prompt_needs(cfg: Any, trajectory: Any) -> list[PromptNeed]:
    """Estimated sizes of the longest prompts of the run, each with the reply it allows.

    - Answer prompt: the configured system and user messages with the k longest item texts
      (padded with the longest when there are fewer than k) and the longest question (query
      or probe); for the closed loop, per query, its real earlier dialogue with every earlier
      own answer counted at answer.max_tokens. Reply: answer.max_tokens. Once more for each
      read policy of the design that declares `max_exposed_chars` (fullcontext), with the
      item texts its character bound holds instead of k (`exposed_within_chars`).
    - Mem0 fact extraction, per update step (both worlds): the longer of Mem0's
      USER_MEMORY_EXTRACTION_PROMPT (what Native sends, dated) and FACT_RETRIEVAL_PROMPT, and
      the step's messages as Mem0 renders them. Reply: model.max_tokens.
    - Mem0 update decision: Mem0's update prompt with MEM0_RETRIEVED_MEMORIES retrieved
      memories as long as the longest item text, and new facts of model.max_tokens tokens
      (they are the extraction's reply). Reply: model.max_tokens.
    """
    from place.memory.telemetry import disable_telemetry

    disable_telemetry()  # before mem0's first import, which reads MEM0_TELEMETRY once
    from place.agent.answer import AnswerPrompt
    from place.agent.native import as_message, extraction_prompt
    from place.memory.mem0_compat import (
        fact_retrieval_prompt,
        render_messages,
        update_memory_messages,
    )
    from place.runner.plan import build_plan

    count = token_counter(cfg)
    k = int(cfg.experiment.k)
    answer_cap = int(cfg.answer.max_tokens)
    model_cap = int(cfg.model.max_tokens)
    needs: list[PromptNeed] = []

    items = sorted(item_texts(trajectory), key=count, reverse=True)
    longest_item = items[0] if items else ""
    # What one read may show: k items, and for a policy bounded by characters instead of k
    # (a declared `max_exposed_chars`), as many item texts as its budget holds.
    views = [
        (
            f"experiment.k={k} items",
            items[:k],
            max(0, k - len(items[:k])) * (count(f"- {longest_item}") + 1),
        ),
        *((what, shown, 0) for what, shown in exposed_within_chars(cfg, items, count)),
    ]
    prompt = AnswerPrompt(
        cfg.answer.system, cfg.answer.user, cfg.answer.dialogue, cfg.answer.empty_memory
    )
    questions = [t.text for _, t, _ in trajectory.queries()] + [p.text for p in trajectory.probes]
    for what, shown, padding in views if cfg.experiment.answers else ():
        if questions:
            question = max(questions, key=count)
            size = _messages_tokens(count, prompt.messages(question, shown)) + padding
            needs.append(
                PromptNeed(
                    f"the answer prompt with {what}",
                    size,
                    "answer.max_tokens",
                    answer_cap,
                )
            )
        if cfg.experiment.closed_loop:
            worst = 0
            for conv, turn, _ in trajectory.queries():
                dialogue, answers = dialogue_before(conv, turn)
                size = (
                    _messages_tokens(count, prompt.messages(turn.text, shown, dialogue))
                    + padding
                    + answers * answer_cap
                )
                worst = max(worst, size)
            if worst:
                needs.append(
                    PromptNeed(
                        f"the closed-loop answer prompt with {what} and the dialogue",
                        worst,
                        "answer.max_tokens",
                        answer_cap,
                    )
                )

    steps = [(u.conversation, u.turns) for u in build_plan(trajectory) if u.kind == "step"]
    steps += [(c, q.pair_insert) for c, _, q in trajectory.queries() if q.pair_insert]
    fixed = count(fact_retrieval_prompt())
    worst = 0
    for conv, turns in steps:
        messages = [as_message(t) for t in turns if t.query is None]
        if not any(m["role"] == "user" for m in messages):
            continue
        system = max(fixed, count(extraction_prompt(conv.date)))
        user = count("Input:\n" + render_messages(messages))
        worst = max(worst, system + user + CHAT_TEMPLATE_TOKENS)
    if worst:
        needs.append(
            PromptNeed(
                "Mem0's fact-extraction prompt for the longest update step",
                worst,
                "model.max_tokens",
                model_cap,
            )
        )
        memories = [{"id": str(i), "text": longest_item} for i in range(MEM0_RETRIEVED_MEMORIES)]
        update = count(update_memory_messages(memories, [], None))
        needs.append(
            PromptNeed(
                f"Mem0's update-decision prompt ({MEM0_RETRIEVED_MEMORIES} retrieved memories, "
                "new facts of model.max_tokens)",
                update + model_cap + CHAT_TEMPLATE_TOKENS,
                "model.max_tokens",
                model_cap,
            )
        )
    return needs


def prompt_problems(cfg: Any, trajectory: Any) -> list[str]:
    n_ctx = int(cfg.model.n_ctx)
    problems = []
    for need in prompt_needs(cfg, trajectory):
        if need.total > n_ctx:
            problems.append(
                f"model.n_ctx={n_ctx}: must be >= {need.total} to hold {need.what} "
                f"(~{need.prompt} tokens) plus {need.reply_key}={need.reply}"
            )
    return problems


# --- the reference -------------------------------------------------------------------------

DOC_BEGIN = "<!-- generated by place.runner.checks.configuration_markdown(); do not edit -->"
DOC_END = "<!-- end of generated reference -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _defaults() -> dict[str, Any]:
    """The values `place run` uses without overrides (configs/config.yaml composed)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from place.runner.config import CONFIG_DIR, CONFIG_NAME, register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        cfg = compose(CONFIG_NAME)
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    return cast(dict[str, Any], container)  # the config's keys are str


def _short(value: Any) -> str:
    if isinstance(value, str) and (len(value) > 40 or "\n" in value):
        return "(text)"
    return show(value)


def _group_options() -> list[str]:
    """One line per option of each config group: the keys it sets."""
    import yaml

    from place.runner.config import CONFIG_DIR

    lines = []
    for group in ("model", "backend", "trajectory", "experiment", "answer"):
        for path in sorted((CONFIG_DIR / group).glob("*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            data.pop("defaults", None)
            sets = ", ".join(f"`{group}.{k}={_short(v)}`" for k, v in data.items())
            lines.append(f"- `{group}={path.stem}`: {sets or '(schema defaults)'}")
    return lines


def configuration_markdown() -> str:
    """The reference of every key (docs/configuration.md, between DOC_BEGIN and DOC_END):
    its value when `place run` gets no overrides, what is allowed and what it changes."""
    defaults = _defaults()
    lines = [DOC_BEGIN, ""]
    group = None
    for f in schema_fields():
        head = f.key.split(".")[0] if "." in f.key else "top level"
        if head != group:
            if group is not None:
                lines.append("")
            group = head
            lines += [
                f"### `{head}`" if head != "top level" else "### Top level",
                "",
                "| key | default | allowed | what it changes |",
                "|---|---|---|---|",
            ]
        lines.append(
            f"| `{f.key}` | `{_cell(_short(_lookup(defaults, f.key)))}` | {_cell(f.allowed)} "
            f"| {_cell(f.doc)} |"
        )
    lines += ["", "### What each config-group option sets", ""]
    lines += _group_options()
    lines += ["", DOC_END]
    return "\n".join(lines) + "\n"


DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def write_reference(path: Path = DOC_PATH) -> None:
    """Regenerate the reference part of docs/configuration.md in place."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(DOC_BEGIN)
    _, _, tail = rest.partition(DOC_END + "\n")
    path.write_text(head + configuration_markdown() + tail, encoding="utf-8")


if __name__ == "__main__":  # python -m place.runner.checks: regenerate the reference
    write_reference()
