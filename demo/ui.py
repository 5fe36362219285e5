"""The whole app: a banner for load problems, then the Lab, Probes, Treebank, Train, Checkpoints and API tabs.
Each visitor sees the public models and its own (web/owners.py): a page load says who the visitor is."""

import gradio as gr

from core.answers import AnswerCache
from demo.i18n import L, request_lang, t
from demo.lab_analysis import task_choices
from demo.links import query_to_state
from demo.plots import esc
from demo.svg import drawn_for
from demo.tabs import api, checkpoints, probes
from demo.tabs import lab as lab_tab
from demo.tabs import train as train_tab
from demo.tabs import treebank as treebank_tab
from service.lab import ServedLab
from service.settings import Settings
from web.endpoints import fill_advertised_defaults, keep_owners_out_of_mcp
from web.owners import Visitors
from web.page_load import on_page_load, page_parts, postprocessed
from web.runner import choose_worker

# Soft's indigo, its text colours a step darker where they fell under WCAG AA (4.5:1; axe-core's color-contrast,
# reports/a11y.md): labels on their tint (indigo 500 on 100: 3.6:1 -> 700: 6.4:1), white on the primary button and
# the selected choice (500: 4.5:1 -> 600: 6.3:1), the selected tab and the subdued text (neutral 400: 2.5:1 -> 600)
THEME = gr.themes.Soft(primary_hue="indigo").set(
    block_label_text_color="*primary_700",
    block_title_text_color="*primary_700",
    button_primary_background_fill="*primary_600",
    button_primary_background_fill_hover="*primary_700",
    checkbox_label_background_fill_selected="*primary_600",
    color_accent="*primary_600",
    body_text_color_subdued="*neutral_600",
)
CSS = """
#summary h3 { margin: 0.2em 0; }
#notices { border-left: 4px solid #f59e0b; background: #fffbeb; padding: 0.4em 0.8em; border-radius: 6px; }
#notices, #notices * { color: #78350f !important; }
#load-warning { border-left: 4px solid #dc2626; background: #fef2f2; padding: 0.4em 0.8em; border-radius: 6px; }
#load-warning, #load-warning * { color: #7f1d1d !important; }
#analysing, #stale { display: none; }
body.lab-stale:not(.lab-busy) #stale { display: block !important; }
body.lab-stale #summary, body.lab-stale #notices, body.lab-stale #result { display: none !important; }
body.lab-busy #analysing { display: block !important; }
body.lab-busy #analysing p { animation: lab-pulse 1.2s ease-in-out infinite alternate; }
@keyframes lab-pulse { from { opacity: 1; } to { opacity: 0.35; } }
body.lab-busy #summary, body.lab-busy #notices, body.lab-busy #result { display: none !important; }
.figures figure.view { margin: 0.6em 0; overflow-x: auto; position: relative; max-width: 100%; }
.figures figure.view svg { width: 100%; height: auto; }
/* a tap on a figure shown smaller than drawn, or on its 1:1 button (narrow screens), shows it at its drawn size,
   scrolling inside its box (EXPORT_JS) */
.figures figure.view.zoomed svg { width: auto; max-width: none !important; }
.figures .export button.zoom { display: none; }
.figures figure.view.zoomed .export button.zoom { background: #e0e7ff; }
/* the dataset charts and tables side by side only where each gets 320 px (gr.HTML drops its min_width) */
#tb-length, #tb-confusion, #tb-per-class, #tb-slices { min-width: min(320px, 100%) !important; }
/* the Treebank's tables (demo/svg.py html_table): scrolling inside their box, never the page; a row that picks a
   node or a sentence shows it can be clicked, its header a button drawn as a link */
.tb-table table { display: block; max-width: 100%; overflow: auto; border-collapse: collapse; font-size: 0.9em; }
#tb-nodes table { max-height: 420px; }
.tb-table caption { text-align: left; padding: 0.2em 0; font-weight: 600; }
.tb-table :is(td, th) {
  border: 1px solid #e2e8f0; padding: 0.15em 0.5em; text-align: left; vertical-align: top;
  background: var(--background-fill-primary);
}
/* the column heads and each row's head stay in view while the table scrolls; a phrase or sentence (the last
   column) keeps a readable width on a phone, the table scrolling sideways inside its box instead */
.tb-table thead th { position: sticky; top: 0; z-index: 2; background: var(--background-fill-secondary); }
.tb-table tbody th { position: sticky; left: 0; z-index: 1; }
.tb-table thead th:first-child { left: 0; z-index: 3; }
:is(#tb-nodes, #tb-disagree) td:last-child { min-width: 14em; }
.tb-table tr[data-row] { cursor: pointer; }
.tb-table tr[data-row]:hover :is(td, th) { background: var(--background-fill-secondary); }
.tb-table th button { font: inherit; color: var(--link-text-color); text-decoration: underline; padding: 0 0.2em; }
/* a node's "+" never reads "±": the link's underline is drawn on its text whatever the text's own decoration */
.figures a.tree-node { cursor: pointer; text-decoration: none; }
.figures a.tree-node:hover circle { stroke: #111; stroke-width: 2.5; }
.figures .export { display: flex; gap: 0.3em; font-size: 0.75em; margin-bottom: 0.2em; }
.figures .export button { border: 1px solid #cbd5e1; border-radius: 4px; padding: 0 0.5em; background: #f8fafc; }
.figures .graph-edges { font-size: 0.85em; margin-left: 0.3em; }
#result .model-panel { content-visibility: auto; contain-intrinsic-size: auto 1200px; }
#attr-hint table { font-size: 0.85em; }
#result .top-figures { display: flex; flex-wrap: wrap; gap: 1em; }
#result .top-figures > figure.view { flex: 1 1 480px; }
#result .model-panel { border: 1px solid #e2e8f0; border-radius: 8px; padding: 0.5em 0.9em; margin: 0.6em 0; }
#result .model-panel > summary { cursor: pointer; font-size: 1.05em; }
#result .accuracy { color: #475569; font-size: 0.9em; margin-left: 0.8em; }
#result .occlusion-text { font-size: 1.1em; line-height: 1.9; margin: 0.3em 0; }
#result .occlusion-text mark { padding: 0.1em 0.15em; border-radius: 3px; }
/* a highlighted word carries a line as well as its colour (never colour alone): supports solid, against dashed,
   a strong one thicker; an unknown word in italics */
#result .occlusion mark { text-underline-offset: 3px; }
#result .occlusion mark:is(.strong_for, .for) { text-decoration: underline solid 1px; }
#result .occlusion mark:is(.strong_against, .against) { text-decoration: underline dashed 1px; }
#result .occlusion mark:is(.strong_for, .strong_against) { text-decoration-thickness: 3px; }
#result .occlusion mark.unknown { font-style: italic; }
#result .occlusion-legend { display: flex; flex-wrap: wrap; gap: 0.9em; font-size: 0.85em; }
#result .view-note { font-size: 0.9em; color: #475569; }
#result table#comparison { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
#result table#comparison td, #result table#comparison th {
  border: 1px solid #e2e8f0; padding: 0.2em 0.6em; text-align: left;
}
#result table.attr-scores { border-collapse: collapse; margin: 0.4em 0; font-size: 0.85em; }
#result table.attr-scores td, #result table.attr-scores th {
  border: 1px solid #e2e8f0; padding: 0.1em 0.5em; text-align: right;
}
/* A table wider than its box scrolls inside it, its first (key) column kept in view; a header breaks between
   words only, never inside one (keep-all: nor between Chinese characters of a word) */
#result table, #attr-hint table {
  display: block; max-width: 100%; overflow-x: auto;
}
#result table :is(td, th):first-child, #attr-hint table :is(td, th):first-child {
  position: sticky; left: 0; z-index: 1; background: var(--background-fill-primary, #fff);
}
/* ... Gradio's tables (gr.Dataframe) too: their first column stays while the others scroll */
.table-wrap :is(th, .body-cell).first-column {
  position: sticky; left: 0; z-index: 2; background: var(--background-fill-primary, #fff);
}
#result table th, #attr-hint table th, .table-wrap th, .table-wrap th *, .figure-data th, .tb-table th {
  word-break: keep-all; overflow-wrap: normal;
}
#result table th, #attr-hint table th { white-space: nowrap; }
#attr-hint td:first-child { white-space: nowrap; }
/* a menu's text stops short of its arrow (Gradio draws the arrow over the input's last 24 px) */
.secondary-wrap input[role="combobox"] { padding-right: 24px !important; text-overflow: ellipsis; }
/* Gradio sets a table's cells in its monospace font: the page's own font is narrower, so more columns show */
:is(#pair-table, #probe-table, #probe-failures) :is(th, .body-cell, .body-cell *) {
  font-family: var(--font) !important;
}
/* a figure's numbers under "Show as a table" (demo/svg.py data_table): scrolling inside their box */
.figures details.figure-data { margin: 0.2em 0 0.6em; font-size: 0.85em; }
.figures details.figure-data > summary { cursor: pointer; width: fit-content; }
.figures details.figure-data table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; }
.figures details.figure-data caption { text-align: left; padding: 0.2em 0; }
/* an opaque cell: axe-core (and a reader) then sees the cell's own background, not a figure's colour behind it */
.figures details.figure-data :is(td, th) {
  border: 1px solid #e2e8f0; padding: 0.1em 0.5em; text-align: right; background: var(--background-fill-primary);
}
.figures details.figure-data th:first-child { text-align: left; }
/* code in Markdown (the API tab's examples): Prism's colours as Gradio ships them, darkened to 4.5:1 on the code's
   grey (string #690: 3.1:1), in the light theme; a line wraps rather than scroll a box no keyboard can reach */
body:not(.dark) .md .token:is(.comment, .prolog, .doctype, .cdata) { color: #5a6978; }
body:not(.dark) .md .token.punctuation { color: #666; }
body:not(.dark) .md .token:is(.selector, .attr-name, .string, .char, .builtin, .inserted) { color: #3f6600; }
body:not(.dark) .md .token:is(.atrule, .attr-value, .keyword) { color: #006699; }
body:not(.dark) .md .token:is(.function, .class-name) { color: #b8304f; }
body:not(.dark) .md .token:is(.property, .tag, .boolean, .number, .constant, .symbol, .deleted) { color: #905; }
body:not(.dark) .md .token:is(.regex, .important, .variable) { color: #8a5300; }
.md pre, .md pre code { white-space: pre-wrap !important; overflow-wrap: anywhere; }
/* where the keyboard is, on every control and focusable table: a ring Gradio's own focus styles do not hide */
:focus-visible { outline: 3px solid #4338ca !important; outline-offset: 2px !important; }
/* the page's side margins: 32 px on a wide screen, down to 6 px on a phone, where the content needs the room
   (no media query: Gradio scopes those to inside the page, and the margins are the page's own) */
.gradio-container .main.app { padding-inline: clamp(6px, 5vw - 14px, 32px); }
/* a visitor who asked for less motion gets none: no pulsing "analysing" line, no tab or panel transitions */
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after {
    animation: none !important; transition: none !important; scroll-behavior: auto !important;
  }
}
@media (max-width: 900px) {
  .figures .export button.zoom { display: inline-block; }
}
@media (max-width: 640px) {
  #result { padding-left: 4px; padding-right: 4px; }
  /* a table's sticky key column (a model) at most 40% of a phone's width, in lines: the numbers beside it stay in
     view (Gradio sizes a column to its longest cell, on one line) */
  #pair-table :is(td, th):first-child {
    width: 40vw !important; min-width: 40vw !important; max-width: 40vw !important;
  }
  #pair-table :is(td, th):first-child :is(.cell-wrap, span) { white-space: normal !important; }
  /* the Probes tables fit a phone's width, no sideways scroll: each column takes its share of the table as the
     browser lays it out, not Gradio's one-line width, at least its header's longest word (the models by name,
     demo/tabs/probes.py): a header breaks between words only, in a smaller type and without its column menu
     (sorting is on wider screens), and a cell's text wraps, inside a word where it must. No selector list inside
     :is() here: Gradio scopes each of its items, which made such a rule outweigh any other */
  #probe-table table, #probe-failures table { width: 100% !important; }
  #probe-table td, #probe-table th, #probe-failures td, #probe-failures th {
    width: auto !important; min-width: 0 !important; max-width: none !important; padding-inline: 2px !important;
  }
  #probe-table .cell-wrap, #probe-failures td .cell-wrap { padding-inline: 2px !important; }
  #probe-table td *, #probe-failures td * {
    white-space: normal !important; overflow-wrap: anywhere !important; word-break: normal !important;
  }
  #probe-table th { font-size: var(--text-sm) !important; }
  /* eight columns: "predicted", "sentence" whole in each at 11 px */
  #probe-failures th { font-size: calc(var(--text-sm) - 1px) !important; padding-inline: 1px !important; }
  #probe-failures th .cell-wrap { padding-inline: 0 !important; }
  #probe-table th *, #probe-failures th * {
    white-space: normal !important; overflow-wrap: normal !important; word-break: keep-all !important;
  }
  #probe-table th .cell-menu-button, #probe-failures th .cell-menu-button { display: none !important; }
  /* the examples in one row to swipe through, not a screen of buttons above the result */
  #examples .gallery { flex-wrap: nowrap; overflow-x: auto; }
  #examples .gallery > * { flex: 0 0 auto; max-width: 80vw; }
}
"""


