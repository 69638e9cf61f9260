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


def simulate(config: dict) -> dict:
    """A small simulation (``edm.sim``), logged and slowed like ``square``; its summary without the
    fields that measure the machine (wall time), so two runs of a point compare equal."""
    from edm import sim

    with open(config["log"], "a") as f:
        f.write(f"{config['seed']}\n")
    time.sleep(config.get("sleep", 0.0))  # a floor on a point's time, however fast the machine
    sim_config = {k: v for k, v in config.items() if k not in ("log", "sleep")}
    summary = sim.run(sim_config).summary
    return {k: v for k, v in summary.items() if k not in ("wall_seconds", "messages_per_second")}
