"""Who is using the studio: a typed name (local mode), an OpenID Connect login, or a proxy header.

`identify` runs first on every script run (app.py); it settles the actor and their role for this
run, or draws the login (or refusal) page and ends the run there. The settings are read from the
environment and `.streamlit/secrets.toml` (`access.load_settings`); the role comes from the store,
which checks it again inside every write, so what is hidden here is refused there as well.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

import streamlit as st

from codesearch_core import access
from codesearch_core.access import Action, Actor, Mode, Role
from codesearch_core.errors import CodesearchError
from codesearch_core.store import Store, check_reviewer
from pages import _layout

#: The reviewer's name in local mode; mirrored into the URL so a refresh or a bookmark keeps it.
REVIEWER: Final = "reviewer"


@dataclass(frozen=True, slots=True)
class Who:
    actor: Actor
    role: Role
    settings: access.AccessSettings
    #: The reviewer name decisions are recorded under ("" : none typed yet, local mode).
    reviewer: str
    #: What is wrong with the typed name (local mode), or None.
    problem: str | None = None


#: Session-state key of this session's `Who` (not a widget's key: a browser cannot set it).
_WHO: Final = "_identity_who"


def settings() -> access.AccessSettings:
    """The access settings (CodesearchError when they are wrong)."""
    try:
        table = st.secrets.get("codesearch", {})
    except (FileNotFoundError, KeyError, ValueError):  # no secrets file, or an unreadable one
        table = {}
    return access.load_settings(os.environ, dict(table))


def identify(open_store: Callable[[], Store]) -> Who:
    """The person behind this run and their role; draws the login or refusal page and stops the
    run when there is none yet (or they may not in)."""
    try:
        conf = settings()
    except CodesearchError as err:
        _stop_with("The studio's access settings are wrong", str(err))
    if conf.mode is Mode.LOCAL:
        who = _local(conf)
    else:
        name = _oidc_name(conf) if conf.mode is Mode.OIDC else _proxy_name(conf)
        actor = Actor(name, conf.mode)
        try:
            role = open_store().acting_as(actor).sign_in(conf)
        except CodesearchError as err:
            _stop_with("You cannot use this studio", str(err))
        if role is Role.DISABLED:
            _stop_with(
                "Your access was removed", f"An admin removed {name}'s access to this studio."
            )
        who = Who(actor, role, conf, name)
    st.session_state[_WHO] = who
    return who


def current() -> Who:
    """What `identify` settled for this session. A widget's callback runs before app.py does, so
    it sees the identity of the session's last run; a typed name is read afresh (it may have just
    changed), and the store checks the role again at the write."""
    who: Who | None = st.session_state.get(_WHO)
    if who is None:
        raise CodesearchError("no one is identified in this session yet: reload the page")
    return _local(who.settings) if who.actor.mode is Mode.LOCAL else who


def denial(action: Action) -> str | None:
    """Why the current person may not take `action` (for a disabled button's help), or None."""
    who = current()
    return access.denial(who.actor.name, who.role, action)


def draw_who() -> str | None:
    """The sidebar's first lines: the name field (local mode) or who is logged in, and how. Returns
    what the address should hold for `reviewer` (None: nothing)."""
    who = current()
    if who.actor.mode is Mode.LOCAL:
        _layout.keys_leave_fields()  # Enter leaves the name: the next A is the card's
        st.text_input(
            "Reviewer",
            key=REVIEWER,
            placeholder="your name",
            help="Your decisions are recorded under this name; the Review page resumes where "
            "you left off. Kept in the page address, so a refresh keeps it.",
        )
        if who.problem:
            st.error(f"Reviewer: {who.problem}", icon=":material/badge:")
    else:
        # In code style: a name that is an email address is not made a mailto link.
        st.markdown(f"`{who.actor.name}` · **{who.role}**")
        if who.actor.mode is Mode.OIDC:
            st.button("Log out", icon=":material/logout:", on_click=st.logout)
    st.caption(f"**Access** · {who.settings.describe()}")
    return name_for_address()


#: The name box a page draws where it needs a reviewer and none is set (`ask_name`).
_ASKED: Final = "reviewer:asked"


def ask_name(doing: str) -> str:
    """The reviewer decisions are recorded under; where there is none yet (local mode, no name
    typed), the name box in the page itself, saying it is needed `doing` ("to review episodes"),
    and "". At 900 px the sidebar is folded away (`_layout.fold_sidebar_when_narrow`): "type your
    name in the sidebar" pointed at nothing in view (issue 39). This box is the sidebar's name:
    Enter, or a click elsewhere, sets it there and in the address. A login names the reviewer:
    no box."""
    who = current()
    if who.reviewer or who.actor.mode is not Mode.LOCAL:
        return who.reviewer
    # Drawn afresh each time it is needed: it starts from what the sidebar's box holds.
    st.session_state.setdefault(_ASKED, st.session_state.get(REVIEWER, ""))
    _layout.keys_leave_fields()  # Enter leaves the name: the next A is the card's
    st.text_input(
        "Your name", key=_ASKED, on_change=_take_asked, placeholder="your name",
        icon=":material/person:", width=360,
        help="The same name as the sidebar's Reviewer. Kept in the page address, so a refresh "
        "keeps it.",
    )  # fmt: skip
    if who.problem:
        st.error(f"Reviewer: {who.problem}", icon=":material/badge:")
    else:
        st.caption(f"Type your name {doing}: your decisions are recorded under it.")
    return ""


def _take_asked() -> None:
    # A callback: it runs before the sidebar's box is drawn again, so that box may be set.
    st.session_state[REVIEWER] = st.session_state.get(_ASKED, "")


def name_for_address() -> str | None:
    """Only a typed name travels in the address; a login's identity never comes from it (a
    forged `?reviewer=` is dropped)."""
    who = current()
    return who.reviewer if who.actor.mode is Mode.LOCAL else None


def _local(conf: access.AccessSettings) -> Who:
    # Mirrored into the address by hand: binding it to a query parameter breaks switch_page.
    if REVIEWER not in st.session_state:
        st.session_state[REVIEWER] = st.query_params.get(REVIEWER, "")
    typed = str(st.session_state.get(REVIEWER) or "").strip()
    problem = None
    try:
        name = check_reviewer(typed) if typed else ""
    except CodesearchError as err:
        name, problem = "", str(err)
    return Who(Actor(name or _os_user(), Mode.LOCAL), Role.ADMIN, conf, name, problem)


def _os_user() -> str:
    try:
        return getpass.getuser() or "local"
    except (KeyError, OSError):
        return "local"


def _has_auth_table() -> bool:
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, ValueError):  # no secrets file at all, or an unreadable one
        return False


