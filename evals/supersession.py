"""Supersession suite: seeded decision histories judged by the EvoMem-MCP ODR/VDR protocol.

Generator (one seed gives the whole set; the default is the first TEST seed):

- 120 ODR scenarios: one target decision key with 2-6 versions (each replaces the previous), 3-6 distractor
  keys (look-alikes of the same kind first: the billing, analytics and accounts databases share a value pool)
  with 1-3 versions each, and 2-4 filler messages. Question: the target key now, and one ``as_of`` question
  at a time between two versions (the value held then).
- 80 VDR scenarios: a decision in scope A (e.g. "the cache layer in staging") that stays valid while the same
  key changes in scope B (production, the EU region, the analytics cluster, ...); half of the scope-B
  statements use change words ("we switched", "we replaced X with Y") that tempt a linker. Question: scope A.

Wording: every kind of update has at least 10 templates: ``restate`` (the replaced statement's own frame with
the new value), ``change`` (change words), ``plain`` (a new frame without change words) and ``paraphrase``
(shares no word with the replaced statement, values aside: "Invoice storage lives in CockroachDB."). Any update
may come from a different speaker than the original decision. The truth (which statement replaces which, what
holds when) is the generator's, never inferred from text.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evals.common import TEST_SEEDS, Turn, iso, parse_iso, rng, shift
from evals.judges import (
    Chain,
    DecisionVerdict,
    Version,
    judge_decision,
    link_scores,
    marked_doubtful,
    version_of,
)
from evals.systems import System, fresh_ingest

DEFAULT_BUDGET = 120  # tokens: less than a scenario holds (so retrieval must choose), several decisions
N_ODR, N_VDR = 120, 80
QUICK_ODR, QUICK_VDR = 12, 8

VALUES: dict[str, tuple[str, ...]] = {
    "database": ("PostgreSQL", "MySQL", "CockroachDB", "Aurora", "MariaDB", "MongoDB", "DynamoDB", "Cassandra",
                 "Spanner", "SQL Server", "Oracle", "TiDB", "YugabyteDB", "Neon"),
    "queue": ("Kafka", "RabbitMQ", "SQS", "NATS", "Pulsar", "Pub/Sub", "ActiveMQ", "Kinesis", "ZeroMQ", "Event Hubs"),
    "ci": ("GitHub Actions", "Jenkins", "CircleCI", "GitLab CI", "Buildkite", "TeamCity", "Drone", "Travis CI"),
    "frontend": ("React", "Vue", "Svelte", "Angular", "SolidJS", "Ember", "Preact", "Qwik"),
    "region": ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-northeast-1",
               "ca-central-1", "sa-east-1"),
    "logging": ("Loki", "Splunk", "Graylog", "Papertrail", "Sumo Logic", "Logz.io", "Fluent Bit", "Honeycomb"),
    "cache": ("Redis", "Memcached", "Hazelcast", "Varnish", "KeyDB", "Dragonfly", "Ehcache", "Aerospike"),
    "monitoring": ("Prometheus", "Grafana Cloud", "New Relic", "Datadog", "Zabbix", "Nagios", "Dynatrace", "Icinga"),
    "orchestration": ("Kubernetes", "Nomad", "ECS", "Docker Swarm", "OpenShift", "Fargate", "Cloud Run", "Rancher"),
    "identity": ("Okta", "Auth0", "Keycloak", "Cognito", "Azure AD", "Ping Identity", "OneLogin", "FusionAuth"),
    "payments": ("Stripe", "Adyen", "Braintree", "PayPal", "Square", "Mollie", "Checkout.com", "Worldpay"),
    "search": ("Elasticsearch", "OpenSearch", "Solr", "Algolia", "Meilisearch", "Typesense", "Vespa", "Sphinx"),
}


@dataclass(frozen=True)
class Topic:
    """A decision key: its value pool, the noun phrase naming it, aliases sharing no word with that phrase,
    and questions asking for its current value."""

    key: str
    family: str
    canon: str
    aliases: tuple[str, ...]
    questions: tuple[str, ...]


TOPICS: tuple[Topic, ...] = (
    Topic("billing_db", "database", "the billing database", ("invoice storage", "payment bookkeeping"),
          ("Which database does billing run on?", "Where is billing data stored?")),
    Topic("analytics_db", "database", "the analytics database", ("reporting storage", "metrics warehousing"),
          ("Which database backs analytics?", "What stores our analytics data?")),
    Topic("accounts_db", "database", "the user accounts database", ("customer profile storage", "login data"),
          ("Which database holds user accounts?", "Where are user accounts stored?")),
    Topic("message_queue", "queue", "the message queue", ("async job delivery", "event transport"),
          ("Which message queue do we use?", "What carries our async events?")),
    Topic("email_queue", "queue", "the email job queue", ("outgoing mail dispatch", "newsletter sending"),
          ("What queue do email jobs go through?", "Which queue handles outgoing email?")),
    Topic("ci", "ci", "the CI provider", ("build automation", "pipeline execution"),
          ("Which CI provider do we use?", "Where do our builds run?")),
    Topic("frontend", "frontend", "the frontend framework", ("browser UI code", "web client rendering"),
          ("Which frontend framework do we use?", "What is the web UI built with?")),
    Topic("deploy_region", "region", "the deploy region", ("server hosting location", "primary datacenter"),
          ("Which region do we deploy to?", "Where are our servers hosted?")),
    Topic("logging", "logging", "the logging stack", ("log aggregation", "application telemetry collection"),
          ("What do we use for logging?", "Where do application logs go?")),
    Topic("cache", "cache", "the cache layer", ("session caching", "hot data storage"),
          ("What do we use as the cache?", "Which cache do we run?")),
    Topic("monitoring", "monitoring", "the monitoring tool", ("uptime alerting", "metrics observability"),
          ("Which monitoring tool do we use?", "What handles our alerting?")),
    Topic("orchestration", "orchestration", "the container platform", ("workload scheduling", "service orchestration"),
          ("Which container platform do we run on?", "What schedules our workloads?")),
    Topic("identity", "identity", "the identity provider", ("workforce authentication", "employee login"),
          ("Which identity provider do we use?", "What handles single sign-on?")),
    Topic("payments", "payments", "the payment processor", ("card charging", "checkout handling"),
          ("Which payment processor do we use?", "Who processes card payments?")),
    Topic("search", "search", "the search engine", ("full-text lookup", "site querying"),
          ("Which search engine do we use?", "What powers site search?")),
)
TOPIC_BY_KEY = {t.key: t for t in TOPICS}

SCOPES = ("staging", "production", "the EU region", "the analytics cluster", "the mobile app", "internal tools")

DECIDE = (
    "We use {v} for {canon}.",
    "{Canon} runs on {v}.",
    "Decision: {canon} will use {v}.",
    "We picked {v} for {canon}.",
    "We're going with {v} for {canon}.",
    "For {canon}, we settled on {v}.",
    "{v} is our choice for {canon}.",
    "Let's standardize on {v} for {canon}.",
    "The team agreed to use {v} for {canon}.",
    "Agreed in the design review: {v} for {canon}.",
)
CHANGE = (
    "We switched {canon} to {v}.",
    "We're moving {canon} to {v}.",
    "We replaced {old} with {v} for {canon}.",
    "{Canon} migrated from {old} to {v}.",
    "Change of plan: {canon} now uses {v}.",
    "From now on {canon} uses {v} instead of {old}.",
    "We no longer use {old} for {canon}; it's {v} now.",
    "Update: {canon} has moved to {v}.",
    "{Canon} is switching over to {v}.",
    "We dropped {old} in favor of {v} for {canon}.",
    "Heads up: {canon} changed to {v}.",
)
PLAIN = (
    "{Canon} is {v}.",
    "{v} is used for {canon}.",
    "{Canon}: {v}.",
    "Our pick for {canon} is {v}.",
    "{Canon} should be {v}.",
    "{v} handles {canon}.",
    "{Canon} is on {v}.",
    "We rely on {v} for {canon}.",
    "{v} serves as {canon}.",
    "For {canon} it's {v}.",
    "Per the architecture doc, {canon} is {v}.",
)
PARAPHRASE = (
    "{Alias} sits on {v} nowadays.",
    "{v} holds {alias}.",
    "{Alias} lives in {v}.",
    "{v} powers {alias}.",
    "{Alias} is handled by {v}.",
    "{v} took over {alias}.",
    "{Alias}: {v} going forward.",
    "{Alias} runs atop {v} these days.",
    "{v} backs {alias} as of this sprint.",
    "Heads up, {alias} goes through {v}.",
    "{v} is responsible for {alias}.",
    "{Alias} relies on {v}.",
)
UPDATE_KINDS = ("restate", "change", "plain", "paraphrase")

FILLERS = (
    "Thanks, sounds good.",
    "Can someone book a room for the retro?",
    "I'll be out on Friday.",
    "Reminder: all-hands at 3pm.",
    "Nice work on the release, everyone.",
    "Who is on call this weekend?",
    "I pushed the slides to the shared drive.",
    "Lunch order closes at noon.",
    "Let's pick this up after standup.",
    "Welcome aboard, Priya!",
)
SPEAKERS = ("alice", "bob", "carol", "dan", "erin")
UNSEEN_TEMPLATES = Path(__file__).resolve().parent / "supersession_unseen_templates.json"


@dataclass(frozen=True)
class Templates:
    """One set of message templates: ``decide`` (first statements and ``restate`` updates), ``change``,
    ``plain``, ``paraphrase`` and ``fillers``. ``dev`` is the set the linker was developed against; ``unseen``
    (``evals/supersession_unseen_templates.json``) was written by a helper who had read neither the linker nor
    the dev templates, and is never tuned on (issue 11)."""

    name: str
    decide: tuple[str, ...]
    change: tuple[str, ...]
    plain: tuple[str, ...]
    paraphrase: tuple[str, ...]
    fillers: tuple[str, ...]

    def of(self, kind: str) -> tuple[str, ...]:
        return {"restate": self.decide, "change": self.change, "plain": self.plain, "paraphrase": self.paraphrase}[kind]


DEV = Templates("dev", DECIDE, CHANGE, PLAIN, PARAPHRASE, FILLERS)
TEMPLATE_SETS = ("dev", "unseen")


def load_templates(name: str) -> Templates:
    """The template set ``name`` (``dev`` or ``unseen``). Raises ``ValueError`` for another name or a
    malformed file."""
    if name == "dev":
        return DEV
    if name != "unseen":
        raise ValueError(f"unknown template set {name!r} (choose from {', '.join(TEMPLATE_SETS)})")
    import json

    try:
        raw = json.loads(UNSEEN_TEMPLATES.read_text(encoding="utf-8"))
        return Templates("unseen", *(tuple(str(t) for t in raw[k]) for k in ("restate", "change", "plain", "paraphrase", "fillers")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{UNSEEN_TEMPLATES}: not a template file ({type(exc).__name__}: {exc})") from None


def words(text: str) -> set[str]:
    """Lower-case word set of ``text`` (letters and digits)."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def render(template: str, *, v: str, canon: str = "", alias: str = "", old: str = "") -> str:
    """Fill a template; ``{Canon}``/``{Alias}`` are capitalised forms."""
    return template.format(v=v, canon=canon, Canon=_cap(canon), alias=alias, Alias=_cap(alias), old=old)


