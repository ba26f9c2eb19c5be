"""The named targets (`deploytui target add|list|check|remove|clean`): artifacts/targets.json, a
store.Store like the others (typed, atomic, locked). Each target is a Destination and the facts
last measured there by `target check` (arch, OS, glibc, kernel, CPU, cores, memory, free disk,
its Python 3 interpreters)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from deploytui.core.record import stamp
from deploytui.core.store import Store, read_table
from deploytui.core.units import human
from deploytui.launchers import emulated, ssh
from deploytui.launchers.ssh import Destination, TargetError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
HERE = "here"  # the name of this machine: no target may take it
EMULATED_ARM64 = "arm64-emulated"  # named on first use (`bench --target arm64-emulated`)


@dataclass
class Target:
    name: str
    dest: Destination
    facts: dict[str, Any] = field(default_factory=dict)
    checked_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = self.dest
        return {
            "host": d.host,
            "user": d.user,
            "port": d.port,
            "config": d.config,
            "identity": d.identity,
            "facts": self.facts,
            "checked_at": self.checked_at,
        }

    @classmethod
    def from_json(cls, name: str, value: object) -> Target:
        if not isinstance(value, dict) or not isinstance(value.get("host"), str):
            raise ValueError("not an object with a 'host'")
        port = value.get("port")
        if port is not None and not isinstance(port, int):
            raise ValueError("'port' is not a number")
        for key in ("user", "config", "identity", "checked_at"):
            if value.get(key) is not None and not isinstance(value[key], str):
                raise ValueError(f"{key!r} is not a string")
        facts = value.get("facts", {})
        if not isinstance(facts, dict):
            raise ValueError("'facts' is not an object")
        dest = Destination(value["host"], value.get("user"), port, value.get("config"), value.get("identity"))
        return cls(name, dest, facts, value.get("checked_at"))

    @property
    def label(self) -> str:
        """How a progress line names the target: `pi`, or `arm64-emulated, emulated`."""
        return f"{self.name}, emulated" if self.facts.get("emulated") else self.name

    def describe(self) -> str:
        """What the target is, in one line (its facts from `target check`): the CLI's list and
        the app's picker."""
        f = self.facts
        if not f:
            return "never checked"
        pythons = "Python " + (", ".join(f.get("pythons") or {}) or "none")
        if f.get("emulated"):
            words = [f"{f.get('arch') or '?'} emulated (qemu-user)", str(f.get("os") or "?")]
            return " · ".join([*words, str(f.get("glibc") or "?"), pythons])
        mem, disk = f.get("memory_bytes"), f.get("free_disk_bytes")
        words = [
            str(f.get("arch") or "?"),
            str(f.get("os") or "?"),
            str(f.get("glibc") or "no glibc"),
            str(f.get("cpu") or "?"),
            f"{f.get('cores') or '?'} cores",
            f"{human(mem)} memory" if isinstance(mem, int) else "memory ?",
            f"{human(disk)} free" if isinstance(disk, int) else "disk ?",
            pythons,
        ]
        return " · ".join(words)

    def checked(self, facts: dict[str, Any]) -> None:
        self.facts, self.checked_at = facts, stamp()


class Targets:
    VERSION: ClassVar[int] = 1
    NAME: ClassVar[str] = "targets"

    def __init__(self, targets: dict[str, Target] | None = None) -> None:
        self.targets: dict[str, Target] = targets or {}

    @classmethod
    def empty(cls) -> Self:
        return cls()

    @classmethod
    def read(cls, data: dict[str, Any]) -> tuple[Self, list[str]]:
        found, problems = read_table(data, "targets", Target.from_json, "target")
        return cls(found), problems

    def to_json(self) -> dict[str, Any]:
        return {"version": self.VERSION, "targets": {k: t.to_json() for k, t in sorted(self.targets.items())}}


def store(path: Path) -> Store[Targets]:
    return Store(path, Targets).load()


def check_name(name: str) -> str:
    """ "" or why `name` cannot name a target."""
    if name == HERE:
        return f"{HERE!r} is this machine; give the target another name"
    if not NAME.fullmatch(name):
        return f"{name!r} cannot name a target (letters, digits, '.', '_', '-'; at most 64)"
    return ""


def destination(where: str, *, config: str | None = None, identity: str | None = None) -> Destination:
    """What `target add NAME WHERE` names: an SSH address, or `emulated:arm64` (the emulated root
    of launchers/emulated.py); TargetError with one line when neither."""
    try:
        arch = emulated.parse(where)
    except ValueError as e:
        raise TargetError(str(e)) from None
    if arch is not None:
        return Destination(emulated.host(arch))
    return Destination.parse(where, config=config, identity=identity)


def emulated_target(name: str = EMULATED_ARM64, arch: str = "aarch64") -> Target:
    """The emulated arm64 target, its facts measured in the root now (TargetError when the root
    is not made: what to run)."""
    target = Target(name, Destination(emulated.host(arch)))
    target.checked(ssh.facts(target.dest))
    return target
