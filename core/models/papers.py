"""The papers behind the models, one record per registered model: its name and citation from its card
(core.models.card), the numbers the paper reports by task from configs/papers.toml, and beside each the best public
reproduction found. The model cards, the bench and the lab all read them from here."""

import functools
import tomllib
from dataclasses import dataclass

from core.data import PROJECT_ROOT
from core.models import MODELS, model_class

PAPERS_FILE = PROJECT_ROOT / "configs" / "papers.toml"


@dataclass(frozen=True)
class Reproduction:
    """The best public re-run of a paper number that a search found, or the record that none was found."""

    accuracy: float | None = None  # test accuracy, %; None: none found
    accuracy_max: float | None = None  # the top of a range, when the source gives one ("85-86%")
    source: str = ""  # who ran it and where it is said (repository and file, or paper and table)
    url: str = ""
    by_authors: bool = False  # the paper's own authors re-ran it: public, but not independent
    note: str = ""  # how it differs from the paper's setting
    searched: str = ""  # where we looked and found none (or, beside one found, no independent one)

    @property
    def found(self) -> bool:
        return self.accuracy is not None


@dataclass(frozen=True)
class Reported:
    task: str
    phrases: bool | None  # the SST training regime of the number (True: every labelled phrase); None: not said
    accuracy: float  # test accuracy, %
    source: str  # where in the paper, e.g. "Kalchbrenner et al. 2014, Table 1"
    reproduction: Reproduction  # every paper number carries one, found or not (tests/unit/test_reproductions.py)
    epoch_seconds: float | None = None  # the training time per epoch the paper reports
    # the paper's own mean and std over repeated runs (seeds, settings), beside its best run's `accuracy`
    mean_std: tuple[float, float] | None = None


@dataclass(frozen=True)
class Paper:
    model: str
    name: str  # "DCNN"
    cited: str  # "Kalchbrenner et al. 2014"; "" for a baseline
    citation: str  # authors (year), "title", venue
    reported: tuple[Reported, ...] = ()
    no_result: str = ""  # why tasks have no number, when the paper says which it reports

    @property
    def display_name(self) -> str:
        return f"{self.name} ({self.cited})" if self.cited else self.name

    def result(self, task: str, phrases: bool) -> tuple[Reported, bool] | None:
        """The paper's number for `task` and the run's phrase regime, and whether it is comparable: a number of
        the same regime (or of an unstated one) is; one of the other regime is returned as not comparable."""
        for regime, comparable in ((phrases, True), (None, True), (not phrases, False)):
            for r in self.reported:
                if r.task == task and r.phrases == regime:
                    return r, comparable
        return None


def papers() -> dict[str, Paper]:
    """model key -> its paper, in the registry's order."""
    return {model: _paper(model) for model in MODELS}


@functools.cache
def _reported_by_model() -> dict[str, dict]:
    with PAPERS_FILE.open("rb") as f:
        return tomllib.load(f)


@functools.cache
def _paper(model: str) -> Paper:
    card = model_class(model).card
    entries = _reported_by_model().get(model, {}).get("reported", [])
    return Paper(
        model=model,
        name=card.name,
        cited=card.cited,
        citation=card.citation,
        reported=tuple(_reported(r) for r in entries),
        no_result=card.no_result,
    )


def _reported(entry: dict) -> Reported:
    mean_std = entry.get("mean_std")
    return Reported(
        **{
            "phrases": None,
            **entry,
            "reproduction": Reproduction(**entry["reproduction"]),
            "mean_std": tuple(mean_std) if mean_std else None,
        }
    )


def paper(model: str) -> Paper | None:
    return papers().get(model)


def find_reported(model: str, task: str, phrases: bool) -> tuple[Reported, bool] | None:
    """`Paper.result` of the model's paper; None when the model has no record."""
    record = paper(model)
    return record.result(task, phrases) if record else None
