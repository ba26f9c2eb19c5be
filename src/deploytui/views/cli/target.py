"""`deploytui target add|list|check|remove|clean`: the hosts a form can be measured on (SSH), and
`deploytui bench --target NAME[,NAME…]`: the chosen forms measured there, each target one form
at a time, the targets at once (serving cells there: views/cli/serve.py, on `each_target`)."""

from __future__ import annotations

import argparse
import functools
import json
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from deploytui.views.cli.common import failing, place_opts
from deploytui.views.cli.table import table_line

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord
    from deploytui.core.workspace import Workspace
    from deploytui.launchers.targets import Target, Targets
    from deploytui.spec.forms import Form


def add_parser(sub: Any) -> None:
    t = sub.add_parser(
        "target",
        help="hosts to measure on over SSH (or an emulated arm64 root): add, list, check, remove, clean",
    )
    verbs = t.add_subparsers(dest="verb", required=True)
    a = verbs.add_parser("add", help="name a host (its facts are measured at once: `target check`)")
    a.add_argument("name")
    a.add_argument(
        "where",
        help="ssh://user@host[:port], user@host, a ~/.ssh/config alias, or emulated:arm64 (make arm64)",
    )
    a.add_argument("--accept-new", action="store_true", help="accept the host's key if it is not known yet")
    a.add_argument(
        "--ssh-config", metavar="FILE", help="an ssh config file (ssh -F) instead of ~/.ssh/config"
    )
    a.add_argument("--identity", metavar="FILE", help="the private key to log in with (ssh -i)")
    verbs.add_parser("list", help="the targets and what each is")
    for verb, what in (
        ("check", "reach it and measure what it is (arch, OS, glibc, CPU, memory, disk, Pythons)"),
        ("remove", "forget it (nothing on the host is touched)"),
        ("clean", "remove what deploytui copied to it (bundles, venvs, the launcher)"),
    ):
        v = verbs.add_parser(verb, help=what)
        v.add_argument("name")
    for q in (t, *verbs.choices.values()):
        place_opts(q, argparse.SUPPRESS)
    t.set_defaults(func=cmd_target)


def cmd_target(args: argparse.Namespace) -> int:
    from deploytui.launchers import ssh, targets
    from deploytui.launchers.ssh import TargetError

    store = targets.store(args.ws.targets_path)
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    known = store.doc.targets
    if args.verb == "list":
        if not known:
            print("no targets: `deploytui target add NAME ssh://user@host` names one")
        for t in known.values():
            print(f"{t.name:<16} {t.dest.text():<32} {t.describe()}")
        return 0
    if args.verb == "add":
        if why := targets.check_name(args.name):
            print(f"error: {why}", file=sys.stderr)
            return 2
        try:
            dest = targets.destination(args.where, config=args.ssh_config, identity=args.identity)
            found = ssh.facts(dest, accept_new=args.accept_new)
        except TargetError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        target = targets.Target(args.name, dest)
        target.checked(found)
        store.update(lambda doc: doc.targets.__setitem__(args.name, target))
        print(f"{args.name}: {target.describe()}")
        return 0
    if args.name not in known:
        print(f"error: no target named {args.name!r} (deploytui target list)", file=sys.stderr)
        return 2
    target = known[args.name]
    if args.verb == "remove":
        store.update(lambda doc: doc.targets.__delitem__(args.name) if args.name in doc.targets else None)
        print(f"{args.name}: removed")
        return 0
    try:
        if args.verb == "clean":
            ssh.clean(target.dest)
            print(f"{args.name}: cleaned")
            return 0
        target.checked(ssh.facts(target.dest))
    except TargetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    store.update(lambda doc: doc.targets.__setitem__(args.name, target))
    print(f"{args.name}: {target.describe()}")
    return 0


def resolve(names: str, ws: Workspace) -> tuple[list[Target], str]:
    """The targets a `--target a,b` names, or why not."""
    from deploytui.launchers import targets
    from deploytui.launchers.ssh import TargetError

    store = targets.store(ws.targets_path)
    known = store.doc.targets
    chosen, missing = [], []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in known and name == targets.EMULATED_ARM64:  # named on first use
            try:
                made = targets.emulated_target()
            except TargetError as e:
                return [], str(e)
            known = {**known, name: made}
            store.update(functools.partial(_put, target=made))
        (chosen.append(known[name]) if name in known else missing.append(name))
    if missing:
        return [], f"no target named {', '.join(missing)} (deploytui target add NAME ssh://…)"
    return chosen, ""


def each_target(
    found: list[Target], work: Callable[[Target, Callable[[str], None], threading.Event], None]
) -> None:
    """`work(target, say, cancel)` on every target at once (scenarios.remote.fleet: a thread
    each); `say` prints a line marked with the target's name, whole; a target whose work raised
    says so. Ctrl-C sets `cancel`: each target's work stops what it runs there (a run, a venv's
    pip: launchers/watched.py) before the interrupt goes on."""
    from deploytui.scenarios.remote import fleet

    out = threading.Lock()
    cancel = threading.Event()

    def sayer(target: Target) -> Callable[[str], None]:
        def say(line: str) -> None:
            with out:
                print(f"[{target.label}] {line}", file=sys.stderr, flush=True)

        return say

    failed = fleet.each_target(found, lambda t: work(t, sayer(t), cancel), cancel)
    for t in found:
        if t.name in failed:
            sayer(t)(f"error: stopped: {failed[t.name]}")


def _put(doc: Targets, target: Target) -> None:
    doc.targets[target.name] = target


def bench_on_targets(args: argparse.Namespace, chosen: list[Form], ws: Workspace) -> int:
    """The chosen forms' start-up runs on each target: a thread per target, its forms one after
    another, each record printed as it ends."""
    from deploytui.scenarios.remote import bench as remote
    from deploytui.spec.manifest import load as load_manifest

    found, why = resolve(args.target, ws)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    done: dict[str, list[RunRecord]] = {t.name: [] for t in found}

    def measure_on(target: Target, say: Callable[[str], None], cancel: threading.Event) -> None:
        for i, form in enumerate(chosen, 1):
            if cancel.is_set():
                return
            say(f"{form.key} ({i}/{len(chosen)})")
            rec = remote.bench_form(
                form,
                target,
                ws,
                n=args.n,
                warmup=args.warmup,
                repeat=args.repeat,
                timeout_s=args.timeout,
                say=say,
                cancel=cancel,
            )
            done[target.name].append(rec)
            if not args.json:
                print(f"[{target.label}] {table_line(rec)}", flush=True)

    each_target(found, measure_on)
    if args.json:
        manifest = load_manifest(ws)
        doc = {
            "model": ws.model.text,
            "tools": manifest.tools,
            "targets": [
                {
                    "target": t.name,
                    "machine": t.facts,
                    "forms": [r.to_json() for r in done[t.name]],
                }
                for t in found
            ],
        }
        print(json.dumps(doc, indent=1))
    return 1 if failing([r for recs in done.values() for r in recs]) else 0
