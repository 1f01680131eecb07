"""`place generate` (docs/method.md §9): the domain library, the two designs on seeds 0-19, the
filler knob, determinism, and bad requests. Every seed is generated once per design in a
module-scoped fixture and reused; the whole file runs in well under a minute."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import random
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest
from builders import lexicon_self_check

from place.cli import main
from place.errors import InputError, PlaceError
from place.generate import DESIGNS, generate, self_check, write
from place.generate import phrasing as ph
from place.generate.datafile import parse
from place.generate.library import (
    CITIES,
    CURRENCIES,
    DOMAINS,
    HOME_ALIASES,
    PEOPLE,
    PREDICATES,
    RELATIONS,
    WORK_ALIASES,
    Library,
    check_library,
    date_aliases,
    value_aliases,
)
from place.generate.phrasing import Chatter, Phrasing, check_chatter, check_phrasing
from place.generate.world import mention_pattern
from place.lexicon import Lexicon
from place.reference.replay import replay
from place.reference.validate import load_trajectory
from place.trajectory.model import (
    FAMILIES,
    VALUE_TYPES,
    Entity,
    Fact,
    Predicate,
    Schema,
    Scope,
    Trajectory,
)

SEEDS = range(20)
ROOT = Path(__file__).resolve().parents[2]

# The counts each design guarantees (docs/generator.md); checked here independently of
# the generator's own checks.
COUNTS = {
    "paper": dict(convs=4, turns=(280, 320), updates=105, per_family=8, probes=12, conflicts=24),
    "small": dict(convs=2, turns=(70, 80), updates=26, per_family=2, probes=3, conflicts=6),
}


@pytest.fixture(scope="module")
def generated() -> dict[tuple[str, int], object]:
    return {(design, seed): generate(seed, design) for design in DESIGNS for seed in SEEDS}


# ----------------------------------------------------------------------------- library


def _library_schema(currency: str = "EUR") -> tuple[Schema, dict[str, dict]]:
    """A schema holding the whole library: every predicate with its whole pool, every person
    (some with relation aliases), every city."""
    rng = random.Random(0)
    people = {}
    aliases = iter(["my husband", "my sister", "my mum", "my dad", "my wife", "my brother"])
    for i, (name, _g) in enumerate(PEOPLE):
        alias = next(aliases, None) if 0 < i < 7 else None
        people[name.lower()] = Entity(name.lower(), name, (alias,) if alias else ())
    scopes = {f"trip-{c.lower()}": Scope(f"trip-{c.lower()}", (c,)) for c in CITIES}
    scopes["work"] = Scope("work", WORK_ALIASES)
    scopes["home"] = Scope("home", HOME_ALIASES)
    predicates = {}
    for spec in PREDICATES:
        values: dict[str, tuple[str, ...]] = {}
        if spec.type == "date":
            seen = set()
            while len(values) < 8:
                year = 2031 + rng.randint(0, 5) if spec.dates.far else 2026
                day = dt.date(year, rng.randint(1, 12), rng.randint(1, 28))
                if (day.month, day.day) not in seen:
                    seen.add((day.month, day.day))
                    values[day.isoformat()] = tuple(date_aliases(day, spec.dates.far))
        else:
            for canonical, listed in spec.entries:
                if spec.type == "money":
                    canonical = f"{canonical} {currency}"
                values[canonical] = tuple(value_aliases(spec, canonical, listed))
        default = spec.scope if spec.scope in ("work", "home") else None
        predicates[spec.id] = Predicate(
            spec.id, spec.type, spec.cardinality, spec.keywords, values, default, spec.template
        )
    return Schema(people, scopes, predicates), {s.id: s for s in PREDICATES}


def test_library_size_and_coverage() -> None:
    assert len(DOMAINS) >= 5
    assert len(PREDICATES) >= 40
    assert len({p.id for p in PREDICATES}) == len(PREDICATES)
    assert {p.domain for p in PREDICATES} == set(DOMAINS)
    assert {p.type for p in PREDICATES} == set(VALUE_TYPES)
    for vtype in VALUE_TYPES:
        for card in ("one", "many") if vtype == "enum" else ("one",):
            assert any(p.type == vtype and p.cardinality == card for p in PREDICATES)
    assert Counter(p.cardinality for p in PREDICATES)["many"] >= 5
    assert {p.scope for p in PREDICATES} == {"global", "trip", "work", "home", "place"}
    for p in PREDICATES:
        assert p.keywords and p.template and len(p.says) >= 2 and len(p.asks) >= 2, p.id
        assert (len(p.pool) >= 5) if p.type != "date" else p.dates is not None, p.id
        if p.cardinality == "one":
            assert p.subject and p.complement, p.id
        else:
            assert p.drops, p.id
    assert len(PEOPLE) >= 20 and len(CITIES) >= 12 and len(CURRENCIES) >= 3
    assert {g for _n, g in PEOPLE} <= set(next(iter(RELATIONS.values())))


def _data(name: str) -> str:
    return resources.files("place.data").joinpath("generator", name).read_text(encoding="utf-8")


LIBRARY_YAML = "place/data/generator/library.yaml"
BROKEN_LIBRARY = [
    (
        ("  - id: flight_time\n", "  - id: flight_time\n    colour: blue\n"),
        "predicates[0] (flight_time).colour (line ",
        "unknown key 'colour'; allowed: id, domain, type,",
    ),
    (
        ('"{poss} flight to {where} leaves at {value}"', '"{poss} flight to {city} at {value}"'),
        "predicates[0] (flight_time).says[0] (line ",
        "placeholder {city} is not allowed here; allowed: {poss}, {where}, {value}",
    ),
    (
        ('"{poss} flight to {where} leaves at {value}"', '"{poss} {where} {value.__class__}"'),
        "predicates[0] (flight_time).says[0]",
        "'{value.__class__}' is not a placeholder",
    ),
    (
        ('pool: ["10:50", "12:10"', 'pool: [10:50, "12:10"'),
        "predicates[1] (return_train) (line ",
        "a time pool lists quoted 24-hour times",
    ),
    (
        ("    domain: travel\n", "    domain: trvel\n"),
        "predicates[0] (flight_time).domain (line ",
        "'trvel' is not a domain; allowed: travel, work,",
    ),
    (
        ("    type: time\n", "    type: clock\n"),
        "predicates[0] (flight_time).type",
        "Input should be 'time', 'date', 'number', 'money' or 'enum'; got 'clock'",
    ),
    (("  Sam: m\n", "  Sam: m\n  Nora: f\n"), "people.Nora (line ", "key 'Nora' is written twice"),
    (
        ("work_aliases: [at work", "work_aliases: &w [at work"),
        "line ",
        "YAML anchor '&w' is not allowed",
    ),
    (
        ("cities:\n", "cities: !!python/object/apply:os.system\n"),
        "line ",
        "only plain strings, numbers, booleans, null, dates, mappings and lists may be used",
    ),
]


@pytest.mark.parametrize(("edit", "where", "message"), BROKEN_LIBRARY)
def test_a_malformed_library_names_file_location_and_what_is_allowed(
    edit: tuple[str, str], where: str, message: str
) -> None:
    text = _data("library.yaml")
    assert edit[0] in text
    with pytest.raises(InputError) as caught:
        parse(LIBRARY_YAML, text.replace(edit[0], edit[1], 1), Library, check_library)
    shown = str(caught.value)
    assert shown.startswith(f"{LIBRARY_YAML}: {where}"), shown
    assert message in shown, shown


@pytest.mark.parametrize(
    ("name", "model", "checks", "edit", "pattern"),
    [
        (
            "phrasing.yaml",
            Phrasing,
            check_phrasing,
            ('"Change of plan: {s} instead of {old}."', '"Change of plan: {s}."'),
            r"phrasing.yaml: supersede\[0\] \(line \d+, column \d+\): .* must contain \{old\}",
        ),
        (
            "phrasing.yaml",
            Phrasing,
            check_phrasing,
            ("  temporal:\n", "  temporary:\n"),
            r"question.temporary \(line \d+, column \d+\): 'temporary' is not a family; allowed",
        ),
        (
            "chatter.yaml",
            Chatter,
            check_chatter,
            ("  finances:\n", "  money:\n"),
            r"chit_chat.money \(line \d+, column \d+\): 'money' is not a domain; allowed: travel",
        ),
    ],
)
def test_malformed_templates_and_chatter_are_refused(
    name: str, model: type, checks: object, edit: tuple[str, str], pattern: str
) -> None:
    text = _data(name)
    assert edit[0] in text
    with pytest.raises(InputError, match=pattern):
        parse(f"place/data/generator/{name}", text.replace(edit[0], edit[1], 1), model, checks)


def test_library_aliases_are_unique_within_each_domain() -> None:
    schema, _ = _library_schema()
    for pred in schema.predicates.values():
        forms = [f.casefold() for v, a in pred.values.items() for f in (v, *a)]
        assert len(forms) == len(set(forms)), pred.id


@pytest.mark.parametrize("currency", CURRENCIES)
def test_every_clause_reads_as_exactly_its_fact(currency: str) -> None:
    """Every clause of every predicate, with every value in a random written form, for the
    principal and for named people, in every scope of its kind: β reads exactly that fact
    (so no keyword or value of one predicate leaks into another's sentences). Removal
    phrasings read nothing; the certifier template reads the fact."""
    schema, specs = _library_schema(currency)
    lexicon = Lexicon(schema, "nora")
    rng = random.Random(currency)
    today = dt.date(2026, 3, 1)
    trips = [s for s in schema.scopes if s.startswith("trip-")]
    failures = []
    for pid, pred in schema.predicates.items():
        spec = specs[pid]
        scopes = {"trip": rng.sample(trips, 2), "place": ["work", "home"]}.get(
            spec.scope, [spec.scope if spec.scope in ("work", "home") else "global"]
        )
        for value in pred.values:
            entity = rng.choice(["nora", "theo", "maya", "jonas"])
            scope = rng.choice(scopes)
            poss = (
                "my"
                if entity == "nora"
                else rng.choice(
                    [
                        f"{schema.entities[entity].name}'s",
                        *[f"{a}'s" for a in schema.entities[entity].aliases],
                    ]
                )
            )
            where = (
                schema.scopes[scope].aliases[0]
                if spec.scope == "trip"
                else {"work": "at work", "home": "at home"}.get(scope, "")
                if spec.scope == "place"
                else ""
            )
            shown = ph.surface(
                pred.type, value, pred.values[value], rng, currency=currency, today=today
            )
            fact = Fact(entity, pid, value, scope)
            for clause in spec.clauses():
                text = ph.capitalize(clause.format(poss=poss, where=where, value=shown)) + "."
                if lexicon.read(text) != {fact}:
                    failures.append(f"{text!r} -> {sorted(lexicon.read(text))}")
            removals = [ph.FORGET[0].format(poss=poss, noun=spec.noun.format(where=where))]
            if spec.cardinality == "one":
                subject = spec.subject.format(poss=poss, where=where)
                removals += [
                    t.format(
                        subject=subject,
                        Subject=ph.capitalize(subject),
                        complement=spec.complement.format(value=shown),
                    )
                    for t in ph.RETRACT_ONE
                ]
            else:
                removals += [
                    ph.capitalize(d.format(poss=poss, where=where, value=shown)) + "."
                    for d in spec.drops
                ]
            for text in removals:
                if lexicon.read(text):
                    failures.append(f"removal {text!r} -> {sorted(lexicon.read(text))}")
            record = spec.template.format(
                entity_name=schema.entities[entity].name,
                value=value,
                scope=schema.scopes[scope].aliases[0] if scope in schema.scopes else scope,
            )
            if lexicon.read(record) != {fact}:
                failures.append(f"template {record!r} -> {sorted(lexicon.read(record))}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("currency", CURRENCIES)
def test_every_written_form_of_every_value_is_recognised(currency: str) -> None:
    schema, _ = _library_schema(currency)
    lexicon = Lexicon(schema, "nora")
    for today in (dt.date(2026, 1, 1), dt.date(2027, 6, 1)):
        for pid, pred in schema.predicates.items():
            for value, aliases in pred.values.items():
                forms = ph.surface_forms(pred.type, value, aliases, currency=currency, today=today)
                for form in forms:
                    assert lexicon.values_in(f"It is {form}.", pid) == {value}, (pid, form)


def test_chatter_greetings_and_replies_mention_nothing_of_the_library() -> None:
    schema, _ = _library_schema()
    pattern = mention_pattern(schema)
    lines = [
        *ph.chatter_lines(),
        *ph.GREETINGS,
        *ph.FILLER_REPLIES,
        *[d.format(what=w) for d in ph.DISMISS for w in ph.SOURCE_NOUN.values()],
    ]
    dirty = [line for line in lines if pattern.search(line)]
    assert not dirty, dirty[:10]
    assert len(ph.chatter_lines()) == len(set(ph.chatter_lines())) >= 2000


# ----------------------------------------------------------------------------- designs


def _base_turns(traj: Trajectory) -> int:
    return sum(1 for _c, t in traj.turns() if "-f" not in t.id)


def _story(turn_id: str) -> bool:
    # `small`'s governance story (ids `c1-g001`, probes `pg01`) and its forged probes (`pf01`)
    # come on top of the counts below; tests/unit/test_generate_governed.py and
    # tests/unit/test_generate_forged.py check them.
    return "-g" in turn_id


@pytest.mark.parametrize("design", list(DESIGNS))
def test_every_seed_has_the_design_counts(generated, design: str) -> None:
    want = COUNTS[design]
    for seed in SEEDS:
        traj = generated[(design, seed)].trajectory
        ref = replay(traj)
        where = f"{design} seed {seed}"
        assert len(traj.conversations) == want["convs"], where
        dates = [c.date for c in traj.conversations]
        assert dates == sorted(dates) and len(set(dates)) == len(dates), where
        turns = [t for _c, t in traj.turns() if not _story(t.id)]
        lo, hi = want["turns"]
        assert lo <= len(turns) <= hi, where
        updates = sum(1 for c in ref.checkpoints if c.kind == "post-update" and not _story(c.turn))
        assert updates == want["updates"] == sum(1 for t in turns if t.events), where
        queries = traj.queries()
        assert Counter(q.family for *_, q in queries) == {f: want["per_family"] for f in FAMILIES}
        assert all(q.pair_insert for *_, q in queries), where
        probes = [p for p in traj.probes if not p.id.startswith(("pg", "pf"))]
        assert Counter(p.family for p in probes) == {f: want["probes"] for f in FAMILIES}
        assert sum(p.conflict is not None for p in probes) >= want["conflicts"], where
        assert (len(probes) < len(traj.probes)) == (design == "small"), where
        if design == "paper":
            for conv in traj.conversations:
                fams = Counter(t.query.family for t in conv.turns if t.query is not None)
                assert fams == {f: 2 for f in FAMILIES}, where


@pytest.mark.parametrize("design", list(DESIGNS))
def test_every_seed_agrees_with_the_reference_replay(generated, design: str) -> None:
    for seed in SEEDS:
        traj = generated[(design, seed)].trajectory
        ref = replay(traj)
        assert not ref.problems
        for _c, _turn, query in traj.queries():
            qref = ref.query(query.id)
            assert qref.support.values == tuple(sorted(query.gold)), (design, seed, query.id)
            assert qref.support_b == qref.support, (design, seed, query.id)
        refs = {p.id: p for p in ref.probes}
        for probe in traj.probes:
            assert refs[probe.id].support.values == tuple(sorted(probe.gold)), probe.id


@pytest.mark.parametrize("design", list(DESIGNS))
def test_every_seed_uses_every_lifecycle_event(generated, design: str) -> None:
    for seed in SEEDS:
        traj = generated[(design, seed)].trajectory
        turns = [(c, t) for c in traj.conversations for t in c.turns if not _story(t.id)]
        events = [(c, e) for c, t in turns for e in t.events]
        assert {e.op for _c, e in events} == {"assert", "correct", "retract", "forget"}
        assert any(e.valid_until is not None for _c, e in events), seed
        assert any(e.valid_from is not None and e.valid_from > c.date for c, e in events), seed
        tools = [t for _c, t in traj.turns() if t.role == "tool"]
        assert len(tools) >= (8 if design == "paper" else 2)
        assert all(t.source and not t.events for t in tools)
        assert any(not q.gold for *_, q in traj.queries()), "some query must abstain"
        kinds = {s.aliases[0] for s in traj.schema.scopes.values()}
        assert {"at work", "at home"} <= kinds


@pytest.mark.parametrize("design", list(DESIGNS))
def test_lexicon_self_check_holds(generated, design: str) -> None:
    for seed in SEEDS:
        traj = generated[(design, seed)].trajectory
        passed, checked, failures = lexicon_self_check(traj)
        assert passed == checked >= COUNTS[design]["updates"] * 3 // 4, failures
        assert self_check(traj) == []  # the strict form: exactly the facts, nothing elsewhere
        lexicon = Lexicon(traj.schema, traj.principal)
        for probe in traj.probes:
            if probe.conflict is not None:
                fact = Fact(probe.entity, probe.predicate, probe.conflict.value, probe.scope)
                assert fact in lexicon.read(probe.conflict.text), (seed, probe.id)
                assert probe.conflict.value not in probe.gold


def test_same_seed_same_bytes_and_seeds_differ(generated) -> None:
    for design, seed in [("paper", 0), ("paper", 13), ("small", 7)]:
        assert generate(seed, design).text == generated[(design, seed)].text
    texts = {generated[("paper", s)].text for s in SEEDS}
    assert len(texts) == len(SEEDS)
    yaml = generated[("paper", 0)].text
    assert yaml.count("# pair-kind:") == 48


def test_trajectories_vary_across_seeds(generated) -> None:
    predicates, entities = set(), set()
    user_texts = {}
    for seed in SEEDS:
        traj = generated[("paper", seed)].trajectory
        for _c, turn in traj.turns():
            for e in turn.events:
                predicates.add(e.predicate)
                entities.add(traj.schema.entities[e.entity].name)
        user_texts[seed] = {t.text for _c, t in traj.turns() if t.role == "user"}
    assert len(predicates) >= 30
    assert len(entities) >= 12
    for a, b in itertools.combinations(SEEDS, 2):
        shared = len(user_texts[a] & user_texts[b])
        assert shared <= min(len(user_texts[a]), len(user_texts[b])) / 2, (a, b, shared)


# ----------------------------------------------------------------------------- filler


@pytest.mark.parametrize(("design", "seed"), [("paper", 3), ("paper", 11), ("small", 5)])
def test_filler_adds_chatter_and_changes_nothing_else(generated, design: str, seed: int) -> None:
    base = generated[(design, seed)].trajectory
    more = generate(seed, design, filler=50).trajectory
    assert [
        len(c.turns) - len(b.turns)
        for c, b in zip(more.conversations, base.conversations, strict=True)
    ] == [50] * len(base.conversations)
    assert _base_turns(more) == len(base.turns())
    ref_a, ref_b = replay(base), replay(more)
    assert Counter(c.kind for c in ref_a.checkpoints) == Counter(c.kind for c in ref_b.checkpoints)
    assert [(q.id, q.family, q.gold, q.as_of) for *_, q in more.queries()] == [
        (q.id, q.family, q.gold, q.as_of) for *_, q in base.queries()
    ]
    assert [(p.id, p.after, p.gold, p.conflict) for p in more.probes] == [
        (p.id, p.after, p.gold, p.conflict) for p in base.probes
    ]
    assert [c.state for c in ref_a.checkpoints] == [c.state for c in ref_b.checkpoints]
    lexicon = Lexicon(more.schema, more.principal)
    pattern = mention_pattern(more.schema)
    filler = [t for _c, t in more.turns() if "-f" in t.id]
    assert len(filler) == 50 * len(more.conversations)
    assert {t.role for t in filler} == {"user", "assistant"}
    for turn in filler:
        assert not turn.events and turn.query is None
        assert lexicon.read(turn.text) == set(), turn.text
        assert pattern.search(turn.text) is None, turn.text


# ----------------------------------------------------------------------------- writing, CLI


def test_cli_writes_a_file_that_validates(generated, tmp_path: Path, capsys) -> None:
    out = tmp_path / "sub" / "gen.yaml"
    out.parent.mkdir()  # --out names a file in an existing directory (test_cli_small.py)
    assert main(["generate", "--seed", "4", "--design", "small", "--out", str(out)]) == 0
    assert out.read_bytes() == generated[("small", 4)].text.encode("utf-8")
    assert "generated: 2 conversations" in capsys.readouterr().out
    assert main(["validate", str(out)]) == 0
    as_json = tmp_path / "gen.json"
    assert main(["generate", "--seed", "4", "--design", "small", "--out", str(as_json)]) == 0
    traj_json, traj_yaml = load_trajectory(as_json), load_trajectory(out)
    assert traj_json.conversations == traj_yaml.conversations
    assert traj_json.probes == traj_yaml.probes
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["gen.json", "gen.yaml", "sub"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "-1"], "--seed must be a non-negative integer"),
        (["--seed", "1", "--filler", "-3"], "--filler must be an integer from 0"),
        (["--seed", "1", "--filler", "100000"], "--filler must be an integer from 0"),
        (["--seed", "1", "--design", "tiny"], "--design 'tiny' is not a design"),
    ],
)
def test_bad_requests_exit_2_and_write_nothing(tmp_path: Path, capsys, args, message) -> None:
    out = tmp_path / "never.yaml"
    assert main(["generate", *args, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_bad_suffix_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "never.txt"
    assert main(["generate", "--seed", "1", "--out", str(out)]) == 2
    assert ".yaml, .yml, .json" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_cli_subprocess_bad_design(tmp_path: Path) -> None:
    out = tmp_path / "never.yaml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "place.cli",
            "generate",
            "--seed",
            "3",
            "--design",
            "huge",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        timeout=120,
    )
    assert proc.returncode == 2
    assert "--design 'huge' is not a design; allowed: paper, small " in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_unsatisfiable_design_is_an_error_naming_seed_and_constraint(
    monkeypatch, tmp_path: Path
) -> None:
    out = tmp_path / "never.yaml"
    paper = DESIGNS["paper"]
    monkeypatch.setitem(DESIGNS, "paper", replace(paper, event_turns=60))
    with pytest.raises(PlaceError, match=r"seed 3 \(design paper\): .*'exactly 60 post-update"):
        write(3, out)
    monkeypatch.setitem(DESIGNS, "paper", replace(paper, turns=(500, 520)))
    with pytest.raises(PlaceError, match=r"seed 3 \(design paper\): constraint 'turns 500-520'"):
        write(3, out)
    assert not out.exists()