@dataclass(frozen=True)
class Statement:
    """A generated message with its truth: chain key (None for fillers), value, wording kind, template."""

    turn: Turn
    chain: str | None
    value: str | None
    kind: str
    template: str
    different_speaker: bool = False


@dataclass(frozen=True)
class Question:
    """A question about ``chain`` at ``as_of`` (None = now). ``kind``: ``odr`` | ``asof`` | ``vdr``.
    ``update_kind`` and ``different_speaker`` describe the latest version's wording (for breakdowns)."""

    text: str
    chain: Chain
    as_of: str | None
    kind: str
    update_kind: str
    different_speaker: bool


@dataclass
class Scenario:
    """One decision history: its messages in time order, all chains (link truth) and its questions."""

    id: str
    kind: str
    turns: list[Turn]
    chains: list[Chain]
    questions: list[Question]
    statements: list[Statement] = field(default_factory=list)

    @property
    def refs(self) -> set[str]:
        return {t.ref for t in self.turns}


def _pick_template(r: Any, kind: str, *, canon: str, v: str, old: str, prev_text: str, prev_template: str,
                   aliases: Sequence[str], templates: Templates = DEV) -> tuple[str, str]:
    """(text, template) of an update of ``kind`` replacing ``prev_text`` (value ``old``) by ``v``."""
    if kind == "restate":
        template = prev_template if prev_template in templates.decide else r.choice(templates.decide)
        return render(template, v=v, canon=canon), template
    if kind == "paraphrase":
        banned = words(prev_text) - words(old) - words(v)
        options = [(t, a) for t in templates.paraphrase for a in aliases]
        r.shuffle(options)
        for template, alias in options:
            text = render(template, v=v, alias=alias)
            if not ((words(text) - words(v)) & banned):
                return text, template
        raise ValueError(f"no paraphrase shares no word with {prev_text!r}")
    template = r.choice(templates.of(kind))
    return render(template, v=v, canon=canon, old=old), template


