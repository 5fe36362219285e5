"""The Probes tab: a suite's pass rates per capability and model, the failures of one cell (a failure
opens in the Lab tab, a pair as a minimal pair), and the user's own cases (typed or uploaded) against
every loaded model.

Callbacks first (they only call core.analysis.probes), then the layout, then the wiring.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial

import gradio as gr
import pandas as pd

from core.analysis.probes import (
    Case,
    ProbeInputError,
    ProbeReport,
    SuiteError,
    load_suite,
    read_cases_file,
    suite_names,
)
from core.predict import ALL, AUTO, Cancelled
from demo.i18n import (
    PAGE,
    L,
    error,
    label_name,
    model_name,
    notice_text,
    request_lang,
    t,
    task_name,
    view_text,
    warn,
    words_in,
)
from demo.lab_analysis import Opened
from demo.links import LinkState, clear_link_js, copy_js, state_to_query
from demo.plots import esc, md
from demo.tabs.lab import LabView
from service.lab import ServedLab
from service.owners import PUBLIC
from web.owners import Visitors
from web.page_load import on_page_load
from web.runner import PROBE_EVENTS, RequestGate, abandoned, on_warm_up


def pass_rate_table(report: ProbeReport, ui: str) -> pd.DataFrame:
    """Rows: capabilities in the suite's words; columns: models, by name without their paper (a column keeps the
    width of its header's longest word, and five of them fit a phone's width beside the key column only so; the
    chosen cell's heading and the model menu cite the paper); cells: pass rate in %."""
    rows = [
        [words_in(report.capabilities[cap], ui, cap), *(round(100 * row[m].rate, 1) for m in report.models)]
        for cap, row in report.cells.items()
    ]
    return pd.DataFrame(rows, columns=[t("col_capability", ui)] + [model_name(m, cited=False) for m in report.models])


@cache
def suite_test_names(suite: str) -> dict[str, dict[str, str]]:
    """A shipped suite's test names, {"en": name, "zh": its zh}, by name; none for the user's cases."""
    tests = load_suite(suite).tests if suite in suite_names() else []
    return {test["name"]: {"en": test["name"], "zh": test.get("zh", test["name"])} for test in tests}


def probe_test_name(report: ProbeReport, case: Case, ui: str) -> str:
    """A case's test in the UI language: a suite's test by its name there, a user's case by its line."""
    if case.capability == "user":  # core names it "user <line>"
        return t("user_case", ui, line=case.test.rpartition(" ")[2])
    return words_in(suite_test_names(report.suite).get(case.test, {}), ui, case.test)


def failure_table(report: ProbeReport, capability: str, model: str, ui: str) -> tuple[str, pd.DataFrame]:
    """The failures of one cell: a headline and one row per failed case."""
    cell = report.cells[capability][model]
    head = t(
        "probe_cell",
        ui,
        capability=words_in(report.capabilities[capability], ui, capability),
        model=model_name(model),
        passed=cell.passed,
        total=cell.total,
    )
    rows = []
    for f in cell.failures:
        case = f.case
        expected = expectation(case.expect, ui) if case.type == "mft" else t(f"expect_{case.expect or 'same'}", ui)
        predicted = label_name(f.label, ui) + (f" → {label_name(f.variant_label, ui)}" if case.variant else "")
        change = round(f.variant_score - f.score, 3) if case.variant else None
        rows.append(
            [
                probe_test_name(report, case, ui),
                t(f"type_{case.type}", ui),
                case.text,
                case.variant,
                expected,
                predicted,
                change,
                failure_reason(f, report.margin, ui),
            ]
        )
    columns = failure_columns(view_text(report.score_label, ui), ui)
    return head + ("" if rows else "\n\n" + t("probe_none", ui)), pd.DataFrame(rows, columns=columns)


def failure_columns(score: str, ui: str) -> list[str]:
    keys = ("col_test", "col_type", "col_sentence", "col_variant", "col_expected", "col_predicted")
    return [t(k, ui) for k in keys] + [t("col_score_change", ui, score=score), t("col_why", ui)]


def empty_tables(models: tuple[str, ...], request: gr.Request) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Before a suite has run, both tables with their headers in the page's language (an empty gr.Dataframe
    is headed "1 2 3"): the pass rates' by the public models, `models`."""
    return headed_tables(models, request_lang(request))


