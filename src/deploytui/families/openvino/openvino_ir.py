"""The layers of an OpenVINO IR, read from its .xml with the standard library (no openvino in the
app): each layer's type, name and output shapes, in the file's order."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from deploytui.inspectors import InspectError


def layers(path: Path) -> list[tuple[str, str, str, str]]:
    """(id, type, name, output shapes) of every layer of the IR at `path`."""
    if not path.exists():
        raise InspectError(f"{path.name} is missing: the export-openvino step has not run")
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        raise InspectError(f"{path.name} is not an OpenVINO IR: {e}") from None
    found = root.find("layers")
    if root.tag != "net" or found is None:
        raise InspectError(f"{path.name} is not an OpenVINO IR: no <net><layers>")
    rows = []
    for layer in found.iter("layer"):
        shapes = [
            "[" + ",".join(d.text or "?" for d in port.iter("dim")) + "] " + port.get("precision", "")
            for out in layer.findall("output")
            for port in out.findall("port")
        ]
        rows.append((layer.get("id", "?"), layer.get("type", "?"), layer.get("name", ""), " ".join(shapes)))
    return rows
