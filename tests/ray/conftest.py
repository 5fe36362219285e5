"""The Ray tests' own fixtures: a driver's token, the app's settings for training on a cluster."""

import pytest
from lab_fixture import RAY_TOKEN


@pytest.fixture
def with_token(monkeypatch):
    """A driver's environment with the token of tests/shared_fixtures.py's token_head."""
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", RAY_TOKEN)


@pytest.fixture
def on_ray(monkeypatch, with_token):
    """LAB_TRAIN_BACKEND=ray on `address`, with the token of token_head; returns the queue's factory. A job's driver
    reads these at its start (web.training's _spawn passes the environment on)."""

    def settings(address: str, fallback: str = "") -> None:
        monkeypatch.setenv("LAB_TRAIN_BACKEND", "ray")
        monkeypatch.setenv("LAB_RAY_ADDRESS", address)
        monkeypatch.setenv("LAB_TRAIN_FALLBACK", fallback)

    return settings