@cache  # one pair per language, shared by every page load (Gradio only reads a value it sends)
def headed_tables(models: tuple[str, ...], ui: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    pass_rates = pd.DataFrame(columns=[t("col_capability", ui), *(model_name(m, cited=False) for m in models)])
    return pass_rates, pd.DataFrame(columns=failure_columns(t("score_any", ui), ui))


def expectation(expect: str, ui: str) -> str:
    """A minimum-functionality case's expectation in the UI language: a label or a polarity by its name,
    "not_<polarity>" as not that polarity."""
    polarity = expect.removeprefix("not_")
    return label_name(expect, ui) if polarity == expect else t("expect_not", ui, label=label_name(polarity, ui))


def failure_reason(f, margin: float, ui: str) -> str:
    """Why a case failed, by its test's rule: a directional change that went the expected way but by no more
    than the threshold says so (a failure by the threshold, not by the direction)."""
    if f.case.type != "dir":
        return t(f"why_{f.case.type}", ui)
    change = f.variant_score - f.score
    right_way = (change > 0) == (f.case.expect == "up") and change != 0
    return t("why_dir_small" if right_way else "why_dir_wrong", ui, change=change, margin=margin)


def thresholds_text(report: ProbeReport, ui: str) -> str:
    """How each kind of test is judged, with the directional threshold in the score's own units."""
    return t("probe_thresholds", ui, margin=report.margin, score=md(view_text(report.score_label, ui)))


def failure_choices(report: ProbeReport, capability: str, model: str) -> dict:
    """The failures of one cell as choices for opening one in the Lab: "n. sentence → variant"."""
    choices = [
        (f"{i + 1}. {f.case.text}" + (f" → {f.case.variant}" if f.case.variant else ""), i)
        for i, f in enumerate(report.cells[capability][model].failures)
    ]
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


def chosen_failure(report: ProbeReport | None, capability: str, model: str, index: int | None) -> Case | None:
    """The case of the failure chosen in one cell, or None when there is none (no run yet, no failure)."""
    if report is None or capability not in report.cells or model not in report.models:
        return None
    failures = report.cells[capability][model].failures
    return failures[index].case if index is not None and 0 <= index < len(failures) else None


def open_failure(report: ProbeReport | None, capability: str, model: str, index: int | None, ui: str) -> Opened:
    """A failure for the Lab tab: its sentence, the variant of an invariance or directional case as sentence B
    (else none), the report's task and the model that failed (the Lab shows that model, not all five). Nothing
    chosen: an error, so no analysis runs."""
    case = chosen_failure(report, capability, model, index)
    if case is None or report is None:  # a case is one of the report's
        raise error(t("probe_no_failure", ui), ui)
    return Opened(case.text, report.task, b=case.variant or "", model=model)


def cell_at(report: ProbeReport | None, row: int, column: int, model: str | None) -> tuple[str, str] | None:
    """The (capability, model) of a cell of the pass-rate table; the first column names the capability and keeps
    `model`, the one chosen. None outside the table (no run yet)."""
    if report is None or not 0 <= row < len(report.cells):
        return None
    chosen = report.models[column - 1] if 1 <= column <= len(report.models) else model
    return (list(report.cells)[row], chosen) if chosen in report.models else None


def _choices(report: ProbeReport, ui: str, capability: str, model: str) -> tuple[dict, dict]:
    capabilities = [(words_in(report.capabilities[c], ui, c), c) for c in report.cells]
    models = [(model_name(m), m) for m in report.models]
    return gr.update(choices=capabilities, value=capability), gr.update(choices=models, value=model)


def show(report: ProbeReport, ui: str, cell: tuple[str, str] | None = None) -> tuple:
    """Every output of a run: summary, table, the cell choices, the failures of the `cell` (capability,
    model; a link's) or of the first, their choices, the state."""
    summary = t(
        "probe_summary",
        ui,
        suite=suite_name(report.suite, ui),
        task=task_name(report.task, ui),
        cases=report.cases,
        models=len(report.models),
        seconds=report.seconds,
    )
    summary += "\n\n" + thresholds_text(report, ui)
    if cell is None or cell[0] not in report.cells or cell[1] not in report.models:
        cell = next(iter(report.cells)), report.models[0]
    head, failures = failure_table(report, *cell, ui)
    return (
        summary,
        pass_rate_table(report, ui),
        *_choices(report, ui, *cell),
        head,
        failures,
        failure_choices(report, *cell),
        report,
    )


def _error(message: str, ui: str) -> tuple:
    warn(esc(message), ui)
    return f"⚠️ {esc(message)}", None, gr.update(), gr.update(), "", None, gr.update(choices=[], value=None), None


def run_probe_suite(lab: ServedLab, suite: str, task: str, ui: str, cell: tuple[str, str] | None = None) -> tuple:
    try:
        return show(RequestGate().probes(lab, None if task == AUTO else task, suite=suite), ui, cell)
    except Cancelled:
        raise abandoned() from None
    except ProbeInputError as err:
        return _error(notice_text(err, ui), ui)
    except SuiteError as err:  # a shipped file that does not validate: the maintainer's English message
        return _error(str(err), ui)


def suite_label(name: str):
    """A shipped suite by its language for a component ("English cases"); another by its file name."""
    return L(f"probe_suite_{name}") if f"probe_suite_{name}" in PAGE["en"] else name


def suite_name(name: str, ui: str) -> str:
    """A suite (or the user's cases) in the UI language."""
    if name == "user":
        return t("user_cases", ui)
    return t(f"probe_suite_{name}", ui) if f"probe_suite_{name}" in PAGE["en"] else name


def kept_suites(lab: ServedLab) -> None:
    """Every shipped suite on the public models (its own task, as the tab's "auto" runs it), in the worker, its
    report kept with the answers (RequestGate.probes): a visitor's first run is answered from them, not after every
    model has read every sentence of the suite in the worker (docs/performance.md)."""
    public = lab.visible_to(PUBLIC)
    for name in suite_names():
        if load_suite(name).task in public.tasks():  # a suite of a task not served here has no report to keep
            RequestGate().probes(public, None, suite=name)


def keep_suites_aside(lab: ServedLab) -> threading.Thread:
    """kept_suites in a thread of its own: its suites run in the worker process, and the warm-ups after it (the
    Treebank's trees, parsed in this process) start at once rather than seconds later, among the first visitors'
    requests."""
    thread = threading.Thread(target=kept_suites, args=(lab,), name="kept-suites", daemon=True)
    thread.start()
    return thread


def page_suite(request: gr.Request):
    """On a page load, the suite in the page's language, unless a link names one (demo/links.py)."""
    if "suite" in dict(request.query_params or {}):
        return gr.update()
    wanted = "en" if request_lang(request) == "en" else "zh"
    return wanted if wanted in suite_names() else gr.update()  # the value alone: no menu built per page load


def run_user_cases(lab: ServedLab, text: str, upload: str | None, suite: str, task: str, ui: str) -> tuple:
    """The user's cases on the chosen task (AUTO: the chosen suite's task) against every loaded model."""
    try:
        task = load_suite(suite).task if task == AUTO else task
        lines = "\n".join(part for part in (text or "", read_cases_file(upload) if upload else "") if part.strip())
        names = {"user": {"en": t("user_cases", "en"), "zh": t("user_cases", "zh")}}
        report = RequestGate().probes(lab, task, text=lines, capabilities=names)
        summary, *shown = show(report, ui)
        written = report.cases_lang
        if written != report.lang:  # a verdict on words the models never learnt: said, not left to be guessed
            langs = {"cases": t(f"lang_{written}", ui), "task_lang": t(f"lang_{report.lang}", ui)}
            summary = t("probe_other_language", ui, task=task_name(report.task, ui), **langs) + "\n\n" + summary
        return summary, *shown
    except Cancelled:
        raise abandoned() from None
    except ProbeInputError as err:
        return _error(notice_text(err, ui), ui)
    except SuiteError as err:
        return _error(str(err), ui)


@dataclass
class ProbesView:
    """The components that open a failure in the Lab tab (wired by open_in_lab)."""

    state: gr.State
    capability: gr.Dropdown
    model: gr.Dropdown
    failure: gr.Dropdown
    open: gr.Button
    open_link: Callable  # (gr.State of a LinkState) -> once it is set, the suite it names runs, its cell open
    suite: gr.Dropdown  # a page load chooses the page's language's (page_suite)


def build(lab: ServedLab, visitors: Visitors) -> ProbesView:
    gr.Markdown(L("probes_md"))
    with gr.Row():
        suite = gr.Dropdown(
            [(suite_label(name), name) for name in suite_names()],
            value=suite_names()[0] if suite_names() else None,
            label=L("probe_suite"),
            elem_id="probe-suite",
        )
        public = lab.visible_to(PUBLIC).tasks()  # the page everybody is sent
        task = gr.Dropdown(
            [(L("choice_auto"), AUTO)] + [(t, t) for t in public], value=AUTO, label=L("task"), elem_id="probe-task"
        )
        run = gr.Button(L("probe_run"), variant="primary", elem_id="probe-run")
    summary = gr.Markdown(elem_id="probe-summary")
    # the models' names wrap at their spaces: the five columns fit a laptop's width
    table = gr.Dataframe(label=L("probe_table"), interactive=False, wrap=True, elem_id="probe-table")
    with gr.Row():
        capability = gr.Dropdown([], label=L("probe_capability"), elem_id="probe-capability")
        model = gr.Dropdown([], label=L("model"), elem_id="probe-model")
        copy = gr.Button(L("copy_link"), scale=0, elem_id="probe-copy-link")
    link = gr.Markdown(elem_id="probe-permalink")
    cell_head = gr.Markdown(elem_id="probe-cell")
    failures = gr.Dataframe(label=L("probe_failures"), interactive=False, wrap=True, elem_id="probe-failures")
    on_page_load(partial(empty_tables, tuple(lab.visible_to(PUBLIC).models())), [table, failures])
    on_warm_up(partial(keep_suites_aside, lab))
    with gr.Row():
        failure = gr.Dropdown(
            [], label=L("probe_failure"), info=L("probe_failure_info"), scale=4, elem_id="probe-failure"
        )
        open_button = gr.Button(L("probe_open"), scale=1, elem_id="probe-open")
    with gr.Accordion(L("probe_run_user"), open=False):
        user_text = gr.Textbox(
            label=L("probe_user"), placeholder=L("probe_user_example"), lines=5, elem_id="probe-user-text"
        )
        upload = gr.File(label=L("probe_upload"), file_types=[".csv", ".tsv", ".txt"], type="filepath")
        run_user = gr.Button(L("probe_run_user"), elem_id="probe-run-user")
    state = gr.State(None)
    outputs = [summary, table, capability, model, cell_head, failures, failure, state]

    def on_run(suite_value, task_value, request: gr.Request):
        return run_probe_suite(visitors.lab(lab, request), suite_value, task_value, request_lang(request))

    def on_user(
        text_value, upload_value, suite_value, task_value, request: gr.Request, profile: gr.OAuthProfile | None = None
    ):
        visitors.writer(request, profile)  # own cases hold the long lane: on a Space, for signed-in users
        return run_user_cases(
            visitors.lab(lab, request), text_value, upload_value, suite_value, task_value, request_lang(request)
        )

    def on_cell(report, capability_value, model_value, request: gr.Request):
        if report is None or capability_value not in report.cells or model_value not in report.models:
            return gr.update(), gr.update(), gr.update()
        return (
            *failure_table(report, capability_value, model_value, request_lang(request)),
            failure_choices(report, capability_value, model_value),
        )

    def on_table_cell(report, model_value, event: gr.SelectData, request: gr.Request):
        """A cell of the pass-rate table: its capability and model chosen and its failures shown, in one event."""
        row, column = event.index
        cell = cell_at(report, row, column, model_value)
        return (gr.update(),) * 5 if cell is None else (*cell, *on_cell(report, *cell, request))

    def on_failure_row(event: gr.SelectData):
        return event.index[0]

    run.click(on_run, [suite, task], outputs, api_visibility="private", **PROBE_EVENTS)
    run_user.click(on_user, [user_text, upload, suite, task], outputs, api_visibility="private", **PROBE_EVENTS)
    for button in (run, run_user):  # a copied link names the suite shown before
        button.click(None, None, [link], js=clear_link_js("probe-permalink"))
    # the visitor's own choice of a cell (`input`): a run, a link and a table's cell send its failures themselves,
    # not a second and third event after theirs (docs/performance.md)
    for chooser in (capability, model):
        chooser.input(on_cell, [state, capability, model], [cell_head, failures, failure], api_visibility="private")
    cell_outputs = [capability, model, cell_head, failures, failure]
    table.select(on_table_cell, [state, model], cell_outputs, api_visibility="private")
    failures.select(on_failure_row, None, [failure], api_visibility="private")

    def on_copy(suite_value, task_value, capability_value, model_value):
        """The link of the suite and its open cell (copy_js puts the page's address in front)."""
        state = LinkState(
            "probes",
            model=model_value or ALL,
            task=task_value,
            suite=suite_value or "",
            capability=capability_value or "",
        )
        return state_to_query(state)

    copied = copy.click(
        on_copy, [suite, task, capability, model], [link], api_visibility="private", show_progress="hidden"
    )
    copied.then(None, [link], [link], js=copy_js("probe-permalink"))

    def on_link(link_state: LinkState, request: gr.Request):
        """A link to this tab with a suite (the state changes to one only then): the suite runs on its task, the
        cell it names open."""
        cell = link_state.capability, link_state.model
        ui = request_lang(request)
        shown = run_probe_suite(visitors.lab(lab, request), link_state.suite, link_state.task, ui, cell)
        return link_state.suite, link_state.task, *shown

    def open_link(link_state: gr.State) -> None:
        link_state.change(on_link, [link_state], [suite, task, *outputs], api_visibility="private", **PROBE_EVENTS)

    return ProbesView(
        state=state,
        capability=capability,
        model=model,
        failure=failure,
        open=open_button,
        open_link=open_link,
        suite=suite,
    )


def open_in_lab(view: ProbesView, lab_view: LabView, tabs: gr.Tabs) -> None:
    """The Open button: the chosen failure goes into the Lab tab's sentence box (a pair's variant into
    the minimal pair's), the Lab tab shows, and both analyses run, in one event."""
    lab_view.open_with(view.open.click, open_failure, [view.state, view.capability, view.model, view.failure], tabs)
