"""The Synthesize page: a templates run writes drafts into the store and shows the counts per
stage; with no corpus it still renders; a model engine that cannot run says why."""

from __future__ import annotations

import socket
from pathlib import Path

from app_support import (
    open_app,
    stored,
    texts,
)

from codesearch_core.store import DRAFT

PAGE = "pages/synthesize.py"


def test_a_run_writes_drafts_and_shows_the_stages(studio_db: Path) -> None:
    at = open_app(PAGE, reviewer="ann")
    at.selectbox(key="syn:corpus").select("webshop")
    at.number_input(key="syn:limit").set_value(3)
    at.button(key="syn:start").click().run()
    assert not at.exception, at.exception
    assert any("**3** new drafts" in t for t in texts(at, "success"))
    stages = at.dataframe[0].value
    assert list(stages["stage"]) == ["candidates", "mined", "verified", "deduplicated", "kept"]
    assert list(stages["targets"])[-1] == 3
    with stored(studio_db) as store:
        assert store.queue(DRAFT).counts()["open"] == 3


def test_the_page_renders_with_no_corpus(empty_install: Path) -> None:
    at = open_app(PAGE)
    assert not at.exception
    assert not texts(at, "error")


def test_the_vllm_engine_without_vllm_installed_says_how_to_get_it(studio_db: Path) -> None:
    at = open_app(PAGE, reviewer="ann")
    at.segmented_control(key="syn:engine").set_value("vllm").run()
    assert not at.exception
    assert any("vLLM is not installed" in w for w in texts(at, "warning"))
    assert at.button(key="syn:start").disabled


def test_an_openai_server_that_is_not_there_is_named_before_the_run(studio_db: Path) -> None:
    at = open_app(PAGE, reviewer="ann")
    at.selectbox(key="syn:corpus").select("webshop")
    at.segmented_control(key="syn:engine").set_value("openai").run()
    assert at.button(key="syn:start").disabled  # no model named yet
    # A port nothing listens on (bound, never listened).
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        at.text_input(key="syn:oa_url").input(url)
        at.text_input(key="syn:oa_model").input("some-model").run()
        assert not at.button(key="syn:start").disabled
        at.button(key="syn:start").click().run()
    assert not at.exception
    assert any("cannot reach" in e and "Is the server running" in e for e in texts(at, "error"))
    with stored(studio_db) as store:
        assert store.queue(DRAFT).counts()["open"] == 0