def _oidc_name(conf: access.AccessSettings) -> str:
    if not _has_auth_table():
        _stop_with(
            "Login is not set up",
            "CODESEARCH_AUTH is oidc, but `.streamlit/secrets.toml` has no [auth] table naming "
            "the OpenID Connect provider (see docs/teams.md, Deploying for a team).",
        )
    if not st.user.is_logged_in:
        _page(_login_page, "Log in")
    claims: dict[str, Any] = st.user.to_dict()
    name = str(claims.get(conf.oidc_claim) or "").strip()
    if not name:
        _stop_with(
            "Your login does not say who you are",
            f"The provider's token has no {conf.oidc_claim!r} claim (the studio names people by "
            "it; set oidc_claim in [codesearch]).",
            logout=True,
        )
    return _checked(name)


def _login_page() -> None:
    conf = settings()
    st.title("codesearch-gym studio")
    st.write("This studio is shared by a team: log in to review, author and export.")
    provider = conf.oidc_provider
    st.button(
        "Log in",
        type="primary",
        icon=":material/login:",
        on_click=st.login,
        args=(provider,) if provider else (),
    )


def _proxy_name(conf: access.AccessSettings) -> str:
    name = str(st.context.headers.get(conf.proxy_header) or "").strip()
    if not name:
        _stop_with(
            "This request did not come through the login proxy",
            f"The studio takes who you are from the {conf.proxy_header} header its login proxy "
            "sets, and this request came without it. Open the studio through the proxy.",
        )
    return _checked(name)


def _checked(name: str) -> str:
    try:
        return access.check_name(name)
    except CodesearchError as err:
        _stop_with("Your login name cannot be used", f"{name[:80]!r}: {err}")


def _stop_with(title: str, message: str, *, logout: bool = False) -> NoReturn:
    def page() -> None:
        st.title(title)
        st.error(message, icon=":material/lock:")
        if logout:
            st.button("Log out", on_click=st.logout)

    _page(page, title)


def _page(draw: Callable[[], None], title: str) -> NoReturn:
    """Show one page in place of the studio's navigation, and end the run. It answers at every
    page's address, so a bookmark of /review shows it (not Streamlit's "page not found")."""
    stems = sorted(p.stem for p in Path(__file__).parent.glob("*.py") if not p.stem.startswith("_"))
    pages = [st.Page(draw, title=title, default=True)]
    pages += [st.Page(draw, title=title, url_path=stem) for stem in stems]
    st.navigation(pages, position="hidden").run()
    st.stop()
