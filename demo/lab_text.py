"""The Lab's words above the figures, as Markdown: the headline (the prediction, or the models' votes), what the
intervention tests, and the notices. Pure functions; every typed or visitor-given word is Markdown-escaped."""

from collections import Counter

from core.notices import Notice
from core.predict import Prediction
from demo.i18n import (
    failure_text,
    intervention_name,
    intervention_text,
    label_name,
    model_name,
    notice_text,
    source_text,
    t,
    task_name,
)
from demo.plots import md
from service.lab import ServedLab


def intervention_section(lab: ServedLab, task: str, model: str, intervention: str, ui: str) -> str:
    """One sentence: the paper's claim the intervention tests (its section), in the UI language."""
    key = intervention.partition(":")[0]
    section = lab.interventions(task).get(model, {}).get(key, {}).get("section", "")
    return t("intervention_tests", ui, section=intervention_text(model, key, section, ui))


def votes_text(predictions: list[Prediction], ui: str) -> str:
    """The models' votes: a label more of them chose than any other is the majority (with its count); labels
    that share the top count are a tie, said as one ("2-2-1": no majority), never one of them picked."""
    votes = Counter(p.label for p in predictions).most_common()
    top = [label for label, count in votes if count == votes[0][1]]
    split = "-".join(str(count) for _, count in votes)
    label = md(label_name(votes[0][0], ui))
    if len(predictions) == 1:
        return t("majority_one", ui, label=label)
    if len(votes) == 1:
        return t("majority_all", ui, label=label, n=len(predictions))
    if len(top) == 1:
        return t("majority", ui, label=label, votes=votes[0][1], n=len(predictions), split=split)
    return t(
        "tie",
        ui,
        labels=t("tie_and", ui).join(f"**{md(label_name(label, ui))}**" for label in top),
        votes=votes[0][1],
        n=len(predictions),
        split=split,
    )


def summary_text(predictions: list[Prediction], ui: str, titles: dict[str, str] | None = None) -> str:
    """The headline; a visitor's task is named by its `titles` (Lab.titles: its file and date). A title or a label
    comes from a visitor's file: Markdown escaped, so that `x[a](javascript:...).csv` is never a link."""
    first, colon = predictions[0], t("colon", ui)
    facts_ = [
        f"{t('fact_language', ui)}{colon}{t('lang_' + first.lang, ui)}{t('bracketed', ui, text=t('detected', ui))}",
        f"{t('fact_task', ui)}{colon}{md((titles or {}).get(first.task) or task_name(first.task, ui))}",
    ]
    if len(predictions) == 1 or predictions[-1].intervention != "none":
        p = predictions[-1]
        head = f"### {t('prediction', ui)}{colon}**{md(label_name(p.label, ui))}**"
        head += t("bracketed", ui, text=f"{max(p.probs):.2f}")
        if p.intervention != "none":
            head = t(
                "intervention_summary",
                ui,
                intervention=intervention_name(p.intervention, ui),
                after=f"{md(label_name(p.label, ui))} ({max(p.probs):.2f})",
                before=f"{md(label_name(first.label, ui))} ({max(first.probs):.2f})",
            )
        facts_ = (
            [f"{t('fact_model', ui)}{colon}{md(model_name(p.model))}"]
            + facts_
            + [f"{t('source', ui)}{colon}`{source_text(p.source, ui)}`"]
        )
    else:
        head = "### " + votes_text(predictions, ui)
    sentence = f"{t('fact_sentence', ui)}{colon}“{md(first.text)}”"  # which sentence this result is of
    return head + "\n\n" + sentence + "\n\n" + " · ".join(facts_)


def notices_text(predictions: list[Prediction], failures: list, ui: str, method: str = "occlusion") -> str:
    """The notices, each once with the models it concerns (unless it names them itself, as an intervention's
    does); one about attribution methods names only the method the highlight shows (core lists every method the
    request computed, the defaults too)."""
    by_notice: dict[str, list[str]] = {}
    for p in predictions:
        for notice in p.notices:
            if method in notice.params.get("methods", ()):
                notice = Notice(notice.code, notice.params | {"methods": [method]})
            by_notice.setdefault(notice_text(notice, ui), []).append(model_name(p.model))
    lines = [
        f"- ⚠️ {md(n)}"
        if len(models) == len(predictions) or all(model in n for model in models)
        else f"- ⚠️ {md(', '.join(models))}: {md(n)}"
        for n, models in by_notice.items()
    ]
    lines += [f"- ❌ {md(failure_text(f, ui))}" for f in failures]
    return "\n".join(lines)
