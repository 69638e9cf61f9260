"""Reading a TOML input file with an error that names it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_toml(path: str | Path, error: type[Exception], what: str) -> dict[str, Any]:
    """The parsed file; ``error`` (naming the file) if it is missing or not TOML."""
    path = Path(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{path}: is a folder, not a {what}") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not a text {what} (byte {e.start + 1} is not UTF-8); expected TOML") from None
    except OSError as e:
        raise error(f"{path}: cannot read the {what} ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None
