"""Runs uv's installer with its whole output going to a log file, and shows one progress line.

    python3 tools/install_progress.py LOG -- uv pip install -e '.[test]'

The line says what uv is at (resolving, downloading, installing, compiling), how many distributions it
resolved, how many it downloaded of those it announced and how many bytes they announced, the
one it is on and the time so far. On a terminal it is redrawn in place (every second, so the
clock moves during the long downloads); elsewhere (CI logs) a line is printed when a phase
starts and then at most every 15 s. On failure the log's last 40 lines are printed and uv's exit
status returned. Standard library only: it runs before the venv has anything in it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

RESOLVED = re.compile(r"^Resolved (\d+) packages?")
DOWNLOADING = re.compile(r"^Downloading (\S+) \(([\d.]+)(B|KiB|MiB|GiB)\)")
DOWNLOADED = re.compile(r"^\s*Downloaded (\S+)")
BUILDING = re.compile(r"^\s*(?:Building|Built) ")
PREPARED = re.compile(r"^Prepared (\d+) packages?")
INSTALLED = re.compile(r"^Installed \d+ packages?")
DONE = re.compile(r"^(?:Bytecode compiled \d+ files?|Audited \d+ packages?)")
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
QUIET_S = 15.0


@dataclass
class Progress:
    phase: str = "resolving"
    resolved: int = 0
    announced: int = 0
    downloaded: int = 0
    announced_bytes: float = 0.0
    current: str = ""
    started: float = field(default_factory=time.monotonic)

    seen: set[str] = field(default_factory=lambda: {"resolving"})

    def feed(self, line: str) -> bool:
        """Takes one line of uv's output; True when it entered a phase for the first time."""
        if m := RESOLVED.match(line):
            self.phase, self.resolved = "downloading", int(m.group(1))
        elif m := DOWNLOADING.match(line):
            self.phase, self.current = "downloading", f"{m.group(1)} ({m.group(2)} {m.group(3)})"
            self.announced += 1
            self.announced_bytes += float(m.group(2)) * UNITS[m.group(3)]
        elif m := DOWNLOADED.match(line):
            self.downloaded += 1
            self.current = m.group(1) + " downloaded"
        elif BUILDING.match(line):
            self.current = line.strip()
        elif PREPARED.match(line):
            self.phase, self.current = "installing", ""
        elif INSTALLED.match(line):
            self.phase, self.current = "compiling", ".pyc of every module"
        elif DONE.match(line):
            self.phase, self.current = "done", ""
        new = self.phase not in self.seen
        self.seen.add(self.phase)
        return new

    def line(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        parts = [f"install: {self.phase}"]
        if self.resolved:
            parts.append(f"{self.resolved} resolved")
        if self.announced:
            gb = self.announced_bytes / 1e9
            parts.append(f"{self.downloaded}/{self.announced} downloaded ({gb:.2f} GB)")
        if self.current:
            parts.append(self.current)
        parts.append(f"{elapsed // 60}:{elapsed % 60:02d}")
        return " · ".join(parts)


class Screen:
    """One line on a terminal (redrawn in place), or lines now and then in a log."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tty = sys.stdout.isatty()
        self.lock = threading.Lock()
        self.last_print = 0.0
        self.last_text = ""

    def show(self, changed: bool = False) -> None:
        with self.lock:
            text = self.progress.line()
            if self.tty:
                width = shutil.get_terminal_size((100, 20)).columns - 1
                sys.stdout.write("\r\033[K" + text[:width])
                sys.stdout.flush()
            elif text != self.last_text and (changed or time.monotonic() - self.last_print >= QUIET_S):
                print(text, flush=True)
                self.last_print, self.last_text = time.monotonic(), text

    def end(self) -> None:
        if self.tty:
            sys.stdout.write("\n")
            sys.stdout.flush()


def run(log: Path, argv: list[str]) -> int:
    progress = Progress()
    screen = Screen(progress)
    log.parent.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            screen.show()

    with log.open("w", encoding="utf-8", errors="replace") as out:
        out.write("$ " + " ".join(argv) + "\n")
        try:
            proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
            )
        except OSError as e:
            print(f"error: could not start {argv[0]}: {e}", file=sys.stderr)
            return 127
        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        assert proc.stdout is not None
        for raw in proc.stdout:
            out.write(raw)
            out.flush()
            screen.show(progress.feed(raw.rstrip("\n")))
        rc = proc.wait()
        stop.set()
        ticker.join()
    screen.show(changed=True)
    screen.end()
    if rc != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-40:]
        print("\n".join(tail), file=sys.stderr)
        print(f"error: the install failed (exit {rc}); its whole output is in {log}", file=sys.stderr)
    return rc


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: install_progress.py LOG -- COMMAND...", file=sys.stderr)
        return 2
    return run(Path(argv[0]), argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
