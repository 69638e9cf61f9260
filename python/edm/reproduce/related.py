"""The related systems (issue #24) for ``edm reproduce``: each module in
``edm.related.REPRODUCED`` runs its experiment into ``OUT/related/<name>/`` and
writes its report to ``<name>.md`` there; the report links them with their command, date
and wall time. A finished system is stored in ``related.json`` and reused
while the simulator's code and the module are unchanged, so a crashed or
interrupted run does not measure it again.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from edm.reproduce.stored import fingerprint, read_json
from edm.sweep import code_fingerprint

RELATED_FILE = "related.json"


def _fingerprint(module: str) -> str:
    """The simulator's code and the experiment's own module."""
    own = Path(importlib.import_module(module).__file__)
    return code_fingerprint() + fingerprint([own], lambda f: f.name)


def stored(out: Path) -> dict[str, Any]:
    return read_json(out / RELATED_FILE, "by the next edm reproduce") or {}


def _save(out: Path, doc: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = (out / RELATED_FILE).with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(out / RELATED_FILE)


def measure(out: Path, quick: bool) -> dict[str, Any]:
    """Runs (or reuses) every related system's experiment; returns the stored document."""
    from edm.related import REPRODUCED  # noqa: PLC0415

    doc = stored(out)
    for name, module, title in REPRODUCED:
        fingerprint = _fingerprint(module)
        have = doc.get(name)
        if have and have.get("fingerprint") == fingerprint and have.get("quick") == quick \
                and (out / have["markdown"]).exists():
            print(f"related {name}: reused (code unchanged)", file=sys.stderr)
            continue
        print(f"related {name}: {title} ...", file=sys.stderr)
        start = time.perf_counter()
        folder = out / "related" / name
        importlib.import_module(module).reproduce_section(folder, quick)
        path = folder / f"{name}.md"  # each module writes its report there
        doc[name] = {"fingerprint": fingerprint, "quick": quick, "title": title,
                     "markdown": str(path.relative_to(out)), "date": date.today().isoformat(),
                     "command": f"edm related {name.replace('_', '-')}" + (" --quick" if quick else ""),
                     "wall_seconds": time.perf_counter() - start}
        _save(out, doc)  # after each system: an interrupted run keeps what finished
        print(f"related {name}: {doc[name]['wall_seconds']:.0f} s", file=sys.stderr)
    return doc


def section(r: Any, doc: dict[str, Any]) -> None:
    """The report's "Related systems" section (r: an edm.report.Report)."""
    from edm.related import REPRODUCED  # noqa: PLC0415

    r.heading("Related systems (issue #24)")
    r.paragraph("What Clio, Puri et al. and Gao et al. teach, built into our fabric and measured; each "
                "experiment writes its own report (linked), discussion in docs/related.md.")
    rows = []
    for name, _module, title in REPRODUCED:
        have = doc.get(name)
        rows.append({"system": title,
                     "report": have["markdown"] if have else "not run (edm reproduce runs it)",
                     "command": f"`{have['command']}`" if have else "-",
                     "measured": have["date"] if have else "-",
                     "wall s": round(have["wall_seconds"]) if have else "-"})
    r.table(rows)
