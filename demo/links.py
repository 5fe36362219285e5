"""A link to what the page shows, in readable query parameters: ?tab=treebank&split=test&sentence=12&node=3.

`state_to_query` writes a LinkState (every tab's Copy link); `query_to_state` reads one back from a page's
query (the page load), checking every value against what is loaded: a tab, model, task, method, suite or
intervention that is not there, a number that is not one, is left at its default, never an error. Texts are
cut at core's MAX_CHARS, as the Lab cuts what is typed. Values only a tab can check (a treebank sentence or
node past the split's end, a DCNN map the model lacks, a probe capability) are checked when that tab opens.
Pure: no gradio, no I/O beyond listing the probe suites.

The parameters: docs/lab.md#links.
"""

import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from core.analysis.attribution import DEFAULT_METHODS, METHODS
from core.analysis.probes import suite_names
from core.analysis.treebank import SPLITS
from core.predict import ALL, AUTO
from core.text import MAX_CHARS
from service.lab import ServedLab

TABS = ("lab", "probes", "treebank", "train", "checkpoints", "api")  # the gr.Tab ids in demo/ui.py
LANGS = (AUTO, "en", "zh")  # the Lab's input language
MAX_NAME = 200  # a capability key: longer is no key of any suite
NUMBER = re.compile(r"[0-9]{1,6}")  # an index, node or map: non-negative, below a million


@dataclass(frozen=True)
class LinkState:
    """What a link opens; each field at its default is left out of the link."""

    tab: str = "lab"
    text: str = ""  # the Lab's sentence (A of a minimal pair)
    b: str = ""  # sentence B of the minimal pair
    model: str = ALL  # the Lab's model; on the Probes tab, the open cell's model
    task: str = AUTO  # the task of the tab shown (the Lab's, the tree's, the probe run's)
    lang: str = AUTO
    method: str = DEFAULT_METHODS[0]
    intervention: str = "none"
    index: int | None = None  # the intervention's index, for one that takes one
    map: int | None = None  # the DCNN panel's top-layer map (None: the one that adds most)
    split: str = ""
    sentence: int | None = None  # the treebank sentence's index in its split
    node: int | None = None
    suite: str = ""
    capability: str = ""  # with `model`, the probe cell

    def fills(self, tab: str) -> bool:
        """Whether the link has something for `tab` to fill: the Lab a sentence, the Probes a suite to run, the
        Treebank itself (its first sentence at least); the other tabs are only shown."""
        return bool(self.text) if tab == "lab" else self.tab == tab and (tab == "treebank" or bool(self.suite))


def intervention_specs(lab: ServedLab, model: str, task: str) -> dict[str, dict]:
    """{key: {"section", "index"}} of the chosen model (the same keys on every task it is trained for)."""
    return lab.interventions(None if task == AUTO else task).get(model, {}) if model != ALL else {}


def state_to_query(state: LinkState) -> str:
    """The query string of `state` (without '?'), its fields in a fixed order, defaults left out."""
    default = LinkState()
    pairs = [
        (f.name, str(getattr(state, f.name)))
        for f in fields(LinkState)
        if getattr(state, f.name) != getattr(default, f.name)
    ]
    return urllib.parse.urlencode(pairs)


def _text(value, limit: int = MAX_CHARS) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _one_of(value, allowed: Sequence[str], default: str) -> str:
    return value if isinstance(value, str) and value in allowed else default


def number(value) -> int | None:
    """A non-negative integer written in digits ("12"), else None."""
    return int(value) if isinstance(value, str) and NUMBER.fullmatch(value) else None


def query_to_state(query: Mapping, lab: ServedLab, suites: Sequence[str] | None = None) -> LinkState:
    """The state a page's query names (a dict of strings, as Starlette's query_params), every value checked
    against `lab` (the visitor's models and tasks) and `suites` (default: the probe suites shipped)."""
    model = _one_of(query.get("model"), (ALL, *lab.models()), ALL)
    task = _one_of(query.get("task"), (AUTO, *lab.tasks()), AUTO)
    specs = intervention_specs(lab, model, task)
    intervention = _one_of(query.get("intervention"), list(specs), "none")
    takes_index = intervention != "none" and specs[intervention]["index"] is not None
    return LinkState(
        tab=_one_of(query.get("tab"), TABS, "lab"),
        text=_text(query.get("text")),
        b=_text(query.get("b")),
        model=model,
        task=task,
        lang=_one_of(query.get("lang"), LANGS, AUTO),
        method=_one_of(query.get("method"), METHODS, DEFAULT_METHODS[0]),
        intervention=intervention,
        index=number(query.get("index")) if takes_index else None,
        map=number(query.get("map")),
        split=_one_of(query.get("split"), SPLITS, ""),
        sentence=number(query.get("sentence")),
        node=number(query.get("node")),
        suite=_one_of(query.get("suite"), suite_names() if suites is None else suites, ""),
        capability=_text(query.get("capability"), MAX_NAME),
    )


# a Copy link's second step, in the browser: the page's own address with the query the server wrote, shown and
# copied to the clipboard where the browser allows it; the box showing it says which (CSS, demo/ui.py, in the
# page's language) and scrolls into view: on a phone it lies below the fold
def copy_js(shown_in: str) -> str:
    """The Copy link's script for the Markdown box with elem_id `shown_in`."""
    return f"""async (query) => {{
  const link = window.location.href.split(/[?#]/)[0] + (query ? '?' + query : '');
  let copied = 'yes';
  try {{ await navigator.clipboard.writeText(link); }} catch (e) {{ copied = 'no'; }}
  const shown = document.getElementById('{shown_in}');
  if (shown) {{
    shown.dataset.copied = copied;
    setTimeout(() => shown.scrollIntoView({{block: 'nearest'}}), 100);
  }}
  return link;
}}"""


def clear_link_js(shown_in: str) -> str:
    """Empties the Markdown box with elem_id `shown_in` of a link that no longer names what the tab shows."""
    return f"() => {{ document.getElementById('{shown_in}')?.removeAttribute('data-copied'); return ''; }}"
