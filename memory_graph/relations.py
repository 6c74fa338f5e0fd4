"""The learned update detector: how a later statement relates to an earlier one.

A cross-encoder (all-MiniLM-L6-v2 fine-tuned here on the corpus in ``training/``; see ``training/MODEL_CARD.md``)
reads one pair, the earlier statement and the later one, each with its speaker and date, and gives a probability
for each of eight relations (``LABELS``):

- ``replaces``: same fact, a new value holds now;
- ``corrects``: the earlier was a mistake, the later fixes it;
- ``ends``: the earlier is no longer true and nothing replaces it;
- ``restates``: the same fact with the same value again;
- ``adds``: both stay true (another item, scope or person);
- ``unrelated``: a look-alike about something else;
- ``hypothetical``: a question, plan or wish: nothing changes;
- ``forget``: the later asks to forget the earlier.

The model ships inside the package as int8 ONNX (``memory_graph/models/update_relations/``) and runs through
onnxruntime with the ``tokenizers`` fast tokenizer: no torch at run time. It is loaded on first use (about
0.2 s) and shared by the process.

Public: :func:`classify` (one pair), :func:`classify_many` (a batch), :class:`RelationModel` (the loaded model, to
inject into the pure linking decision), :func:`pair_text` (the one formatting of a pair, used by training too).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from memory_graph.config import check_unicode
from memory_graph.errors import InvalidInputError
from memory_graph.parallel import side_by_side

LABELS = ("replaces", "corrects", "ends", "restates", "adds", "unrelated", "hypothetical", "forget")
"""The relation labels, in the model's output order (the one place that owns them)."""
OUTDATES = frozenset({"replaces", "corrects", "ends", "forget"})
"""Relations under which the later statement outdates the earlier one."""
MODEL_DIR = Path(__file__).resolve().parent / "models" / "update_relations"
MAX_TEXT_CHARS = 2_000
"""Each side's text is cut to this many characters before tokenising (the model reads at most ``max_tokens``)."""


@dataclass(frozen=True)
class Relation:
    """One pair's verdict: the most probable ``label`` and its ``probability``, and every label's probability
    (``probs``, in ``LABELS`` order). ``outdates`` is the probability that the later outdates the earlier (the sum
    over ``OUTDATES``)."""

    label: str
    probability: float
    probs: tuple[float, ...]

    @property
    def outdates(self) -> float:
        return float(sum(p for lab, p in zip(LABELS, self.probs, strict=True) if lab in OUTDATES))

    def p(self, label: str) -> float:
        """The probability of ``label`` (one of ``LABELS``)."""
        return self.probs[LABELS.index(label)]


def _side(value: Any, name: str) -> tuple[str, str, str]:
    """``(speaker, date, text)`` of one side of a pair; raises ``InvalidInputError`` on a wrong shape."""
    if isinstance(value, str):
        value = {"text": value}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{name} must be a dict with speaker, date and text (or a text), not {type(value).__name__}")
    text = value.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(f"{name}['text'] must be a non-empty string")
    speaker = value.get("speaker") or "user"
    if not isinstance(speaker, str):
        raise InvalidInputError(f"{name}['speaker'] must be a string")
    when = value.get("date") or ""
    if isinstance(when, datetime | date):
        when = when.isoformat()
    if not isinstance(when, str):
        raise InvalidInputError(f"{name}['date'] must be an ISO-8601 string, a date or a datetime")
    if when:
        try:
            date.fromisoformat(when.strip()[:10])
        except ValueError:
            raise InvalidInputError(f"{name}['date'] is not an ISO-8601 date: {when[:40]!r}") from None
    check_unicode(f"{name}['text']", text)  # a lone surrogate: InvalidInputError, not the tokenizer's TypeError
    check_unicode(f"{name}['speaker']", speaker)
    return speaker.strip().lower() or "user", when.strip()[:10], text.strip()[:MAX_TEXT_CHARS]


def pair_text(earlier: Mapping[str, Any] | str, later: Mapping[str, Any] | str) -> tuple[str, str]:
    """The two texts the cross-encoder reads for a pair: ``"<speaker>, <YYYY-MM-DD>: <text>"`` for each side (the
    date is left out when unknown). Each side is a dict with ``text`` and optionally ``speaker`` (default
    ``user``) and ``date`` (ISO-8601; only the day is read), or a bare text. Training and inference both format
    pairs here. Raises ``InvalidInputError`` on an empty text or a wrong type."""
    out = []
    for name, side in (("earlier", earlier), ("later", later)):
        speaker, when, text = _side(side, name)
        out.append(f"{speaker}, {when}: {text}" if when else f"{speaker}: {text}")
    return out[0], out[1]