def toast_titles() -> str:
    """Gradio (6.31) heads a toast with its kind, "Error" or "Warning", whatever title gr.Error or gr.Warning
    was given: the kind in the page's language instead (Gradio sets <html lang>; zh-TW after zh, which it also
    matches)."""
    rules = []
    for lang in ("en", "zh", "zh-TW"):
        for kind, key in (("error", "toast_error"), ("warning", "toast_warning")):
            title = f"html:lang({lang}) .toast-title.{kind}"
            rules.append(f"{title} {{ font-size: 0; }}")
            rules.append(f'{title}::before {{ content: "{t(key, lang)}"; font-size: var(--text-lg); }}')
    return "\n".join(rules) + "\n"


CSS += toast_titles()


def copied_notes() -> str:
    """A Copy link's box says, in the page's language, whether the link went to the clipboard (copy_js marks it)."""
    rules = []
    for lang in ("en", "zh", "zh-TW"):
        for copied, key in (("yes", "link_copied"), ("no", "link_copy_by_hand")):
            rules.append(f'html:lang({lang}) [data-copied="{copied}"]::before {{ content: "{t(key, lang)}"; }}')
    return "\n".join(rules) + "\n"


CSS += copied_notes()


# What Gradio (6.31) leaves out for a screen reader or a keyboard, made good whenever such an element appears: an
# empty plot is a <div aria-label="Empty value"> with no role, where ARIA does not allow the label (axe-core:
# aria-prohibited-attr), so it becomes an image of that name; a table that scrolls sideways on a phone cannot be
# reached by the keyboard (scrollable-region-focusable), so its first column header joins the tab order, as ARIA's
# grid pattern has one cell do (the scrolling viewport itself may not: it is role="none" inside the grid)
ACCESS_JS = """() => {
  const mend = () => {
    document.querySelectorAll('.empty[aria-label]:not([role])').forEach(box => box.setAttribute('role', 'img'));
    document.querySelectorAll('[role="grid"]:not(:has([role="columnheader"][tabindex="0"]))')
      .forEach(grid => { const head = grid.querySelector('[role="columnheader"]'); if (head) head.tabIndex = 0; });
  };
  mend();
  new MutationObserver(mend).observe(document.body, {childList: true, subtree: true});
}"""
# The owner key in plain localStorage: an encryption in the page would use a key the page is sent with it. A
# browser that refuses storage (private mode, blocked iframe storage) gets a new key per page load.
OWNER_STORAGE = "lab-owner-key"
READ_KEY = (
    f"""(key) => {{ try {{ return [localStorage.getItem("{OWNER_STORAGE}") || ""]; }} catch (e) {{ return [""]; }} }}"""
)
KEEP_KEY = f"""(key) => {{ try {{ localStorage.setItem("{OWNER_STORAGE}", key); }} catch (e) {{}} return []; }}"""