def _scope_ok(topic: Topic, scope: str) -> bool:
    return not ((words(scope) - {"the"}) & words(topic.canon))


class _Builder:
    """Accumulates the chains of one scenario, then lays them out in time."""

    def __init__(self, r: Any, sid: str, speaker: str, templates: Templates = DEV) -> None:
        self.r = r
        self.templates = templates
        self.sid = sid
        self.speaker = speaker
        self.sequences: list[list[dict[str, Any]]] = []
        self.used: dict[str, set[str]] = defaultdict(set)

    def values(self, family: str, n: int) -> list[str] | None:
        pool = [v for v in VALUES[family] if v not in self.used[family]]
        if len(pool) < n:
            return None
        chosen = self.r.sample(pool, n)
        self.used[family].update(chosen)
        return chosen

    def chain(self, topic: Topic, values: list[str], kinds: Sequence[str], *, scope: str = "",
              other_speaker: Sequence[bool] = (), first_old: str = "", first_kind: str = "decide") -> str:
        """Add a chain of ``values`` (first stated with ``first_kind``, then updates of ``kinds``)."""
        key = f"{topic.key}@{scope}" if scope else topic.key
        canon = f"{topic.canon} in {scope}" if scope else topic.canon
        msgs: list[dict[str, Any]] = []
        prev_text, prev_template = "", ""
        for i, value in enumerate(values):
            kind = first_kind if i == 0 else kinds[i - 1]
            different = bool(other_speaker[i - 1]) if i > 0 and other_speaker else False
            if kind == "decide":
                template = self.r.choice(self.templates.decide)
                text = render(template, v=value, canon=canon)
            else:
                old = values[i - 1] if i > 0 else first_old
                text, template = _pick_template(self.r, kind, canon=canon, v=value, old=old, prev_text=prev_text,
                                                prev_template=prev_template, aliases=topic.aliases if not scope else [],
                                                templates=self.templates)
            speaker = self.r.choice([s for s in SPEAKERS if s != self.speaker]) if different else self.speaker
            msgs.append({"text": text, "speaker": speaker, "chain": key, "value": value, "kind": kind,
                         "template": template, "different": different})
            prev_text, prev_template = text, template
        self.sequences.append(msgs)
        return key

    def fillers(self, n: int) -> None:
        for text in self.r.sample(self.templates.fillers, n):
            self.sequences.append([{"text": text, "speaker": self.r.choice(SPEAKERS), "chain": None, "value": None,
                                    "kind": "filler", "template": text, "different": False}])

    def layout(self, start: datetime) -> tuple[list[Statement], dict[str, Chain]]:
        """Interleave the sequences at random (each keeps its order) and date them 0.5-6 days apart."""
        queues = [list(s) for s in self.sequences]
        ordered: list[dict[str, Any]] = []
        while any(queues):
            weights = [len(q) for q in queues]
            q = self.r.choices(range(len(queues)), weights=weights)[0]
            ordered.append(queues[q].pop(0))
        now = iso(start)
        statements: list[Statement] = []
        versions: dict[str, list[Version]] = defaultdict(list)
        for j, m in enumerate(ordered):
            now = shift(now, days=self.r.uniform(0.5, 6.0))
            ref = f"{self.sid}-m{j}"
            turn = Turn(text=m["text"], speaker=m["speaker"], time=now, ref=ref, session_id=self.sid)
            statements.append(Statement(turn, m["chain"], m["value"], m["kind"], m["template"], m["different"]))
            if m["chain"]:
                versions[m["chain"]].append(Version(ref, m["value"], now))
        return statements, {k: Chain(k, tuple(v)) for k, v in versions.items()}


