"""service.budgets: the client address behind trusted proxies, the per-client rate budget and the policy."""

import gradio as gr
import pytest
from starlette.datastructures import Headers
from starlette.requests import Request

from service.budgets import (
    RateBudget,
    SpacePolicy,
    client_address,
    client_id,
    forwarded_for,
    request_client,
    scope_client,
)
from service.settings import Settings


def test_the_client_is_the_address_the_trusted_proxy_saw_not_what_the_client_wrote():
    spoofed = ["1.2.3.4, 203.0.113.9"]  # the client wrote 1.2.3.4, the proxy appended its peer
    assert client_address(spoofed, "10.0.0.1", hops=1) == "203.0.113.9"
    assert client_address(spoofed, "10.0.0.1", hops=0) == "10.0.0.1"  # no proxy trusted: the header is ignored
    assert client_address([], "10.0.0.1", hops=1) == "10.0.0.1"
    assert client_address(["203.0.113.9"], None, hops=2) == "unknown"
    assert client_id("203.0.113.9") != client_id("203.0.113.8") and "203" not in client_id("203.0.113.9")


def test_several_forwarded_for_lines_are_one_list_read_the_same_by_every_budget():
    # the client sent its own line first; the proxy appended the peer it saw to the last line
    raw = [(b"x-forwarded-for", b"6.6.6.6"), (b"host", b"x"), (b"x-forwarded-for", b"7.7.7.7, 203.0.113.9")]
    scope = {"type": "http", "headers": raw, "client": ("10.0.0.1", 5)}
    expected = client_id("203.0.113.9")
    assert scope_client(scope, hops=1) == expected
    assert request_client(gr.Request(request=Request(scope)), hops=1) == expected  # the owners' reading
    assert request_client(Request(scope), hops=1) == expected
    assert forwarded_for(Headers(raw=raw)) == ["6.6.6.6", "7.7.7.7, 203.0.113.9"]
    assert scope_client({**scope, "headers": raw[:1]}, hops=2) == client_id("10.0.0.1")  # too few entries: the peer


def test_a_rate_budget_holds_per_key_within_a_window_and_forgets_old_keys():
    budget = RateBudget(per_minute=3, keys=2)
    assert [budget.take("a", now=t) for t in (0, 1, 2, 3)] == [True, True, True, False]
    assert budget.take("b", now=3)  # another client has its own budget
    assert budget.take("a", now=60.5)  # the first event left the window
    budget.take("c", now=61)
    assert list(budget.seen) == ["a", "c"]  # at most `keys` clients are remembered


def policy() -> SpacePolicy:
    return SpacePolicy.from_settings(Settings.load())


def test_the_policy_requires_sign_in_on_a_space_and_is_a_setting_elsewhere(monkeypatch):
    monkeypatch.delenv("LAB_SIGN_IN", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert policy().sign_in is False and policy().forwarded_hops == 0
    monkeypatch.setenv("SPACE_ID", "someone/lab")
    assert policy().sign_in is True and policy().forwarded_hops == 1
    monkeypatch.setenv("LAB_SIGN_IN", "optional")
    assert policy().sign_in is False
    monkeypatch.setenv("LAB_SIGN_IN", "maybe")
    with pytest.raises(ValueError):
        policy()