def banner(lab: ServedLab, root: str, ui: str) -> str:
    """Markdown warning when nothing loaded, or when some checkpoints failed (the others still serve)."""
    if lab.checkpoints and not lab.errors:
        return ""
    head = t("load_errors", ui) if lab.checkpoints else t("no_models", ui, root=root.replace("`", ""))
    # each failure by name: a missing folder, a broken config
    return "\n".join([f"⚠️ {head}"] + [f"- `{p.replace('`', '')}`: {esc(e)}" for p, e in sorted(lab.errors.items())])


def build_demo(lab: ServedLab, root: str, settings: Settings) -> gr.Blocks:
    """The page on `lab` (its checkpoints from `root`), by `settings` (app.py's, read once at start; a test's own)."""
    choose_worker(settings)  # LAB_SERVE_BACKEND: where long requests' models run
    visitors = Visitors(settings, words=t)  # every tab is given them, and the settings with them
    # an identical request (an example clicked by a whole class) is answered again from memory: core.answers
    lab.answers = lab.answers or AnswerCache(settings.answer_cache)
    lab.user_models.capacity = settings.user_models_in_memory  # visitors' models held in memory, most recent first
    # Gradio keeps every upload in its cache; a training file is copied into its job and a cases file read at
    # once, so every quarter hour the files older than Settings.upload_cache_minutes are deleted
    cache = (900, int(settings.upload_cache_minutes * 60))  # (how often, how old), in seconds
    with gr.Blocks(title="Compositional sentence-model lab", delete_cache=cache) as demo:
        # the anonymous visitor's owner key, kept in its browser's localStorage across reloads (READ_KEY, KEEP_KEY)
        owner_key = gr.Textbox("", visible=False, elem_id="owner-key")
        gr.Markdown(L("title"))
        gr.Markdown(L("intro"))
        warning = gr.Markdown(banner(lab, root, "en"), visible=bool(banner(lab, root, "en")), elem_id="load-warning")
        # a phone's narrow tab bar wraps onto a second row rather than hide the last tabs behind "...": the Train
        # tab stays in sight in every language
        with gr.Tabs(overflow_behavior="wrap") as tabs:
            with gr.Tab(L("tab_lab"), id="lab"):
                lab_view = lab_tab.build(lab, visitors)
            with gr.Tab(L("tab_probes"), id="probes"):
                probes_view = probes.build(lab, visitors)
            with gr.Tab(L("tab_treebank"), id="treebank") as treebank_page:
                treebank_view = treebank_tab.build(lab, treebank_page, visitors)
            with gr.Tab(L("tab_train"), id="train") as train_page:
                train_tab.build(lab, lab_view, visitors, train_page)
            with gr.Tab(L("tab_models"), id="checkpoints") as models_page:
                checkpoints.build(lab, visitors, models_page)
            with gr.Tab(L("tab_api"), id="api"):
                api_usage = api.build(lab, visitors)

        def on_load(key, request: gr.Request, profile: gr.OAuthProfile | None = None):
            """Who the visitor is (its key goes back to its browser), then what it may see."""
            key = visitors.on_page(key, request, profile)
            ui, seen = request_lang(request), visitors.lab(lab, request)
            text = banner(lab, root, ui)
            return (
                key,
                # the text alone while the banner stays as shown or hidden: no Markdown built per page load
                text if bool(text) == warning.visible else gr.update(value=text, visible=bool(text)),
                api.usage(seen, request),
                # the visitor's own trained tasks among the Lab's
                gr.update(choices=task_choices(seen), visible=len(seen.tasks()) > 1),
            )

        # the LinkState of the page's query (demo/links.py), in the State of each tab it has something for: a
        # State's change starts that tab's filling, so a page load without a link runs nothing more
        links = {tab: gr.State(None) for tab in ("probes", "treebank")}  # the Lab's: in its own part (lab_tab)

        def on_link(request: gr.Request):
            """The tab the link names and the state for each tab it fills; the Treebank selects itself once it is
            filled (its own first-visit handler would otherwise fill its picker with a search's first sentence)."""
            state = query_to_state(dict(request.query_params or {}), visitors.lab(lab, request))
            tab = gr.Tabs(selected=state.tab) if state.tab not in ("lab", "treebank") else gr.update()
            return tab, *(state if state.fills(name) else gr.update() for name in links)

        on_page_load(on_link, [tabs, *links.values()])
        probes_view.open_link(links["probes"])  # ?tab=probes&suite=...: run the suite, open the cell
        on_page_load(probes.page_suite, [probes_view.suite])  # the page's language
        treebank_view.open_link(links["treebank"], tabs)  # ?tab=treebank&sentence=...&node=...
        probes.open_in_lab(probes_view, lab_view, tabs)  # a probe failure opens in the Lab tab
        treebank_tab.open_in_lab(treebank_view, lab_view, tabs)  # so do a tree node and a test sentence
        parts = page_parts(demo)
        outputs = [owner_key, warning, api_usage, lab_view.task]
        outputs += [output for part in parts for output in part.outputs]

        def on_page(key, room, request: gr.Request, profile: gr.OAuthProfile | None = None):
            """The page's one load event (web/page_load.py): the visitor first, then every tab's part (a link's
            analysis drawn for the Lab's `room`), each value postprocessed here (not in a thread per output)."""
            drawn_for(room)
            values = (*on_load(key, request, profile), *(value for part in parts for value in part.values(request)))
            return postprocessed(outputs, values)

        # no Gradio progress ("processing | 0.0/0.1s", in English) over the outputs it fills: the Train tab's status
        # line and the Lab's Task menu among them; its status goes to the hidden key box only, as Gradio's page copies
        # every component an event's status went to (gr.Tabs: the whole page) at every status of every event after
        # (docs/performance.md, "Treebank's last three actions")
        loaded_page = demo.load(
            on_page,
            [owner_key, lab_view.room],
            outputs,
            api_visibility="private",
            js=f"(key, room) => ({lab_tab.LOAD_JS})(...({READ_KEY})(key), room)",
            postprocess=False,
            show_progress="hidden",
            show_progress_on=owner_key,
        )
        # one script once the load is in, not a chain of three events, each a round through Gradio's dispatch
        loaded_page.then(
            None,
            owner_key,
            None,
            js=f"(key) => {{ ({KEEP_KEY})(key); ({ACCESS_JS})(); ({lab_view.loaded_js})(); return []; }}",
        )
        fill_advertised_defaults(demo)
        keep_owners_out_of_mcp(demo)
    return demo
