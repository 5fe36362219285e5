"""The app as an MCP server (GRADIO_MCP_SERVER=true): the named analysis endpoints are MCP tools, training and
publishing are not, a tool answers as the endpoint does, and MCP sessions own nothing. One app serves every test
here, launched in this process as app.py launches it (its app_kwargs, its own user-models folder): Gradio's MCP
session manager runs once per process, so this is the only module that starts an MCP server."""

import asyncio

import httpx
import pytest
from gradio_client import handle_file
from lab_fixture import start_app
from test_owners import wait_done
from test_user_training import reviews, write_csv

from service.settings import Settings
from tools.bench.loadtest import app_client


@pytest.fixture(scope="module")
def user_models(tmp_path_factory, monkeypatch_module):
    root = tmp_path_factory.mktemp("mcp_user_models")
    monkeypatch_module.setenv("LAB_USER_MODELS", str(root))
    return root


@pytest.fixture(scope="module")
def mcp_app(lab, user_models, monkeypatch_module, tmp_path_factory):
    from demo import t
    from web import app_kwargs

    monkeypatch_module.setenv("GRADIO_MCP_SERVER", "true")
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio-mcp")))
    settings = Settings.load()
    demo, url = start_app(lab, settings, mcp_server=True, app_kwargs=app_kwargs(settings, t))
    yield url.rstrip("/")
    demo.close()


def test_the_analysis_endpoints_are_tools_and_training_is_not(mcp_app):
    schema = httpx.get(f"{mcp_app}/gradio_api/mcp/schema", timeout=30).json()
    names = {tool["name"] for tool in schema}
    assert {"predict", "compare", "interventions", "probes"} <= names
    assert not names & {"owner", "train", "train_status", "train_cancel", "on_push"}


def test_training_stays_callable_by_clients(mcp_app):
    client = app_client(mcp_app)
    try:
        with pytest.raises(Exception) as err:  # an unknown job id: the endpoint answers, with its own error
            client.predict("no-such-job", api_name="/train_status")
        assert "no-such-job" in str(err.value) or "job" in str(err.value)
    finally:
        client.close()


def test_two_mcp_sessions_own_nothing_and_see_no_visitor_s_model(mcp_app, user_models, tmp_path):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    url = mcp_app + "/"
    visitor = app_client(url)
    try:
        path = handle_file(str(write_csv(tmp_path / "private.csv", reviews(40))))
        job = visitor.predict(path, "dcnn", "review", "stars", 1, 15, "none", api_name="/train")
        task = wait_done(visitor, job, user_models)["task"]

        async def agent(url: str, task: str) -> tuple[set[str], str, str]:
            async with streamablehttp_client(f"{url}gradio_api/mcp/") as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {tool.name for tool in (await session.list_tools()).tools}
                    private = await session.call_tool("predict", {"text": "a fun film", "task": task})
                    public = await session.call_tool("predict", {"text": "a fun film", "model": "dcnn"})
                    return tools, str(private.content), str(public.content)

        for tools, private, public in [asyncio.run(agent(url, task)) for _ in range(2)]:  # two MCP sessions
            assert not tools & {"owner", "train", "train_status", "train_cancel"} and "predict" in tools
            assert f"no model is loaded for task '{task}'" in private and "probs" not in private
            assert "probs" in public
    finally:
        visitor.close()
