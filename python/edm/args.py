"""Checking command-line arguments, one way for every ``edm`` command.

Every value is checked when the command line is parsed, before any work:
numbers against their range (:func:`integer`, :func:`real`), input files for
being readable files (:func:`in_file`), output files and folders for being
writable (:func:`out_file`, :func:`out_dir`: the path, or the nearest folder
above it that exists, takes a test file), Dask addresses for their form
(:func:`address`). A bad value ends the command with exit code 2 and one line,
``edm COMMAND: error: argument --NAME: why`` (:class:`Parser`); errors found
later by a command (:class:`ArgumentError` and the other input errors listed in
:data:`INPUT_ERRORS`) are printed by ``edm.cli.main`` the same way.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, NoReturn
from urllib.parse import urlsplit


class ArgumentError(ValueError):
    """A value a command cannot use, found after parsing; one line naming it."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def integer(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in lo..hi (either end open when None)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{v} {_span(lo, hi)}")
        return v

    parse.lo, parse.hi = lo, hi  # type: ignore[attr-defined]  # for the CLI fuzz test
    return parse


def real(lo: float | None = None, hi: float | None = None, lo_open: bool = False,
         hi_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number in [lo, hi] (an end excluded when *_open)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        low_bad = lo is not None and (v <= lo if lo_open else v < lo)
        high_bad = hi is not None and (v >= hi if hi_open else v > hi)
        if v != v or v in (float("inf"), float("-inf")) or low_bad or high_bad:
            left = "(" if lo_open else "["
            right = ")" if hi_open else "]"
            raise argparse.ArgumentTypeError(f"{text} is not in {left}{_end(lo, '-inf')}, {_end(hi, 'inf')}{right}")
        return v

    parse.lo, parse.hi = lo, hi  # type: ignore[attr-defined]  # for the CLI fuzz test
    return parse


def _end(v: float | None, none: str) -> str:
    return none if v is None else f"{v:g}"


def _span(lo: int | None, hi: int | None) -> str:
    if hi is None:
        return f"must be at least {lo}"
    return f"must be at most {hi}" if lo is None else f"is not in {lo}..{hi}"


def in_file(text: str) -> str:
    """An argparse type: an existing, readable file (not a folder)."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, not a file")
    _opens(p, "rb", "read")
    return text


def _opens(p: Path, mode: str, verb: str) -> None:
    """`p` opens with `mode` (append leaves a file as it was)."""
    try:
        with p.open(mode):
            pass
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{p}: cannot be {verb} ({e.strerror})") from None


def in_dir(text: str) -> str:
    """An argparse type: an existing folder."""
    p = Path(text)
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {'is a file, not a folder' if p.exists() else 'no such folder'}")
    return text


def out_file(text: str) -> str:
    """An argparse type: a file that can be written (it may not exist yet;
    missing folders above it are made when it is written)."""
    p = Path(text)
    if text == "" or p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, not a file" if text else "empty path")
    if p.exists():
        _opens(p, "ab", "written")
        return text
    _check_creatable(text, p.parent)
    return text


def out_dir(text: str) -> str:
    """An argparse type: a folder that can be written into (made if missing)."""
    p = Path(text)
    if text == "":
        raise argparse.ArgumentTypeError("empty path")
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: exists and is not a folder")
    _check_creatable(text, p)
    return text


def _check_creatable(text: str, folder: Path) -> None:
    """`folder`, or the nearest folder above it that exists, takes a new file."""
    at = folder.absolute()
    while not at.exists():
        at = at.parent
    if not at.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {at} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".edm-write-check-", dir=at)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: cannot write in {at} ({e.strerror})") from None


def address(text: str) -> str:
    """An argparse type: a Dask scheduler address, [scheme://]host:port."""
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls", "ucx", "ws", "wss") or not parts.hostname or port is None \
            or not 0 < port < 65536 or parts.path not in ("", "/"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a scheduler address (tcp://host:port)")
    return text


def fail(command: str, message: str) -> int:
    """Prints a command's one-line error; returns exit code 2."""
    print(f"edm {command}: {message}".replace("\n", " "), file=sys.stderr)
    return 2
