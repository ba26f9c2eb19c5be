"""The serving cells of a model (artifacts/<slug>/serve.json): cell key -> the cell's last
RunRecord, as `deploytui bench --batch … --threads …` (deploytui.scenarios.serving.serve)
stored them. A `store.Store`
like results.json: a damaged entry is dropped with a line saying so, the rest is kept. Standard
library only: the app and the report read it.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.core.record import RunRecord
from deploytui.core.record_check import RecordError
from deploytui.core.store import FormStore, FormTable
from deploytui.core.workspace import Workspace


def key(form: str, batch: int | None, threads: int) -> str:
    """A cell's key in serve.json: `onnxruntime@b8@t2` (`b-` for the example as built)."""
    return f"{form}@b{batch if batch is not None else '-'}@t{threads}"


def split_key(cell: str) -> tuple[str, str, str]:
    """(form, batch, threads) of a key `onnxruntime@b8@t2` (batch `-`: the example as built)."""
    form, b, t = [*cell.split("@"), "", ""][:3]
    return form, b[1:], t[1:]


def by_batch(cells: dict[str, RunRecord], form: str) -> tuple[dict[int, tuple[float, float]], dict[int, str]]:
    """One form's cells per batch size: (p99 s, items/s), the best over its thread counts; and
    for a size where no cell ran, the words of one that did not."""
    ran: dict[int, tuple[float, float]] = {}
    refused: dict[int, str] = {}
    for cell, rec in cells.items():
        name, batch, _ = split_key(cell)
        if name != form or not batch.isdigit():
            continue
        b, f, tput = int(batch), rec.forwards, items_per_s(rec)
        if rec.status == "ok" and rec.outputs_pass is not False and f is not None and tput is not None:
            best = ran.get(b)
            ran[b] = (min(f.p99_ms / 1000, best[0]), max(tput, best[1])) if best else (f.p99_ms / 1000, tput)
        else:
            refused.setdefault(b, f"{rec.stage + ': ' if rec.stage else ''}{rec.error or rec.status}")
    return ran, {b: why for b, why in refused.items() if b not in ran}


class ServeCells(FormTable[RunRecord]):
    """What serve.json holds: cell key -> the cell's last record."""

    NAME = "serve cell"

    @classmethod
    def entry(cls, name: str, value: object) -> RunRecord:
        rec = RunRecord.from_json(value)
        if not isinstance(rec.form, str) or not name.startswith(rec.form + "@"):
            raise RecordError("form", f"names form {rec.form!r}")
        return rec


class ServeStore(FormStore[RunRecord]):
    def __init__(self, path: Path) -> None:
        super().__init__(path, ServeCells)

    def put(self, cell: str, record: RunRecord) -> None:
        self.put_entry(cell, record)


def load(ws: Workspace, target: str | None = None) -> ServeStore:
    """The model's cells measured here, or on `target`."""
    return ServeStore(ws.serve_on(target)).load()


def items_per_s(rec: RunRecord) -> float | None:
    """Throughput: the batch's items over the mean forward time (None when not measured)."""
    f = rec.forwards
    if f is None or f.mean_ms <= 0 or not rec.batch:
        return None
    return rec.batch * 1000.0 / f.mean_ms
