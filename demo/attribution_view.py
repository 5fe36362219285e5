"""The Lab's word-attribution pieces: the method selector with its faithfulness hint (what `make attribution`
measured, reports/attribution.md), and what a model panel shows of a prediction's attributions."""

import gradio as gr

from core.analysis.attribution import DEFAULT_METHODS, METHODS, most_faithful
from core.analysis.plausibility import TOP_K
from core.predict import ALL, AUTO, Prediction
from demo.i18n import L, label_name, model_name, t, task_name
from demo.plots import esc
from service.lab import ServedLab


def method_name(method: str, ui: str) -> str:
    return t(f"attr_name_{method}", ui)


def requested(method: str) -> list[str]:
    """What a request computes when `method` is chosen: the defaults and it (others only when chosen)."""
    return [m for m in METHODS if m in DEFAULT_METHODS or m == method]


def word_scores(p: Prediction, method: str) -> list[float]:
    """The method's per-word scores; [] when it was not computed (past the word cap)."""
    found = p.attributions.get(method)
    return found.scores if found else []


def highlight_texts(p: Prediction, method: str, scale: float, ui: str) -> tuple[str, str]:
    """The highlight's label and the note under it (integrated gradients: its steps and completeness error).
    Scores the method did not compute (past core's word cap), or all zero, say so instead of a scale."""
    label = label_name(p.label, ui)
    if not word_scores(p, method) or scale <= 1e-9:
        title = t(
            "occlusion" if method == "occlusion" else "attr_highlight", ui, method=method_name(method, ui), label=label
        )
        return title, t(
            "attr_zero" if word_scores(p, method) else "attr_not_computed", ui, method=method_name(method, ui)
        )
    if method == "occlusion":
        return t("occlusion", ui, label=label), t("occlusion_note", ui, label=label, scale=scale)
    title = t("attr_highlight", ui, method=method_name(method, ui), label=label)
    note = t("attr_note_gradient", ui, method=method_name(method, ui), label=label, scale=scale)
    found = p.attributions.get(method)
    if found and found.completeness_error is not None:
        note += " " + t("attr_completeness", ui, steps=found.steps, error=found.completeness_error)
    return title, note


def scores_table(p: Prediction, ui: str) -> str:
    """An HTML table, one row per word, one column per computed method: every method's scores side by side."""
    methods = [m for m in METHODS if m in p.attributions and p.attributions[m].scores]
    heads = [t("attr_word", ui)] + [method_name(m, ui) for m in methods]
    rows = "".join(
        "<tr><td>"
        + esc(token.surface)
        + "</td>"
        + "".join(f"<td>{p.attributions[m].scores[i]:+.3f}</td>" for m in methods)
        + "</tr>"
        for i, token in enumerate(p.tokens)
    )
    caption = esc(t("attr_scores", ui, label=label_name(p.label, ui)))
    return (
        f'<table class="attr-scores" tabindex="0"><caption>{caption}</caption>'
        "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in heads) + f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def plausible_text(plausibility: dict, ui: str) -> str:
    """The method that agrees best with the SST annotators (highest rank agreement), with its tau and P@k."""
    scored = {m: p for m, p in plausibility.items() if p["rank_agreement"] is not None}
    if not scored:
        return ""
    best = max(scored, key=lambda m: scored[m]["rank_agreement"])
    p = scored[best]
    return t(
        "attr_plausible_cell",
        ui,
        method=method_name(best, ui),
        tau=p["rank_agreement"],
        k=TOP_K,
        precision=p["precision"],
        chance=p["chance"],
    )


def faithfulness_hint(lab: ServedLab, model: str, task: str, ui: str) -> str:
    """Which method the deletion test found most faithful, for the chosen model (every model when "all")
    on the chosen task (every task when "auto"), and, where the task has gold trees, which agrees best with
    the annotators: a table, a row per model and a column per task; only for checkpoints with their own measure
    (attribution.json)."""
    cells, sentences, plausible = {}, set(), False  # (model, task) -> the cell's text; the samples' sizes
    for tk in lab.tasks() if task in (None, "", AUTO) else [task]:
        for m in lab.models(tk):
            best = most_faithful(lab.checkpoints[(tk, m)]) if model in (m, ALL) else None
            if best:
                cells[(m, tk)] = t(
                    "attr_best_cell",
                    ui,
                    method=method_name(best["method"], ui),
                    aopc=best["aopc"][best["method"]],
                    random=best["random"],
                )
                if best["plausibility"] and (agreeing := plausible_text(best["plausibility"], ui)):
                    cells[(m, tk)] += "<br>" + agreeing
                    plausible = True
                sentences.add(best["sentences"])  # each task's run has its own sample
    if not cells:
        return t("attr_not_measured", ui)
    models = list(dict.fromkeys(m for m, _ in cells))
    tasks = list(dict.fromkeys(tk for _, tk in cells))
    sizes = sorted(sentences)
    lines = [
        t("attr_best", ui, n=f"{sizes[0]}–{sizes[-1]}" if len(sizes) > 1 else sizes[0]),
        "",
        "| " + " | ".join([t("attr_model", ui)] + [task_name(tk, ui) for tk in tasks]) + " |",
        "|" + "---|" * (len(tasks) + 1),
    ]
    # the model's name without its paper: the hint sits in a narrow column
    lines += [
        "| " + " | ".join([model_name(m, cited=False)] + [cells.get((m, tk), "–") for tk in tasks]) + " |"
        for m in models
    ]
    return "\n".join(lines + (["", t("attr_plausible_note", ui, k=TOP_K)] if plausible else []))


def build() -> tuple[gr.Radio, gr.Markdown]:
    """The method selector and, folded under it, the faithfulness hint for the chosen model and task: a table
    of models by tasks, which beside the methods was squeezed to a word per line and on a phone is a screen long.
    The Lab's events fill the hint (demo/tabs/lab.py): the visitor's choice of model or task, the page's load (a
    link's) and another tab opening the Lab, each for the model and task it sets."""
    method = gr.Radio(
        [(L(f"attr_{m}"), m) for m in METHODS],
        value=DEFAULT_METHODS[0],
        label=L("attr_method"),
        info=L("attr_method_info"),
        elem_id="attr-method",
    )
    with gr.Accordion(L("attr_best_fold"), open=False, elem_id="attr-hint-box"):
        hint = gr.Markdown(elem_id="attr-hint")
    return method, hint
