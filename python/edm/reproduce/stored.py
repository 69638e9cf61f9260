"""Results ``edm reproduce`` keeps in its result folder between runs: the
fingerprint of the files a result depends on (reused while it is unchanged),
and reading a stored document back."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def fingerprint(files: Iterable[Path], label: Callable[[Path], str]) -> str:
    """16 hex digits of a SHA-256 over every file's label and bytes, in order."""
    h = hashlib.sha256()
    for f in files:
        h.update(label(f).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def read_json(path: Path, when_unreadable: str) -> dict[str, Any] | None:
    """The document at `path`, or None if there is none; an unreadable one is
    left out with a note on stderr saying `when_unreadable` it is measured again."""
    try:
        return json.loads(path.read_text()) if path.exists() else None
    except ValueError:
        print(f"edm reproduce: {path}: unreadable; left out (measured again {when_unreadable})", file=sys.stderr)
        return None
