"""The API tab and the named JSON endpoints `/predict` and `/compare` (Prediction.to_dict())."""

import html
import logging

import gradio as gr

from core.predict import InputError, Lab
from demo.i18n import L
from demo.runner import ALL, AUTO, run_models

log = logging.getLogger(__name__)

USAGE = """
```python
from gradio_client import Client

client = Client("http://127.0.0.1:7860/")
one = client.predict("It is not a bad film.", "dcnn", "auto", "auto", api_name="/predict")
print(one["label"], one["probs"], one["curve"]["kind"])
every = client.predict("这部电影不怎么好看，但是演员很棒", "auto", "auto", api_name="/compare")
print([(p["model"], p["label"]) for p in every])
```
`predict(text, model, task, lang)` and `compare(text, task, lang)`: `task` is `auto` or a task key
(`sst5`, `sst2`, `zh_sentiment`, ...), `lang` is `auto`, `en` or `zh`. Each prediction holds the label, the
class probabilities, the tokens (with `known`), the per-word `curve` (`kind`: `native` or `prefix`), the
leave-one-word-out `occlusion`, the model's `views`, `notices` and the checkpoint `source`.
Bad input answers with an error message, never a stack trace. The same from Python or a shell:
`core.predict.Lab.from_directory("checkpoints").predict(text, "dcnn")`, `python -m core.predict "text" --model dcnn --json`.
"""


def _call(lab: Lab, text, model: str, task: str, lang: str) -> list[dict]:
    try:
        predictions, _ = run_models(lab, text, model, task, lang)  # failed models are logged
    except InputError as err:
        raise gr.Error(html.escape(str(err), quote=False), print_exception=False) from None
    except Exception as err:  # a bug, not the input: the trace goes to the log, one line to the caller
        log.exception("API call failed")
        raise gr.Error(f"internal error ({type(err).__name__}); the server log has the details",
                       print_exception=False) from None
    return [p.to_dict() for p in predictions]


def build(lab: Lab) -> None:
    gr.Markdown(L("api_md"))
    gr.Markdown(USAGE)

    def predict(text: str, model: str = "tensor_cnn", task: str = AUTO, lang: str = AUTO) -> dict:
        """One model on one sentence: prediction, per-word curve, occlusion and the model's views."""
        if model == ALL:
            raise gr.Error("use /compare for all models", print_exception=False)
        return _call(lab, text, model, task, lang)[0]

    def compare(text: str, task: str = AUTO, lang: str = AUTO) -> list[dict]:
        """Every model of the task on one sentence (a list of predictions)."""
        return _call(lab, text, ALL, task, lang)

    gr.api(predict, api_name="predict", concurrency_id="model")
    gr.api(compare, api_name="compare", concurrency_id="model")
