"""Runs pip with its whole output going to a log file, and shows one progress line instead.

    python3 tools/pip_progress.py LOG -- pip install -e '.[test]'

The line says what pip is at (resolving, downloading, installing), how many distributions it
has collected and downloaded, how many bytes the downloads announced, the one it is on and the
time so far. On a terminal it is redrawn in place (every second, so the clock moves while pip
unpacks torch in silence); elsewhere (CI logs) a line is printed when a phase starts and then at
most every 15 s. On failure the log's last 40 lines are printed and pip's exit status returned.
Standard library only: it runs before the venv has anything in it.
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

COLLECTING = re.compile(r"^Collecting (\S+)")
DOWNLOADING = re.compile(r"^\s*Downloading (\S+?)(?:-\d[^ ]*)? \(([\d.]+) (kB|MB|GB|B)\)")
CACHED = re.compile(r"^\s*Using cached (\S+?)(?:-\d[^ ]*)? ")
INSTALLING = re.compile(r"^Installing collected packages: (.*)$")
BUILDING = re.compile(r"^(?:Building|Preparing|Getting requirements)")
DONE = re.compile(r"^Successfully installed ")
UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}
QUIET_S = 15.0


@dataclass
class Progress:
    phase: str = "starting"
    collected: int = 0
    downloaded: int = 0
    cached: int = 0
    announced_bytes: float = 0.0
    current: str = ""
    installing: int = 0
    started: float = field(default_factory=time.monotonic)

    seen: set[str] = field(default_factory=set)

    def feed(self, line: str) -> bool:
        """Takes one line of pip's output; True when it entered a phase for the first time (pip
        goes back and forth between resolving and downloading)."""
        if m := COLLECTING.match(line):
            self.phase, self.current = "resolving", m.group(1)
            self.collected += 1
        elif m := DOWNLOADING.match(line):
            self.phase, self.current = "downloading", f"{m.group(1)} ({m.group(2)} {m.group(3)})"
            self.downloaded += 1
            self.announced_bytes += float(m.group(2)) * UNITS[m.group(3)]
        elif m := CACHED.match(line):
            self.cached += 1
            self.current = m.group(1) + " (cached)"
        elif m := INSTALLING.match(line):
            self.phase, self.current = "installing", ""
            self.installing = len([p for p in m.group(1).split(",") if p.strip()])
        elif BUILDING.match(line):
            self.phase = "preparing"
        elif DONE.match(line):
            self.phase, self.current = "done", ""
        new = self.phase not in self.seen
        self.seen.add(self.phase)
        return new

    def line(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        parts = [f"pip: {self.phase}", f"{self.collected} collected"]
        if self.downloaded or self.cached:
            gb = self.announced_bytes / 1e9
            parts.append(f"{self.downloaded} downloaded ({gb:.2f} GB), {self.cached} cached")
        if self.phase == "installing":
            parts.append(f"unpacking {self.installing} distributions")
        elif self.current:
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
        print(f"error: pip failed (exit {rc}); its whole output is in {log}", file=sys.stderr)
    return rc


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: pip_progress.py LOG -- COMMAND...", file=sys.stderr)
        return 2
    return run(Path(argv[0]), argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