def _distractors(r: Any, b: _Builder, target: Topic, n: int, exclude: set[str]) -> None:
    lookalikes = [t for t in TOPICS if t.family == target.family and t.key not in exclude]
    others = [t for t in TOPICS if t.family != target.family and t.key not in exclude]
    r.shuffle(lookalikes)
    r.shuffle(others)
    chosen = (lookalikes[: r.randint(0, len(lookalikes))] + others)[:n]
    for topic in chosen:
        k = r.randint(1, 3)
        values = b.values(topic.family, k)
        if values is None:
            continue
        kinds = [r.choice(UPDATE_KINDS) for _ in range(k - 1)]
        b.chain(topic, values, kinds, other_speaker=[r.random() < 0.3 for _ in kinds])


def odr_scenario(seed: int, index: int, templates: Templates = DEV) -> Scenario:
    """ODR scenario ``index`` of ``seed``: the target key's final update kind cycles through
    ``UPDATE_KINDS`` with ``index`` and every third one comes from a different speaker."""
    r = rng("odr", seed, index)
    sid = f"odr{seed}-{index}"
    speaker = r.choice(SPEAKERS)
    b = _Builder(r, sid, speaker, templates)
    target = r.choice(TOPICS)
    n = r.randint(2, 6)
    values = b.values(target.family, n)
    assert values is not None
    kinds = [r.choice(UPDATE_KINDS) for _ in range(n - 2)] + [UPDATE_KINDS[index % len(UPDATE_KINDS)]]
    other = [r.random() < 0.3 for _ in range(n - 2)] + [index % 3 == 0]
    key = b.chain(target, values, kinds, other_speaker=other)
    _distractors(r, b, target, r.randint(3, 6), {target.key})
    b.fillers(r.randint(2, 4))
    statements, chains = b.layout(datetime(2024, 1, 1))
    chain = chains[key]
    text = r.choice(target.questions)
    questions = [Question(text, chain, None, "odr", kinds[-1], other[-1])]
    k = r.randint(0, n - 2)
    t0, t1 = parse_iso(chain.versions[k].time), parse_iso(chain.versions[k + 1].time)
    as_of = iso(t0 + (t1 - t0) / 2)
    questions.append(Question(text, chain, as_of, "asof", kinds[k - 1] if k > 0 else "decide", bool(k > 0 and other[k - 1])))
    return Scenario(sid, "odr", [s.turn for s in statements], list(chains.values()), questions, statements)


