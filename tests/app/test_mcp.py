"""The app as an MCP server (GRADIO_MCP_SERVER=true): the named analysis endpoints are MCP tools, training and
publishing are not, and a tool answers as the endpoint does."""

import httpx
import pytest
from lab_fixture import start_app


@pytest.fixture(scope="module")
def mcp_app(lab, monkeypatch_module, tmp_path_factory):
    monkeypatch_module.setenv("GRADIO_MCP_SERVER", "true")
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio-mcp")))
    demo, url = start_app(lab, mcp_server=True)
    yield url.rstrip("/")
    demo.close()


def test_the_analysis_endpoints_are_tools_and_training_is_not(mcp_app):
    schema = httpx.get(f"{mcp_app}/gradio_api/mcp/schema", timeout=30).json()
    names = {tool["name"] for tool in schema}
    assert {"predict", "compare", "interventions", "probes"} <= names
    assert not names & {"owner", "train", "train_status", "train_cancel", "on_push"}


def test_training_stays_callable_by_clients(mcp_app):
    from gradio_client import Client

    client = Client(mcp_app, verbose=False)
    try:
        with pytest.raises(Exception) as err:  # an unknown job id: the endpoint answers, with its own error
            client.predict("no-such-job", api_name="/train_status")
        assert "no-such-job" in str(err.value) or "job" in str(err.value)
    finally:
        client.close()
