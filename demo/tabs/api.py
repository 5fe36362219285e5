"""The API tab and the named JSON endpoints `/predict`, `/compare` (Prediction.to_dict()) and `/probes`
(ProbeReport.to_dict())."""

import html
import logging
from collections.abc import Callable
from typing import TypeVar

import gradio as gr

from core.analysis.probes import ProbeInputError, SuiteError
from core.notices import InputError
from core.predict import AUTO, Cancelled, Comparison, Request
from demo.i18n import L, failure_text, request_lang, t
from service.lab import ServedLab
from service.owners import PUBLIC
from web.endpoints import endpoint
from web.owners import Visitors
from web.runner import MODEL_POOL, PROBE_EVENTS, RequestGate, abandoned

log = logging.getLogger(__name__)
Answer = TypeVar("Answer")  # what an endpoint returns: a dict, a list of them

CODE = """
```python
from gradio_client import Client

client = Client("{url}")
one = client.predict("It is not a bad film.", "dcnn", "auto", "auto", api_name="/predict")
print(one["label"], one["probs"], one["curve"]["kind"])
every = client.predict("这部电影不怎么好看，但是音乐很棒", "auto", "auto", api_name="/compare")
print([(p["model"], p.get("label") or p["error"]) for p in every])  # a model that gave no answer says why
table = client.predict("en", "auto", api_name="/probes")
print(table["pass_rates"]["negation"])
```
"""


def _answer(run: Callable[[], Answer]) -> Answer:
    """`run()`'s predictions as JSON; bad input and bugs as one line for the caller, never a trace."""
    try:
        return run()
    except (InputError, ProbeInputError, SuiteError) as err:
        raise gr.Error(html.escape(str(err), quote=False), print_exception=False) from None
    except Cancelled:  # nobody is waiting for the answer any more
        raise abandoned() from None
    except Exception as err:  # a bug, not the input: the trace goes to the log, one line to the caller
        log.exception("API call failed")
        raise gr.Error(
            f"internal error ({type(err).__name__}); the server log has the details", print_exception=False
        ) from None


def compared(result: Comparison, order: list[str]) -> list[dict]:
    """/compare's answer in the task's model `order`: the predictions, and in place of a model that gave no answer
    which one and why (its failure code, the English sentence the Lab shows, the detail): none goes missing unsaid."""
    entries = {p.model: p.to_dict() for p in result.predictions}
    entries |= {
        f.model: {"model": f.model, "error": f.code, "message": failure_text(f, "en"), "detail": f.error}
        for f in result.failures
    }
    return [entries[m] for m in order if m in entries]


def usage(lab: ServedLab, request: gr.Request | None) -> str:
    """How to call this server (the locales' api_usage): its address as the browser reached it (behind a proxy,
    such as a Space, the forwarded host and scheme), and the tasks it has loaded."""
    headers = getattr(request, "headers", None) or {}
    host = headers.get("x-forwarded-host") or headers.get("host") or "127.0.0.1:7860"
    scheme = headers.get("x-forwarded-proto") or getattr(getattr(request, "url", None), "scheme", None) or "http"
    tasks = ", ".join(f"`{t}`" for t in lab.tasks()) or "-"
    address = f"{scheme.split(',')[0].strip()}://{host.split(',')[0].strip()}/"
    return CODE.replace("{url}", address) + t("api_usage", request_lang(request), tasks=tasks)


def check_lang(lab: ServedLab, task: str, lang: str) -> None:
    """A language that contradicts the task asked for is refused, not silently ignored."""
    task_lang = next((c.meta.get("lang") for (t, _), c in lab.checkpoints.items() if t == task), None)
    if lang not in (None, "", AUTO) and task not in (None, "", AUTO) and task_lang and lang != task_lang:
        raise gr.Error(
            f"lang '{html.escape(str(lang))}' does not match task {html.escape(str(task))}, which is "
            f"'{task_lang}'; leave lang 'auto' or choose a task of that language",
            print_exception=False,
        )