def vdr_scenario(seed: int, index: int, templates: Templates = DEV) -> Scenario:
    """VDR scenario ``index`` of ``seed``: the scope-B statement uses change words when ``index`` is even."""
    r = rng("vdr", seed, index)
    sid = f"vdr{seed}-{index}"
    speaker = r.choice(SPEAKERS)
    b = _Builder(r, sid, speaker, templates)
    target = r.choice(TOPICS)
    scopes = [s for s in SCOPES if _scope_ok(target, s)]
    scope_a, scope_b = r.sample(scopes, 2)
    tempting = index % 2 == 0
    n_b = r.randint(1, 2)
    values = b.values(target.family, 1 + n_b)
    assert values is not None
    key_a = b.chain(target, values[:1], [], scope=scope_a)
    b_kind = "change" if tempting else r.choice(("restate", "plain"))
    if n_b == 1:  # a lone scope-B statement; with change words it names scope A's value as the replaced one
        b.chain(target, values[1:], [], scope=scope_b, first_old=values[0],
                first_kind="decide" if b_kind == "restate" else b_kind)
    else:
        b.chain(target, values[1:], [b_kind], scope=scope_b, other_speaker=[r.random() < 0.3])
    b.sequences[-2:] = [b.sequences[-2] + b.sequences[-1]]  # scope A is stated before scope B
    _distractors(r, b, target, r.randint(3, 5), {target.key})
    b.fillers(r.randint(2, 4))
    statements, chains = b.layout(datetime(2024, 1, 1))
    chain_a = chains[key_a]
    text = f"What do we use for {target.canon} in {scope_a}?"
    question = Question(text, chain_a, None, "vdr", "change" if tempting else "plain", False)
    return Scenario(sid, "vdr", [s.turn for s in statements], list(chains.values()), [question], statements)


