"""What every section uses: paths scrubbed out of what is written, and the markdown table."""

from __future__ import annotations

import re
from pathlib import Path

from deploytui.core import paths


def scrub(text: str) -> str:
    """Project paths relative; other absolute paths (caches, home, system) cut to their last part."""
    text = text.replace(str(paths.ROOT), ".").replace(str(paths.cache_dir()), "<cache>")
    text = text.replace(str(Path.home()), "~")
    return re.sub(r"(?<![\w.~<>])/(?:[^\s/:'\"]+/)+([^\s/:'\"]*)", r"/…/\1", text)


def _md_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    return "\n".join(lines)
