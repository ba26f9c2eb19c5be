"""`deploytui choose`: the forms that meet the user's constraints, ranked; its parser (one option
per rule) and the command."""

from __future__ import annotations

import argparse
import sys

from deploytui.views.cli.common import data_opt, model_opts


def cmd_choose(args: argparse.Namespace) -> int:
    """The forms that meet the user's constraints, ranked, and why every other does not (from
    the stored runs, the build's sizes and probes and the ship checks: nothing runs)."""
    import json

    from deploytui.decisions import choose
    from deploytui.decisions import facts as choose_facts
    from deploytui.decisions import text as choose_text

    try:
        req = choose.request(args.given or [], args.rank_by or "")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ref = args.ws.model
    if args.target:
        from deploytui.views.cli.target import resolve

        found, why = resolve(args.target, args.ws)
        if why or len(found) != 1:
            print(f"error: {why or 'choose answers for one target'}", file=sys.stderr)
            return 2
    facts, dropped = choose_facts.read(args.ws, target=args.target)
    for msg in dropped:
        print(f"warning: {msg}", file=sys.stderr)
    answer = choose.choose(facts, req, f"{ref.text} on {args.target}" if args.target else ref.text)
    if args.json:
        print(json.dumps(answer.to_json(), indent=1))
    else:
        print(choose_text.render(answer, with_chart=args.chart))
    return 0 if answer.chosen else 1


class _Given(argparse.Action):
    """Keeps the constraints in the order the user gives them: (rule key, text) in `given`."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        given = list(getattr(namespace, "given", None) or [])
        given.append((self.dest.replace("_", "-"), values if isinstance(values, str) else ""))
        namespace.given = given


def choose_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`choose` and its options, added when it is used: one per rule of decisions.choose, whose
    import (~13 ms) no other command pays (`CommandParser`)."""
    sub.add_parser(
        "choose",
        help="the forms that meet your constraints, ranked, and why each other one does not",
        description="From what is stored for the model on this machine (runs, build sizes, runtime "
        "probes, ship checks): the forms that meet every constraint, ranked by the figure of the "
        "first constraint given (or --rank-by; start-up by default), and every other form with the "
        "first constraint it breaks. Exits 1 when no form qualifies.",
        options=_choose_options,
    ).set_defaults(func=cmd_choose, given=[])


def _choose_options(ch: argparse.ArgumentParser) -> None:
    from deploytui.decisions import choose

    for rule in choose.RULES:
        flag = f"--{rule.key}"
        if rule.example:
            ch.add_argument(
                flag,
                action=_Given,
                metavar=rule.metavar,
                help=f"{rule.help} (e.g. {rule.example})".replace("%", "%%"),
            )
        else:
            ch.add_argument(flag, action=_Given, nargs=0, help=rule.help)
    ch.add_argument("--rank-by", choices=list(choose.RANKS), help="rank the qualifying forms by this figure")
    ch.add_argument("--chart", action="store_true", help="also draw the Pareto chart (start-up × ship size)")
    ch.add_argument("--json", action="store_true", help="print the answer as JSON")
    ch.add_argument(
        "--target", metavar="NAME", default=None, help="answer for a target's stored runs (bench --target)"
    )
    model_opts(ch)
    data_opt(ch, argparse.SUPPRESS)
