"""`review`: a reviewer's actions on single steps of stored gym episodes (issue 39, item 2).

* `review label EPISODE_ID TURN CALL LABEL [--note TEXT] [--by NAME]`: label one call (turn and
  call from 1) useful, redundant or wrong (`store.steps.label`); `--undo` takes the reviewer's
  latest label back instead (`review label --undo [EPISODE_ID]`).
* `review correct EPISODE_ID --turn N --call CALL_OR_@FILE`: edit that turn's calls, play the
  episode again in the gym from there and store the corrected episode beside the original
  (`gym.correct_step`).

* `review accept|reject --queue KIND [--filter KEY=VALUE ...] [--reason R] [--yes]`: a lead's
  bulk action over a filter of one queue (issue 39): prints the plan (how many it decides, how
  many it leaves out and why) and applies it only with `--yes`, as one audited batch
  (`Queue.bulk_decide`); `review undo-bulk` takes the reviewer's last batch back.

The `review` group is where other review actions from the command line belong. Like every
command, it acts as the person running it (mode `cli`, trusted as whoever can open the store);
`--by` names the reviewer, and a bulk action refuses a name the studio's team lists below lead.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesearch_core.access import Action, Actor, Mode, check_name, denial
from codesearch_core.cli.store_access import open_store
from codesearch_core.errors import CodesearchError

if TYPE_CHECKING:
    from codesearch_core.store import Store

EXIT_OK = 0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    review = sub.add_parser(
        "review",
        help="label or correct steps of stored episodes; a lead's bulk accept or reject",
        description="A reviewer's actions on one call of a stored episode: a label per call "
        "(useful, redundant, wrong) and a corrected turn, played again in the gym; and a lead's "
        "bulk accept or reject over a filter of any review queue, undone as one batch.",
    )
    review_sub = review.add_subparsers(dest="review_command", required=True, metavar="ACTION")
    label = review_sub.add_parser(
        "label",
        help="label one call of an episode: useful, redundant or wrong",
        description="Record your label of call CALL of turn TURN (both from 1) of the episode. "
        "It replaces your earlier label of that call; --undo takes your latest label back.",
    )
    label.add_argument("episode_id", metavar="EPISODE_ID", nargs="?", default=None)
    label.add_argument("turn", metavar="TURN", type=int, nargs="?", default=None)
    label.add_argument("call", metavar="CALL", type=int, nargs="?", default=None)
    label.add_argument("label", metavar="LABEL", nargs="?", default=None,
                       help="useful, redundant or wrong")  # fmt: skip
    label.add_argument("--note", default="", help="why (kept with the label)")
    label.add_argument("--undo", action="store_true",
                       help="take back your latest label (of EPISODE_ID, when given)")  # fmt: skip
    _common(label)
    label.set_defaults(func=cmd_review_label)
    correct = review_sub.add_parser(
        "correct",
        help="edit one turn's calls, replay the episode from there, keep it beside the original",
        description="Replace turn N's calls of the episode by CALL (a call, a list of calls, or "
        "@FILE), play the earlier turns again in the gym, then the edited turn, then the "
        "original's submit when it came later; the corrected episode is stored as a new episode "
        "linked to the original, which stays as it was.",
    )
    correct.add_argument("episode_id", metavar="EPISODE_ID")
    correct.add_argument("--turn", type=int, required=True, metavar="N", help="the turn, from 1")
    correct.add_argument("--call", required=True, metavar="CALL_OR_@FILE",
                         help="the edited call (or a list of calls) as JSON, or @FILE")  # fmt: skip
    _common(correct)
    correct.set_defaults(func=cmd_review_correct)
    for action, verb in (("accept", "accepted"), ("reject", "rejected")):
        bulk = review_sub.add_parser(
            action,
            help=f"a lead's bulk {action} over a filter of one queue (plan, then --yes)",
            description=f"Count the items of the queue's filter that would be {verb} and those "
            "left out, and why (already decided, in conflict, what blocks an accept); with "
            "--yes, record a lead's final decision on each as one audited batch that "
            "`review undo-bulk` takes back.",
        )
        bulk.add_argument("--queue", required=True, metavar="KIND",
                          help="proposal, episode, qa, draft or drift")  # fmt: skip
        bulk.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                          help="narrow the queue, e.g. engine=reference min_reward=1 "
                          "tool_used=read_file state=any (repeat; a bad key lists the queue's)")  # fmt: skip
        bulk.add_argument("--reason", default="", help="why (kept with each decision)")
        bulk.add_argument("--yes", action="store_true", help="apply the plan (else only print it)")
        _common(bulk)
        bulk.set_defaults(func=cmd_review_bulk, bulk_action=action)
    undo = review_sub.add_parser(
        "undo-bulk",
        help="take back the reviewer's last bulk accept or reject",
        description="Undo every decision of the reviewer's last bulk action (of one queue, with "
        "--queue); an item decided again after it keeps that later decision.",
    )
    undo.add_argument("--queue", default=None, metavar="KIND", help="only this queue's last batch")
    _common(undo)
    undo.set_defaults(func=cmd_review_undo_bulk)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, default=None, help="the store file")
    parser.add_argument("--by", default="", metavar="NAME",
                        help="the reviewer (default: who runs the command)")  # fmt: skip


def cmd_review_label(args: argparse.Namespace) -> int:
    positional = (args.episode_id, args.turn, args.call, args.label)
    if not args.undo and any(p is None for p in positional):
        raise CodesearchError("review label needs EPISODE_ID TURN CALL LABEL (or --undo)")
    with open_store(args.db) as opened:
        store = opened.acting_as(Actor(check_name(args.by), Mode.CLI)) if args.by else opened
        who = store.actor.name
        if args.undo:
            undone = store.steps.undo(who, args.episode_id)
            print(
                f"undid {who}'s label {undone.label!r} of turn {undone.turn}, call {undone.call} "
                f"of episode {undone.episode_id[:12]}"
            )
            return EXIT_OK
        event = store.steps.label(
            args.episode_id, args.turn, args.call, args.label, who, note=args.note
        )
        summary = next(
            (s for s in store.steps.summary(args.episode_id)
             if (s.turn, s.call) == (args.turn, args.call)),
            None,
        )  # fmt: skip
    counts = ", ".join(f"{w} {n}" for w, n in summary.counts.items()) if summary else ""
    print(
        f"labelled turn {args.turn}, call {args.call} of episode {args.episode_id[:12]} "
        f"{args.label.strip().lower()} by {who} (event {event}); the call's labels: {counts}"
    )
    return EXIT_OK


def cmd_review_correct(args: argparse.Namespace) -> int:
    from codesearch_core.cli.tool_cmds import _read_call_json
    from codesearch_core.gym import correct_step

    calls = _read_call_json(args.call)  # read before the store opens: a bad file leaves it be
    with open_store(args.db) as opened:
        store = opened.acting_as(Actor(check_name(args.by), Mode.CLI)) if args.by else opened
        done = correct_step(store, args.episode_id, args.turn, calls)
    fixed, original = done.corrected, done.original
    then = " then the original's submit," if done.submit_replayed else ""
    print(
        f"corrected turn {done.turn} of episode {original.episode_id[:12]}: played again,{then} "
        f"ending {fixed.end_reason} with reward {fixed.reward:.3f} (the original's "
        f"{original.reward:.3f})"
    )
    what = "stored as" if done.stored else "already stored as"
    print(f"{what} episode {fixed.episode_id} (corrected_from {original.episode_id})")
    return EXIT_OK


def _lead(opened: Store, by: str) -> Store:
    """The store acting as `--by` (or as who runs the command), refused when the studio's team
    lists that name below lead: the command line is trusted, but not to act as an annotator's
    bulk action."""
    store = opened.acting_as(Actor(check_name(by), Mode.CLI)) if by else opened
    who = store.actor.name
    member = next((u for u in store.users() if u.name == who), None)
    if member is not None and (why := denial(who, member.role, Action.RESOLVE)) is not None:
        raise CodesearchError(f"Not allowed: {why}")
    return store


def cmd_review_bulk(args: argparse.Namespace) -> int:
    from codesearch_core.models import DecisionAction
    from codesearch_core.store import kind_of

    kind = kind_of(args.queue)
    filters = kind.parse_filters(args.filter)  # before the store opens: a typo waits for nothing
    action = DecisionAction(args.bulk_action)
    with open_store(args.db) as opened:
        store = _lead(opened, args.by)
        queue = store.queue(kind.name)
        plan = queue.bulk_plan(filters, action)
        shown = ", ".join(f"{k}={v}" for k, v in filters.to_dict().items()) or "none"
        print(f"{kind.name} queue, filters {shown}: {plan.summary()}")
        if not args.yes:
            print("nothing decided: run again with --yes to apply")
            return EXIT_OK
        batch, done = queue.bulk_decide(
            filters, action, store.actor.name, expected=plan, reason=args.reason
        )
    print(
        f"{action.value}ed {len(done.item_ids)} as {store.actor.name} (batch {batch}); "
        f"`codesearch review undo-bulk --by {store.actor.name}` takes it back"
    )
    return EXIT_OK


def cmd_review_undo_bulk(args: argparse.Namespace) -> int:
    from codesearch_core.store import KINDS, kind_of

    names = [kind_of(args.queue).name] if args.queue else list(KINDS)
    with open_store(args.db) as opened:
        store = _lead(opened, args.by)
        who = store.actor.name
        # The queue whose latest undoable decision of the reviewer is a batch, latest first.
        last: list[tuple[int, str, str, int]] = []
        for name in names:
            queue = store.queue(name)
            batch = queue.last_undoable_batch(who)
            target = queue.last_undoable(who)
            if batch is not None and target is not None:
                last.append((target[1], name, *batch))
        if not last:
            where = f"in the {args.queue} queue" if args.queue else "in any queue"
            raise CodesearchError(f"{who} has no bulk action to take back {where}")
        _, name, batch_id, items = max(last)
        store.queue(name).undo(who)
    print(f"undid {who}'s bulk action {batch_id} in the {name} queue: {items} decisions taken back")
    return EXIT_OK
