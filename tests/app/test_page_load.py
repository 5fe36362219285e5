"""The page opens in one event (web/page_load.py): every tab's part of a page load runs in the load event that
says who the visitor is, in the page's language, instead of an event of its own per tab."""

import asyncio
import os

import aiohttp
import httpx
import pytest
from lab_fixture import start_app

from core.analysis.export import UPLOAD_MAX_CHARS, UPLOAD_MAX_LINES
from demo.i18n import example_labels, t
from tools.bench.hall import Hall


@pytest.fixture(scope="module")
def url(lab, tmp_path_factory, monkeypatch_module):
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
    demo, url = start_app(lab)
    yield url
    demo.close()


def opened(url: str, language: str) -> dict:
    """The page's load events answered for a browser asking for `language`: component id -> value."""
    hall = Hall.read(url, 60)

    async def page() -> list:
        async with aiohttp.ClientSession(headers={"Accept-Language": language}) as http:
            return await hall.events(http, os.urandom(8).hex(), hall.loads)

    config = httpx.get(f"{url}config").json()
    outputs = [d["outputs"] for d in config["dependencies"] if d["id"] in {i for i, _ in hall.loads}]
    return {i: v for ids, values in zip(outputs, asyncio.run(page())) for i, v in zip(ids, values)}


def test_the_page_opens_in_one_event_with_every_tabs_part_in_its_language(url):
    config = httpx.get(f"{url}config").json()
    loads = [d for d in config["dependencies"] if d["backend_fn"] and any(e == "load" for _, e in d["targets"])]
    assert len(loads) == 1
    by_elem = {c.get("props", {}).get("elem_id"): c["id"] for c in config["components"]}
    hints = []
    for language, lang in (("zh-CN,zh;q=0.9", "zh"), ("en-GB,en;q=0.8", "en")):
        values = opened(url, language)
        hints.append(values[by_elem["attr-hint"]])  # which attribution method is most faithful: the page's words
        assert values[by_elem["owner-key"]]  # the visitor's key, made on its first visit
        assert values[by_elem["probe-suite"]] == lang  # the probe suite in the page's language (its value alone)
        assert values[by_elem["load-warning"]] == ""  # nothing failed to load: the banner's text alone, hidden
        samples = [v for v in values.values() if isinstance(v, dict) and "sample_labels" in v]
        assert samples and samples[0]["sample_labels"] == example_labels(lang)
        export = t("export_info", lang, lines=UPLOAD_MAX_LINES, chars=UPLOAD_MAX_CHARS)
        assert any(isinstance(v, str) and v.startswith(export) for v in values.values())
    assert all(isinstance(h, str) and h for h in hints) and hints[0] != hints[1]


def test_the_load_events_values_postprocessed_in_its_handler_are_gradios():
    """web/page_load.py postprocessed: what an event registered with postprocess=False sends of them is what
    Gradio's own postprocess sends of the raw values (plain values, data models, updates, a component, a State)."""
    from types import SimpleNamespace

    import gradio as gr
    from gradio.state_holder import SessionState

    from web.page_load import postprocessed

    with gr.Blocks() as blocks:
        outputs = [
            gr.Markdown(),
            gr.Dataframe(),
            gr.Dropdown(["a", "b", "c"]),
            gr.Markdown(visible=False),
            gr.Dataset(components=[gr.Textbox(visible=False)], samples=[["x"]]),
            gr.State(None),
            gr.Number(),
        ]
    values = lambda: (  # afresh for each: Gradio pops an update's value
        "**bold**",
        {"headers": ["a", "b"], "data": [[1, "x"], [2, "y"]]},
        gr.update(choices=["a", "c"], value="c"),
        gr.update(value="shown", visible=True),
        gr.Dataset(sample_labels=["one"]),
        {"kept": [1, 2]},
        gr.update(),
    )

    def sent(postprocess: bool, given: tuple) -> list:
        fn = SimpleNamespace(outputs=outputs, postprocess=postprocess, batch=False, is_validator_function=False)
        return asyncio.run(blocks.postprocess_data(fn, list(given), SessionState(blocks)))

    gradios, ours = sent(True, values()), sent(False, postprocessed(outputs, values()))
    assert [json_of(v) for v in ours] == [json_of(v) for v in gradios]


def json_of(value):
    from gradio.data_classes import GradioModel, GradioRootModel

    return value.model_dump() if isinstance(value, GradioModel | GradioRootModel) else value
