"""Runners for the sweep tests (importable by Dask workers via PYTHONPATH)."""

from __future__ import annotations

import time


def square(config: dict) -> dict:
    """Logs each call to config['log'] so tests can count recomputations."""
    with open(config["log"], "a") as f:
        f.write(f"{config['x']}\n")
    time.sleep(config.get("sleep", 0.0))
    if config["x"] in config.get("fail_on", []):
        raise RuntimeError(f"x={config['x']} is set to fail")
    return {"square": config["x"] ** 2}