def generate(seed: int, n_odr: int = N_ODR, n_vdr: int = N_VDR, templates: Templates = DEV) -> list[Scenario]:
    """All scenarios of ``seed``: ``n_odr`` ODR scenarios then ``n_vdr`` VDR scenarios, worded with ``templates``."""
    return [odr_scenario(seed, i, templates) for i in range(n_odr)] + [vdr_scenario(seed, i, templates) for i in range(n_vdr)]


# ---------------------------------------------------------------------------------------------------------
# Runner
# ---------------------------------------------------------------------------------------------------------


def _rate(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def marked_replaced(items: Sequence[Any], chain: Chain, known: set[str], as_of: str | None) -> bool:
    """The held version is in the context but marked as not current or doubtful (hidden by a wrong link)."""
    held = chain.held_at(as_of)
    return any(version_of(it, chain, known) == held and marked_doubtful(it, as_of) for it in items)


def run(
    make: Callable[[str], System],
    systems: Sequence[str],
    *,
    quick: bool = False,
    seeds: Sequence[int] = (TEST_SEEDS[0],),
    budget: int = DEFAULT_BUDGET,
    progress: Callable[..., Any] | None = None,
    counts: tuple[int, int] | None = None,
    templates: str = "dev",
) -> dict[str, Any]:
    """Run the supersession suite for ``systems`` (built by ``make(name)``) and return the results dict.

    ``counts`` = (ODR, VDR) scenarios per seed overrides the defaults (120/80, quick 12/8); ``templates``: the
    wording set, ``dev`` or ``unseen`` (``load_templates``)."""
    n_odr, n_vdr = counts or ((QUICK_ODR, QUICK_VDR) if quick else (N_ODR, N_VDR))
    wording = load_templates(templates)
    scenarios = [s for seed in seeds for s in generate(seed, n_odr, n_vdr, wording)]
    results: dict[str, Any] = {}
    per_question: dict[str, list[dict[str, Any]]] = {}
    for name in systems:
        system = make(name)
        rows: list[dict[str, Any]] = []
        tp = pred = replaced = 0
        links_supported = True
        ingest_s = 0.0
        n_turns = 0
        bar = progress(scenarios, desc=f"supersession {name}") if progress else scenarios
        try:
            for sc in bar:
                ingest_s += fresh_ingest(system, sc.turns)
                n_turns += len(sc.turns)
                known = sc.refs
                for q in sc.questions:
                    res = system.recall(q.text, budget, as_of=q.as_of)
                    v: DecisionVerdict = judge_decision(res.items, q.chain, as_of=q.as_of, shows_dates=res.shows_dates,
                                                        known_refs=known, strict=q.kind == "vdr")
                    rows.append({
                        "scenario": sc.id, "kind": q.kind, "update_kind": q.update_kind,
                        "different_speaker": q.different_speaker, "versions": len(q.chain.versions),
                        "stale": v.stale, "stale_dated": v.stale_dated, "current_found": v.current_found,
                        "hidden": v.hidden, "future_leak": v.future_leak,
                        "marked_replaced": marked_replaced(res.items, q.chain, known, q.as_of),
                        "foreign": sum(1 for it in res.items if it.refs and not set(it.refs) & known),
                        "tokens": res.tokens, "context_tokens": res.context_tokens, "latency_s": res.latency_s,
                    })
                pairs = system.links()
                if pairs is None:
                    links_supported = False
                else:
                    s = link_scores(pairs, sc.chains)
                    tp += s.true_positives
                    pred += s.predicted
                    replaced += s.replaced
        finally:
            system.close()
        results[name] = summarize(rows, tp, pred, replaced, links_supported, ingest_s, n_turns)
        per_question[name] = rows
    return {
        "suite": "supersession",
        "protocol": "EvoMem-MCP ODR/VDR (own implementation)",
        "config": {"seeds": list(seeds), "budget": budget, "odr_scenarios": n_odr * len(seeds),
                   "vdr_scenarios": n_vdr * len(seeds), "quick": quick, "templates": wording.name},
        "systems": results,
        "breakdown": breakdown(per_question),
    }


def summarize(rows: list[dict[str, Any]], tp: int, pred: int, replaced: int, links_supported: bool,
              ingest_s: float, n_turns: int) -> dict[str, Any]:
    """Suite metrics of one system from its per-question rows (see evals/README.md for definitions)."""
    odr = [r for r in rows if r["kind"] == "odr"]
    asof = [r for r in rows if r["kind"] == "asof"]
    vdr = [r for r in rows if r["kind"] == "vdr"]
    n = max(1, len(rows))
    return {
        "odr": _rate([r["stale"] for r in odr]),
        "odr_dated": _rate([r["stale_dated"] for r in odr]),
        "current_found": _rate([r["current_found"] for r in odr]),
        "vdr_hidden": sum(r["hidden"] for r in vdr),
        "vdr_total": len(vdr),
        "vdr_rate": _rate([r["hidden"] for r in vdr]),
        "vdr_marked_replaced": sum(r["marked_replaced"] for r in vdr),
        "asof_correct": _rate([r["current_found"] for r in asof]),
        "asof_stale": _rate([r["stale"] for r in asof]),
        "asof_stale_dated": _rate([r["stale_dated"] for r in asof]),
        "asof_future_leak": _rate([r["future_leak"] for r in asof]),
        "link_precision": (tp / pred if pred else None) if links_supported else None,
        "link_recall": (tp / replaced if replaced else None) if links_supported else None,
        "links_made": pred if links_supported else None,
        "tokens_per_question": sum(r["tokens"] for r in rows) / n,
        "context_tokens_per_question": sum(r["context_tokens"] for r in rows) / n,
        "latency_ms_per_question": 1000 * sum(r["latency_s"] for r in rows) / n,
        "ingest_ms_per_turn": 1000 * ingest_s / max(1, n_turns),
        "questions": len(rows),
        "foreign_items": sum(r.get("foreign", 0) for r in rows),
    }


def breakdown(per_question: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """ODR (strict and dated) per wording of the latest update, and by same vs different speaker."""
    out: dict[str, Any] = {}
    for name, rows in per_question.items():
        odr = [r for r in rows if r["kind"] == "odr"]
        by: dict[str, Any] = {}
        for kind in UPDATE_KINDS:
            sel = [r for r in odr if r["update_kind"] == kind]
            by[kind] = {"n": len(sel), "odr": _rate([r["stale"] for r in sel]),
                        "odr_dated": _rate([r["stale_dated"] for r in sel]),
                        "current_found": _rate([r["current_found"] for r in sel])}
        for label, flag in (("same_speaker", False), ("different_speaker", True)):
            sel = [r for r in odr if r["different_speaker"] == flag]
            by[label] = {"n": len(sel), "odr": _rate([r["stale"] for r in sel]),
                         "odr_dated": _rate([r["stale_dated"] for r in sel]),
                         "current_found": _rate([r["current_found"] for r in sel])}
        vdr = [r for r in rows if r["kind"] == "vdr"]
        for label, kind in (("vdr_change_words", "change"), ("vdr_no_change_words", "plain")):
            sel = [r for r in vdr if r["update_kind"] == kind]
            by[label] = {"n": len(sel), "hidden": sum(r["hidden"] for r in sel)}
        out[name] = by
    return out


def write_sample(path: Path, seed: int = TEST_SEEDS[0], n: int = 3) -> None:
    """Write a few generated scenarios as readable text (for eyeballing the generator)."""
    lines = []
    for sc in generate(seed, n, n):
        lines.append(f"## {sc.id} ({sc.kind})")
        for st in sc.statements:
            tag = f"{st.chain} = {st.value} [{st.kind}{', other speaker' if st.different_speaker else ''}]" if st.chain else "filler"
            lines.append(f"- {st.turn.time[:10]} {st.turn.speaker}: {st.turn.text}   <- {tag}")
        for q in sc.questions:
            held = q.chain.versions[q.chain.held_at(q.as_of) or 0].value
            lines.append(f"- Q ({q.kind}{', as_of ' + q.as_of if q.as_of else ''}): {q.text} -> {held}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def table(results: dict[str, Any]) -> str:
    """Markdown tables of a supersession results dict."""
    from evals.report import markdown_table

    rows = []
    for name, m in results["systems"].items():
        rows.append({"system": name, **m, "vdr": f"{m['vdr_hidden']}/{m['vdr_total']}"})
    main = markdown_table(rows, [
        ("system", "system"), ("odr", "ODR"), ("odr_dated", "ODR (date-reading)"), ("current_found", "current found"),
        ("vdr", "VDR hidden"), ("vdr_marked_replaced", "VDR marked replaced"), ("asof_correct", "as_of correct"),
        ("asof_stale", "as_of stale"), ("asof_stale_dated", "as_of stale (date-reading)"),
        ("asof_future_leak", "as_of future leak"), ("link_precision", "link P"), ("link_recall", "link R"),
        ("links_made", "links"), ("tokens_per_question", "tokens/q"), ("context_tokens_per_question", "context tokens/q"),
        ("latency_ms_per_question", "recall ms"), ("ingest_ms_per_turn", "ingest ms/turn"),
    ], digits=3)
    brows = []
    for name, by in results["breakdown"].items():
        row: dict[str, Any] = {"system": name}
        for kind in (*UPDATE_KINDS, "same_speaker", "different_speaker"):
            row[kind] = f"{_f(by[kind]['odr'])} / {_f(by[kind]['odr_dated'])} (n={by[kind]['n']})"
        row["vdr_cw"] = f"{by['vdr_change_words']['hidden']}/{by['vdr_change_words']['n']}"
        row["vdr_ncw"] = f"{by['vdr_no_change_words']['hidden']}/{by['vdr_no_change_words']['n']}"
        brows.append(row)
    cols = [("system", "system")] + [(k, f"{k} ODR / dated") for k in (*UPDATE_KINDS, "same_speaker", "different_speaker")]
    cols += [("vdr_cw", "VDR hidden, change words"), ("vdr_ncw", "VDR hidden, no change words")]
    return main + "\n\nODR by the wording of the latest update (strict / date-reading):\n\n" + markdown_table(brows, cols)


def _f(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


def plots(results: dict[str, Any], out: Path) -> list[str]:
    """PNG plots of a supersession results dict into ``out``; returns the file names."""
    from evals.report import bar_chart

    names = list(results["systems"])
    metrics = [("odr", "ODR"), ("odr_dated", "ODR date-reading"), ("vdr_rate", "VDR hidden rate"),
               ("asof_stale", "as_of stale"), ("current_found", "current found")]
    series = {n: [results["systems"][n][k] for k, _ in metrics] for n in names}
    bar_chart(out / "supersession.png", [label for _, label in metrics], series,
              title="Supersession (EvoMem-MCP ODR/VDR protocol)", ylabel="rate")
    kinds = (*UPDATE_KINDS, "different_speaker")
    series2 = {n: [results["breakdown"][n][k]["odr"] for k in kinds] for n in names}
    bar_chart(out / "odr_by_update_kind.png", list(kinds), series2, title="ODR by wording of the latest update",
              ylabel="ODR (strict)")
    return ["supersession.png", "odr_by_update_kind.png"]
