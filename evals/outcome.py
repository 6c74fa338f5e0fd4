"""Outcome suite: generated worlds where queries recur and success depends on the memories shown (ReMem protocol).

A world (one seed, one family) is a set of observations about people ("Maya lives in Porto."), a set of
queries ("Where does Maya live?") and a sequence of episodes. In each episode a query is asked with a token
budget; a simulated reader (:func:`evals.judges.simulated_reader`, position-biased or timestamp-aware) reads the
recalled items and answers; the outcome goes back through ``feedback(recall_id, success, used_ids=[picked])``.
Queries recur (Zipf-weighted over 8 queries), except in the control family.

Families (ReMem): ``distractor`` (two look-alikes per queried fact: the same attribute of a relative),
``long_horizon`` (queried facts stated first, then months of chatter about the same people),
``contradiction`` (queried facts updated 1-2 times; the newest is gold, older ones are stale),
``rare_critical`` (allergies and medications asked rarely among frequent queries), ``useless_frequent``
(generic notes similar to every query that never answer one), ``budget_tight`` (the distractor world under half
the budget), ``state_change`` (facts with 2-3 versions, asked now and ``as_of`` a past time), ``control``
(every query asked once: nothing to learn).

Seeds: ``TRAIN_SEEDS`` (0-99) and ``DEV_SEEDS`` (100-199) for tuning, ``TEST_SEEDS`` (1000-1099) for reported
numbers; the full run uses the first 10 test seeds. The reader's random draws depend on (seed, family, episode)
only, so every system meets the same reader luck (common random numbers) and paired differences are tight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from evals.common import TEST_SEEDS, Turn, iso, parse_iso, rng, shift
from evals.judges import READERS, ReaderDraws, ReaderItem, ReaderVerdict, presented_current, simulated_reader
from evals.report import t_interval
from evals.systems import RecalledItem, RecallResult, System

FAMILIES = ("distractor", "long_horizon", "contradiction", "rare_critical", "useless_frequent", "budget_tight",
            "state_change", "control")
DEFAULT_BUDGET = 60
EPISODES, QUICK_EPISODES = 40, 10
FULL_SEEDS = TEST_SEEDS[:10]
QUICK_SEEDS = TEST_SEEDS[:2]
MAX_DRAWS = 256
METRICS = ("success", "gold_recall", "precision", "tokens", "stale_rate")

NAMES = ("Maya", "Omar", "Lena", "Jonas", "Priya", "Tomas", "Ines", "Kofi", "Hana", "Mateo", "Sofia", "Arjun",
         "Elena", "Wei", "Nadia", "Lucas")
RELATIONS = ("sister", "brother", "manager", "neighbor", "cousin", "roommate")
CHATTER = (
    "{p} had lunch with {q} on Tuesday.",
    "{p} said the weekend was relaxing.",
    "{p} is busy with a deadline this week.",
    "{p} recommended a podcast about history.",
    "{p} and {q} went hiking near the lake.",
    "{p} finished reading a mystery novel.",
    "{p} complained about the rainy weather.",
    "{p} is planning a trip in the spring.",
    "{p} sent {q} a funny video.",
    "{p} baked bread for the first time.",
)
GENERIC = (
    "{p} likes to talk about home, work, cars, sports, drinks and doctors.",
    "{p} often shares updates about where they live, their job and their hobbies.",
)
GLOBAL_GENERIC = (
    "The user keeps notes about friends: where they live, where they work, what they drive and what they like.",
    "Friends and family details come up in almost every conversation.",
)


@dataclass(frozen=True)
class Attr:
    """A single-valued attribute: statement template, update templates, question, value pool."""

    statement: str
    updates: tuple[str, ...]
    question: str
    values: tuple[str, ...]


ATTRS: dict[str, Attr] = {
    "city": Attr("{s} lives in {v}.", ("{s} moved to {v}.", "{s} lives in {v} now.", "{s} relocated to {v} last month."),
                 "Where does {p} live?",
                 ("Porto", "Lisbon", "Oslo", "Lyon", "Krakow", "Seville", "Utrecht", "Tallinn", "Ghent", "Turin",
                  "Bergen", "Leeds")),
    "employer": Attr("{s} works at {v}.", ("{s} started a new job at {v}.", "{s} now works at {v}.", "{s} joined {v}."),
                     "Where does {p} work?",
                     ("Acme Robotics", "Northwind", "Globex", "Initech", "Umbrella Health", "Stark Logistics",
                      "Wayne Foods", "Hooli", "Vandelay Imports", "Soylent Labs")),
    "car": Attr("{s} drives a {v}.", ("{s} sold the old car and bought a {v}.", "{s} drives a {v} now.",
                                      "{s} switched to a {v}."),
                "What car does {p} drive?",
                ("Toyota Corolla", "Volvo XC60", "Honda Civic", "Tesla Model 3", "Ford Focus", "Mazda CX-5",
                 "Kia Niro", "Subaru Outback", "VW Golf", "Renault Clio")),
    "sport": Attr("{s} plays {v} on weekends.", ("{s} took up {v} instead.", "{s} plays {v} now.",
                                                  "{s} switched to {v} on weekends."),
                  "What sport does {p} play?",
                  ("tennis", "squash", "basketball", "volleyball", "badminton", "golf", "handball", "padel",
                   "table tennis", "cricket")),
    "dentist": Attr("{s}'s dentist is Dr. {v}.", ("{s} switched to Dr. {v} as dentist.", "{s}'s dentist is now Dr. {v}.",
                                                  "{s} sees Dr. {v} for teeth now."),
                    "Who is {p}'s dentist?",
                    ("Almeida", "Brandt", "Castillo", "Dubois", "Eriksen", "Fischer", "Gallo", "Haddad", "Ivanova",
                     "Jansen")),
    "drink": Attr("{s} drinks {v} every morning.", ("{s} now drinks {v} every morning.",
                                                    "{s} switched to {v} in the mornings.",
                                                    "{s} has {v} each morning these days."),
                  "What does {p} drink in the morning?",
                  ("green tea", "espresso", "black coffee", "oat latte", "chai", "orange juice", "matcha",
                   "hot chocolate", "mint tea", "kombucha")),
    "team": Attr("{s} supports {v}.", ("{s} now supports {v}.", "{s} switched allegiance to {v}.",
                                       "{s} cheers for {v} these days."),
                 "Which football team does {p} support?",
                 ("Arsenal", "Ajax", "Celtic", "Benfica", "Napoli", "Sevilla", "Lazio", "Feyenoord", "Galatasaray",
                  "Rangers")),
    "birthday": Attr("{s}'s birthday is in {v}.", (), "When is {p}'s birthday?",
                     ("January", "February", "March", "April", "June", "July", "August", "September", "October",
                      "November")),
    "allergy": Attr("{s} is allergic to {v}.", (), "What is {p} allergic to?",
                    ("peanuts", "penicillin", "shellfish", "latex", "bee stings", "sesame", "walnuts", "ibuprofen")),
    "medication": Attr("{s} takes {v} every evening.", (), "Which medication does {p} take?",
                       ("metformin", "lisinopril", "atorvastatin", "levothyroxine", "amlodipine", "sertraline",
                        "omeprazole", "warfarin")),
}
COMMON = ("city", "employer", "car", "sport", "dentist", "drink", "team", "birthday")
UPDATABLE = tuple(a for a in COMMON if ATTRS[a].updates)
CRITICAL = ("allergy", "medication")


@dataclass(frozen=True)
class Query:
    """A recurring query: the fact key asked, its text, ``as_of`` (None = now) and task class."""

    key: tuple[str, str]
    text: str
    as_of: str | None
    task: str


@dataclass
class World:
    """One generated world: observations in time order, the truth per ref, queries, episodes and budget."""

    family: str
    seed: int
    turns: list[Turn]
    versions: dict[tuple[str, str], list[tuple[str, str, str]]]  # key -> [(ref, value, time)] oldest first
    lookalikes: dict[tuple[str, str], set[str]]
    queries: list[Query]
    episodes: list[int]
    budget: int
    rare: set[int] = field(default_factory=set)  # indices of rarely asked critical queries

    def roles(self, q: Query) -> dict[str, str]:
        """ref -> role (gold / stale / future / lookalike) for query ``q``; other refs are irrelevant."""
        chain = self.versions[q.key]
        held = len(chain) - 1
        if q.as_of is not None:
            limit = parse_iso(q.as_of)
            held = max(i for i, (_, _, t) in enumerate(chain) if parse_iso(t) <= limit)
        out = {ref: "lookalike" for ref in self.lookalikes.get(q.key, ())}
        for i, (ref, _, _) in enumerate(chain):
            out[ref] = "gold" if i == held else ("stale" if i < held else "future")
        return out


class _Gen:
    """Accumulates (day, text, truth) rows and emits time-ordered turns."""

    def __init__(self, r: Any, family: str, seed: int) -> None:
        self.r = r
        self.family = family
        self.seed = seed
        self.rows: list[tuple[float, str, tuple[str, str] | None, str, str | None]] = []
        self.used: dict[str, set[str]] = {}
        self.held: dict[tuple[str, str], set[str]] = {}  # values each key's versions took
        self.relations: dict[tuple[str, str], set[str]] = {}

    def value(self, attr: str, avoid: set[str] | frozenset[str] = frozenset()) -> str:
        """A value of ``attr`` unused in this world if possible, never one in ``avoid``."""
        used = self.used.setdefault(attr, set())
        pool = [v for v in ATTRS[attr].values if v not in used and v not in avoid]
        v = self.r.choice(pool or [v for v in ATTRS[attr].values if v not in avoid])
        used.add(v)
        return v

    def add(self, day: float, text: str, key: tuple[str, str] | None = None, kind: str = "other",
            value: str | None = None) -> None:
        self.rows.append((day, text, key, kind, value))

    def fact(self, person: str, attr: str, day: float, versions: int = 1, span: float = 100.0) -> None:
        a = ATTRS[attr]
        days = sorted([day] + [day + self.r.uniform(5, span) for _ in range(versions - 1)])
        held = self.held.setdefault((person, attr), set())
        for i, d in enumerate(days):
            template = a.statement if i == 0 else self.r.choice(a.updates)
            v = self.value(attr, avoid=held)
            held.add(v)
            self.add(d, template.format(s=person, v=v), (person, attr), "version", v)

    def lookalike(self, person: str, attr: str, day: float) -> None:
        taken = self.relations.setdefault((person, attr), set())  # two look-alikes never share a subject
        relation = self.r.choice([rel for rel in RELATIONS if rel not in taken])
        taken.add(relation)
        value = self.value(attr, avoid=self.held.get((person, attr), set()))  # never the answer itself
        self.add(day, ATTRS[attr].statement.format(s=f"{person}'s {relation}", v=value), (person, attr), "lookalike")

    def chatter(self, people: Sequence[str], n: int, lo: float, hi: float) -> None:
        for _ in range(n):
            p, q = self.r.sample(list(people), 2)
            self.add(self.r.uniform(lo, hi), self.r.choice(CHATTER).format(p=p, q=q))

    def build(self) -> tuple[list[Turn], dict[tuple[str, str], list[tuple[str, str, str]]], dict[tuple[str, str], set[str]]]:
        rows = sorted(self.rows, key=lambda row: row[0])
        turns: list[Turn] = []
        versions: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        lookalikes: dict[tuple[str, str], set[str]] = {}
        start = "2024-01-01T08:00:00Z"
        for j, (day, text, key, kind, value) in enumerate(rows):
            when = shift(start, days=day, seconds=j)
            ref = f"{self.family}{self.seed}-o{j}"
            turns.append(Turn(text=text, speaker="user", time=when, ref=ref, session_id=f"{self.family}{self.seed}"))
            if key and kind == "version":
                versions.setdefault(key, []).append((ref, value or "", when))
            elif key and kind == "lookalike":
                lookalikes.setdefault(key, set()).add(ref)
        return turns, versions, lookalikes


def _zipf_episodes(r: Any, n_queries: int, n: int) -> list[int]:
    weights = [1.0 / (i + 1) for i in range(n_queries)]
    return r.choices(range(n_queries), weights=weights, k=n)


def make_world(seed: int, family: str, *, episodes: int = EPISODES, budget: int = DEFAULT_BUDGET) -> World:
    """The world of ``family`` for ``seed`` (deterministic).

    Raises:
        ValueError: unknown family.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")
    r = rng("outcome", seed, family)
    g = _Gen(r, family, seed)
    n_people = 10 if family == "control" else 6
    people = r.sample(NAMES, n_people)
    attrs = {p: r.sample(UPDATABLE if family in ("contradiction", "state_change") else COMMON, 4) for p in people}
    keys = [(p, a) for p in people for a in attrs[p]]
    n_queried = min(episodes, len(keys)) if family == "control" else 8
    queried = r.sample(keys, n_queried)
    early = family == "long_horizon"
    for key in keys:
        ask = key in queried
        if family == "contradiction" and ask:
            g.fact(*key, day=r.uniform(0, 30), versions=r.randint(2, 3), span=80)
        elif family == "state_change" and ask:
            g.fact(*key, day=r.uniform(0, 20), versions=r.randint(2, 3), span=100)
        else:
            g.fact(*key, day=r.uniform(0, 5) if early and ask else r.uniform(0, 100))
    n_look = {"distractor": 2, "budget_tight": 2, "long_horizon": 1, "control": 1, "useless_frequent": 1,
              "rare_critical": 1}.get(family, 0)
    for key in queried:
        for _ in range(n_look):
            g.lookalike(*key, day=r.uniform(0, 110))
    queries = [Query(k, ATTRS[k[1]].question.format(p=k[0]), None, k[1]) for k in queried]
    rare: set[int] = set()
    if family == "rare_critical":
        for p in people:
            for attr in CRITICAL:
                g.fact(p, attr, day=r.uniform(0, 10))
        critical = r.sample([(p, a) for p in people for a in CRITICAL], 2)
        for key in critical:
            g.lookalike(*key, day=r.uniform(0, 110))
            rare.add(len(queries))
            queries.append(Query(key, ATTRS[key[1]].question.format(p=key[0]), None, key[1]))
    if family == "useless_frequent":
        for p in people:
            g.add(r.uniform(0, 110), r.choice(GENERIC).format(p=p))
        for text in GLOBAL_GENERIC:
            g.add(r.uniform(0, 110), text)
    g.chatter(people, 40 if family == "long_horizon" else 8, 60 if family == "long_horizon" else 0, 120)
    turns, versions, lookalikes = g.build()
    if family == "state_change":
        timed = []
        for q in queries:
            chain = versions[q.key]
            k = r.randint(0, len(chain) - 2)
            t0, t1 = parse_iso(chain[k][2]), parse_iso(chain[k + 1][2])
            timed.append(Query(q.key, q.text, iso(t0 + (t1 - t0) / 2), q.task))
        queries = [q if i % 2 == 0 else timed[i] for i, q in enumerate(queries)]
    if family == "control":
        order = list(range(len(queries)))
        r.shuffle(order)
        plan = order[:episodes]
    elif family == "rare_critical":
        frequent = _zipf_episodes(r, len(queries) - len(rare), episodes)
        slots = r.sample(range(episodes // 4, episodes), 2 * len(rare))  # each critical query asked twice
        for slot, qi in zip(slots, sorted(rare) * 2, strict=True):
            frequent[slot] = qi
        plan = frequent
    else:
        plan = _zipf_episodes(r, len(queries), episodes)
    tight = max(20, budget // 2) if family == "budget_tight" else budget
    return World(family, seed, turns, versions, lookalikes, queries, plan, tight, rare)


def reader_draws(seed: int, family: str, episode: int) -> ReaderDraws:
    """The reader's draws for one episode (identical for every system and reader mode)."""
    r = rng("reader", seed, family, episode)
    return ReaderDraws(tuple(r.random() for _ in range(MAX_DRAWS)), tuple(r.random() for _ in range(MAX_DRAWS)),
                       r.random())


def _mentions(text: str, value: str) -> bool:
    return value.lower() in text.lower()


def item_role(item: RecalledItem, roles: dict[str, str], world: World, q: Query) -> str:
    """Role of a recalled item for query ``q``: by its refs (when they cite several roles, the first of gold,
    stale, future, look-alike); an item citing only other refs of this world is irrelevant; an item with no
    known ref takes the role of the newest version whose value its text names, else irrelevant."""
    found = [roles[r] for r in item.refs if r in roles]
    if found:
        for role in ("gold", "stale", "future", "lookalike"):
            if role in found:
                return role
    if any(r.startswith(f"{world.family}{world.seed}-") for r in item.refs):
        return "irrelevant"
    chain = world.versions[q.key]
    named = [ref for ref, value, _ in chain if _mentions(item.text, value)]
    return roles[named[-1]] if named else "irrelevant"


@dataclass(frozen=True)
class Episode:
    """One played episode: its index, query, the system's recall, what the reader saw (one ``ReaderItem``
    per recalled item, in order), the reader's draws and its verdict."""

    index: int
    query: Query
    result: RecallResult
    seen: list[ReaderItem]
    draws: ReaderDraws
    verdict: ReaderVerdict


def play_world(system: System, world: World, mode: str) -> Iterator[Episode]:
    """Ingest ``world`` into a fresh ``system`` and yield its episodes read by reader ``mode``, in order.

    The caller gives each episode's feedback before asking for the next one (learning happens between them).
    """
    system.reset()
    system.ingest(world.turns)
    for e, qi in enumerate(world.episodes):
        q = world.queries[qi]
        roles = world.roles(q)
        res = system.recall(q.text, world.budget, as_of=q.as_of, task=q.task)
        seen = [ReaderItem(item_role(it, roles, world, q), it.time if res.shows_dates else None,
                           presented_current(it, q.as_of)) for it in res.items]
        draws = reader_draws(world.seed, world.family, e)
        yield Episode(e, q, res, seen, draws, simulated_reader(seen[:MAX_DRAWS], mode, draws, q.as_of))


def run_world(system: System, world: World, mode: str) -> list[dict[str, Any]]:
    """Ingest ``world`` into a fresh ``system`` and play its episodes with reader ``mode``; one row per episode."""
    prefix = f"{world.family}{world.seed}-"
    rows = []
    for ep in play_world(system, world, mode):
        e, qi, res, verdict = ep.index, world.episodes[ep.index], ep.result, ep.verdict
        item_roles = [s.role for s in ep.seen]
        current = [s.current for s in ep.seen]
        used = [res.items[verdict.picked].id] if verdict.picked is not None else []
        system.feedback(res.id, verdict.success, used)
        n = len(res.items)
        rows.append({
            "episode": e, "query": qi, "rare": qi in world.rare, "success": verdict.success,
            "gold_recall": any(r == "gold" and c for r, c in zip(item_roles, current, strict=True)),
            "precision": (sum(r == "gold" for r in item_roles) / n) if n else 0.0,
            "tokens": res.tokens, "context_tokens": res.context_tokens,
            "stale_rate": any(r == "stale" and c for r, c in zip(item_roles, current, strict=True)),
            "latency_s": res.latency_s, "reason": verdict.reason,
            "foreign": sum(1 for it in res.items if it.refs and not any(r.startswith(prefix) for r in it.refs)),
        })
    return rows


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    return sum(float(r[key]) for r in rows) / len(rows) if rows else None


def run(
    make: Callable[[str], System],
    systems: Sequence[str],
    *,
    quick: bool = False,
    seeds: Sequence[int] | None = None,
    budget: int = DEFAULT_BUDGET,
    readers: Sequence[str] = READERS,
    families: Sequence[str] = FAMILIES,
    progress: Callable[..., Any] | None = None,
    episodes: int | None = None,
) -> dict[str, Any]:
    """Run the outcome suite; returns per reader, per system: overall metrics with 95% t-intervals over seeds,
    per-family means, and paired differences against ``flat`` (when ``flat`` is among ``systems``)."""
    seeds = tuple(seeds or (QUICK_SEEDS if quick else FULL_SEEDS))
    n_episodes = episodes or (QUICK_EPISODES if quick else EPISODES)
    worlds = [make_world(s, f, episodes=n_episodes, budget=budget) for s in seeds for f in families]
    # per reader -> system -> seed -> family -> metric mean
    table: dict[str, dict[str, dict[int, dict[str, dict[str, float | None]]]]] = {}
    timing: dict[str, dict[str, float]] = {}
    for name in systems:
        system = make(name)
        ingest_s = recall_s = 0.0
        n_turns = n_recalls = foreign = 0
        try:
            jobs = [(mode, w) for mode in readers for w in worlds]
            bar = progress(jobs, desc=f"outcome {name}") if progress else jobs
            for mode, w in bar:
                t0 = time.perf_counter()
                rows = run_world(system, w, mode)
                total = time.perf_counter() - t0
                lat = sum(r["latency_s"] for r in rows)
                recall_s += lat
                ingest_s += total - lat
                n_turns += len(w.turns)
                n_recalls += len(rows)
                foreign += sum(r["foreign"] for r in rows)
                fam = {k: _mean(rows, k) for k in (*METRICS, "context_tokens")}
                fam["rare_success"] = _mean([r for r in rows if r["rare"]], "success")
                table.setdefault(mode, {}).setdefault(name, {}).setdefault(w.seed, {})[w.family] = fam
        finally:
            system.close()
        timing[name] = {"ingest_ms_per_turn_approx": 1000 * ingest_s / max(1, n_turns),
                        "latency_ms_per_recall": 1000 * recall_s / max(1, n_recalls),
                        "foreign_items": foreign}
    return {
        "suite": "outcome",
        "protocol": "ReMem outcome worlds with a simulated reader (own implementation)",
        "config": {"seeds": list(seeds), "episodes_per_world": n_episodes, "budget": budget,
                   "budget_tight": max(20, budget // 2), "families": list(families), "readers": list(readers),
                   "quick": quick},
        "readers": {mode: summarize(table[mode], families) for mode in table},
        "timing": timing,
    }


def summarize(per_system: dict[str, dict[int, dict[str, dict[str, float | None]]]],
              families: Sequence[str]) -> dict[str, Any]:
    """Overall (mean over families per seed, then 95% t-interval over seeds), per family, and paired
    differences against ``flat`` (per seed difference, t-interval)."""
    out: dict[str, Any] = {}
    keys = (*METRICS, "context_tokens")

    def overall(seed_rows: dict[str, dict[str, float | None]], key: str) -> float | None:
        vals = [seed_rows[f][key] for f in families if f in seed_rows and seed_rows[f][key] is not None]
        return sum(vals) / len(vals) if vals else None  # type: ignore[arg-type]

    for name, per_seed in per_system.items():
        seeds = sorted(per_seed)
        res: dict[str, Any] = {"overall": {}, "by_family": {}, "paired_vs_flat": {}}
        for key in keys:
            res["overall"][key] = t_interval([overall(per_seed[s], key) for s in seeds])  # type: ignore[misc]
        for f in families:
            res["by_family"][f] = {key: t_interval([per_seed[s][f][key] for s in seeds if f in per_seed[s]])  # type: ignore[misc]
                                   for key in (*keys, "rare_success")}
        if "flat" in per_system and name != "flat":
            base = per_system["flat"]
            for key in keys:
                diffs = [overall(per_seed[s], key) - overall(base[s], key)  # type: ignore[operator]
                         for s in seeds if s in base]
                res["paired_vs_flat"][key] = t_interval(diffs)
            for f in families:
                diffs = [per_seed[s][f]["success"] - base[s][f]["success"]  # type: ignore[operator]
                         for s in seeds if s in base and f in per_seed[s]]
                res["paired_vs_flat"][f"success:{f}"] = t_interval(diffs)
        out[name] = res
    return out


def table(results: dict[str, Any]) -> str:
    """Markdown tables of an outcome results dict (one block per reader)."""
    from evals.report import fmt, markdown_table

    blocks = []
    for mode, per_system in results["readers"].items():
        rows = []
        for name, res in per_system.items():
            o = res["overall"]
            rows.append({"system": name, **{k: o[k] for k in (*METRICS, "context_tokens")},
                         "d_success": res["paired_vs_flat"].get("success"),
                         "d_tokens": res["paired_vs_flat"].get("tokens")})
        main = markdown_table(rows, [
            ("system", "system"), ("success", "task success"), ("d_success", "Δ success vs flat (paired)"),
            ("gold_recall", "gold recall"), ("precision", "context precision"), ("tokens", "tokens/task"),
            ("d_tokens", "Δ tokens vs flat"), ("context_tokens", "context tokens/task"),
            ("stale_rate", "stale in context"),
        ], digits=3)
        fam_rows = []
        for name, res in per_system.items():
            row: dict[str, Any] = {"system": name}
            for f in results["config"]["families"]:
                row[f] = fmt(res["by_family"][f]["success"], 2)
            row["rare"] = fmt(res["by_family"].get("rare_critical", {}).get("rare_success"), 2)
            fam_rows.append(row)
        fam = markdown_table(fam_rows, [("system", "system"), *[(f, f) for f in results["config"]["families"]],
                                        ("rare", "rare_critical: rare queries")])
        blocks.append(f"### Reader: {mode}\n\n{main}\n\nTask success by family (mean ± 95% t half-width over seeds):\n\n{fam}")
    timing = [{"system": name, **t} for name, t in results.get("timing", {}).items()]
    blocks.append("Cost (both readers):\n\n" + markdown_table(timing, [
        ("system", "system"), ("latency_ms_per_recall", "recall ms"),
        ("ingest_ms_per_turn_approx", "ingest ms/turn (approx.)"), ("foreign_items", "foreign items")]))
    return "\n\n".join(blocks)


def plots(results: dict[str, Any], out: Any) -> list[str]:
    """PNG plots: task success by family per system, one per reader."""
    from evals.report import bar_chart

    files = []
    for mode, per_system in results["readers"].items():
        fams = results["config"]["families"]
        series = {n: [r["by_family"][f]["success"]["mean"] for f in fams] for n, r in per_system.items()}
        errors = {n: [r["by_family"][f]["success"]["half"] for f in fams] for n, r in per_system.items()}
        name = f"success_{mode}.png"
        bar_chart(out / name, list(fams), series, errors=errors, title=f"Outcome worlds: task success ({mode} reader)",
                  ylabel="task success")
        files.append(name)
    return files