class RelationModel:
    """The shipped cross-encoder, loaded from ``model_dir`` (``model.onnx``, ``tokenizer.json``, ``config.json``).
    Thread-safe. Raises ``FileNotFoundError`` when the folder lacks a file."""

    def __init__(self, model_dir: Path | str = MODEL_DIR) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        folder = Path(model_dir)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if tuple(config["labels"]) != LABELS:
            raise ValueError(f"{folder}: the model's labels {config['labels']} are not {LABELS}")
        self.max_tokens = int(config.get("max_tokens", 128))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        self._tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # threads wait without spinning: on a shared 2-core machine spinning doubled a run's wall time (issue 22)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.intra_op_num_threads = 1  # pairs run side by side instead (one pair alone: 5.9 ms with 1 or 2 threads)
        self._session = onnxruntime.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax probabilities, shape ``(len(pairs), len(LABELS))`` float32, for pairs already formatted by
        :func:`pair_text`, in the order of ``pairs``. Each pair is one run of the model: the int8 model's dynamic
        quantisation scales activations by the whole input tensor, so in a batch a pair's probabilities moved with
        the other pairs and their padding (by up to 0.23 on 160 LoCoMo pairs in batches of 8); alone, a pair
        always gets the same figures. On CPU it is not slower (4.6 ms a pair alone against 5.9 ms in batches of
        8: no padding). The pairs' runs go side by side (``parallel.side_by_side``; issue 22: three pairs 15.1 ms
        one after another, 9.5 ms side by side, on 2 idle cores)."""
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
        with self._lock:  # one call's pairs at a time: two callers' pairs would only share the same cores
            for i, row in enumerate(side_by_side([partial(self._run, [pair]) for pair in pairs])):
                out[i] = row[0]
        return out

    def _run(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(pairs)
        feeds = {
            "input_ids": np.asarray([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in encoded], dtype=np.int64),
        }
        logits = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        logits = np.asarray(logits, dtype=np.float32)
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)

    def relate(self, pairs: Sequence[tuple[Mapping[str, Any] | str, Mapping[str, Any] | str]]) -> list[Relation]:
        """One :class:`Relation` per ``(earlier, later)`` pair (each side as :func:`pair_text` takes it). Raises
        ``InvalidInputError`` when ``pairs`` is not a sequence of two-item pairs or a side is malformed."""
        probs = self.probabilities([pair_text(*_pair(p)) for p in _pairs(pairs)])
        return [_relation(row) for row in probs]


def _pairs(pairs: object) -> Sequence[Any]:
    if isinstance(pairs, str | bytes | Mapping) or not isinstance(pairs, Sequence):
        raise InvalidInputError(f"pairs must be a list of (earlier, later) pairs, not {type(pairs).__name__}")
    return pairs


def _pair(pair: object) -> tuple[Any, Any]:
    if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise InvalidInputError("each pair must be (earlier, later)")
    return pair[0], pair[1]


def _relation(row: np.ndarray) -> Relation:
    best = int(np.argmax(row))
    return Relation(label=LABELS[best], probability=float(row[best]), probs=tuple(float(x) for x in row))


_load_lock = threading.Lock()
_loaded: list[RelationModel] = []


def default_model() -> RelationModel:
    """The shipped model, loaded once per process on first use (two threads asking at once load it once)."""
    with _load_lock:
        if not _loaded:
            _loaded.append(RelationModel(MODEL_DIR))
        return _loaded[0]


def classify_many(
    pairs: Sequence[tuple[Mapping[str, Any] | str, Mapping[str, Any] | str]], model: RelationModel | None = None
) -> list[Relation]:
    """:func:`classify` for many pairs (each read alone: ``RelationModel.probabilities``). Raises ``InvalidInputError`` on a malformed side."""
    return (model or default_model()).relate(pairs)


def classify(earlier: Mapping[str, Any] | str, later: Mapping[str, Any] | str) -> tuple[str, float]:
    """How ``later`` relates to ``earlier``: ``(label, probability)``, the label one of ``LABELS``.

    Each side is a dict ``{"speaker": "user" | "assistant" | a name, "date": ISO-8601, "text": str}`` (speaker and
    date optional) or a bare text. Example::

        classify({"speaker": "user", "date": "2024-01-05", "text": "I work at Northwind"},
                 {"speaker": "user", "date": "2024-06-01", "text": "I left Northwind and joined Contoso"})
        # ("replaces", 0.9...)

    Raises ``InvalidInputError`` on an empty text or a wrong type. The model: ``training/MODEL_CARD.md``.
    """
    rel = classify_many([(earlier, later)])[0]
    return rel.label, rel.probability
