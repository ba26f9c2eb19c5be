"""Copy a model's Python source out of this project as plain top-level modules: each module and
the project modules it imports (transitively), with `from PKG import x` / `from PKG.x import y`
rewritten to `import x` / `from x import y`, so the copy runs without the project installed."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path


def _file(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"no source for {module}")
    return Path(spec.origin)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # its parent is a module, not a package
        return False


def plain_modules(module: str, package: str = "deploytui") -> dict[str, str]:
    """{"model.py": source, "a1.py": source, …} for `module` and what it imports of `package`."""
    out: dict[str, str] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        short = name.rsplit(".", 1)[-1]
        if f"{short}.py" in out:
            continue
        text = _file(name).read_text()
        lines = text.splitlines(keepends=True)
        for node in sorted(ast.walk(ast.parse(text)), key=lambda n: -getattr(n, "lineno", 0)):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            if node.module == package:
                deps = [f"{package}.{a.name}" for a in node.names]
                new = "import " + ", ".join(
                    a.name + (f" as {a.asname}" if a.asname else "") for a in node.names
                )
            elif node.module.startswith(package + "."):
                deps, parts = [], []
                for a in node.names:
                    alias = f" as {a.asname}" if a.asname else ""
                    if _is_module(f"{node.module}.{a.name}"):  # `from pkg.models import a1`
                        deps.append(f"{node.module}.{a.name}")
                        parts.append(f"import {a.name}{alias}")
                    else:
                        deps.append(node.module)
                        parts.append(f"from {node.module.rsplit('.', 1)[-1]} import {a.name}{alias}")
                new = "; ".join(parts)
            else:
                continue
            todo += deps
            start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            lines[start : end + 1] = [indent + new + "\n"]
        out[f"{short}.py"] = "".join(lines)
    return out