def build(lab: ServedLab, visitors: Visitors) -> gr.Markdown:
    """The tab's text; its example (usage(), on page load) names the address the page was opened at."""
    gr.Markdown(L("api_md"))
    example = gr.Markdown(usage(lab.visible_to(PUBLIC), None), elem_id="api-usage")  # the page everybody is sent

    def predict(
        text: str,
        model: str = "tensor_cnn",
        task: str = AUTO,
        lang: str = AUTO,
        methods: str = "default",
        intervention: str = "none",
        request: gr.Request | None = None,
    ) -> dict:
        """One model on one sentence: prediction, per-word curve, word attributions and the model's views;
        with an `intervention` (see /interventions), of the model with that part switched off or replaced.

        Args:
            text: the sentence to classify, English or Chinese (past 5,000 characters it is cut)
            model: one model: tensor_cnn, mrnn, dcnn, adasent or agt
            task: the task whose checkpoint answers (sst5, sst2, zh_sentiment, ...); auto: the language's default
            lang: en or zh; auto: detected from the text (it must agree with the task)
            methods: word attributions: default (occlusion), all, or names, comma-separated (gradient_x_input, ...)
            intervention: none, or a key of /interventions for this model, "key" or "key:index" (e.g. "map_off:2")
        """
        seen = visitors.lab(lab, request)
        check_lang(seen, task, lang)
        return _answer(
            lambda: (
                RequestGate()
                .run(
                    seen.plan_predict(
                        Request(text, models=(model,), task=task, lang=lang, methods=methods, intervention=intervention)
                    )
                )
                .predictions[0]
                .to_dict()
            )
        )

    def interventions(task: str = AUTO, request: gr.Request | None = None) -> dict:
        """Per model of the task (`auto`: every task's models): each intervention's key, what its index names
        and the paper section whose claim it tests; pass "key" or "key:index" to /predict.

        Args:
            task: the task whose models are listed (sst5, sst2, zh_sentiment, ...); auto: every task's
        """
        seen = visitors.lab(lab, request)
        return _answer(lambda: seen.interventions(None if task in (None, "", AUTO) else task))

    def compare(
        text: str, task: str = AUTO, lang: str = AUTO, methods: str = "default", request: gr.Request | None = None
    ) -> list[dict]:
        """Every model of the task on one sentence: a list with one entry per model, in the task's model order, its
        prediction, or for a model that gave no answer {"model", "error" (a code), "message", "detail"}.

        Args:
            text: the sentence to classify, English or Chinese (past 5,000 characters it is cut)
            task: the task whose models answer (sst5, sst2, zh_sentiment, ...); auto: the language's default
            lang: en or zh; auto: detected from the text (it must agree with the task)
            methods: word attributions: default (occlusion), all, or names, comma-separated (gradient_x_input, ...)
        """
        seen = visitors.lab(lab, request)
        check_lang(seen, task, lang)

        def run() -> list[dict]:
            result = RequestGate().run(
                seen.plan_compare(Request(text, task=task, lang=lang, methods=methods)), MODEL_POOL
            )
            return compared(result, seen.models(result.predictions[0].task))

        return _answer(run)

    def probes(suite: str = "en", task: str = AUTO, request: gr.Request | None = None) -> dict:
        """A probe suite against every model of the task: pass rates per capability and model, with counts.

        Args:
            suite: the probe suite: en (English cases) or zh (Chinese cases)
            task: the task whose models are probed (sst5, sst2, zh_sentiment, ...); auto: the suite's language's
        """

        chosen = None if task in (None, "", AUTO) else task
        return _answer(
            lambda: RequestGate().probes(visitors.lab(lab, request), chosen, suite=suite).to_dict(failures=False)
        )

    endpoint(predict, api_name="predict", concurrency_id="model")
    endpoint(compare, api_name="compare", concurrency_id="model")
    endpoint(probes, api_name="probes", **PROBE_EVENTS)
    endpoint(interventions, api_name="interventions")

    def owner(key: str = "", request: gr.Request | None = None) -> str:
        """Whose jobs and models this session uses: with "" the key of this session's own (keep it), with a key
        this session acts for that key's owner from now on.

        Args:
            key: "" for this session's own key (keep it), or a key an earlier session's /owner call returned
        """
        if request is None:  # Gradio passes every call's request
            raise gr.Error("/owner needs a session", print_exception=False)
        return visitors.on_api(key, request)

    endpoint(owner, api_name="owner")
    return example
