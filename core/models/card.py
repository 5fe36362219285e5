"""What a model says about itself, beside its class in its own file: its names in English and Chinese, its paper,
and the words of its explanation views. The registry's models are read for these (core.models.papers, core.views,
demo.i18n), so a new model's file is the one place they are written."""

from dataclasses import dataclass, field

from core.views import declare_view_text


@dataclass(frozen=True)
class ModelCard:
    name: str  # "DCNN"
    citation: str  # authors (year), "title", venue; for a baseline, what it is
    cited: str = ""  # "Kalchbrenner et al. 2014"; "" for a baseline
    name_zh: str = ""  # the name in Chinese; "" when it is the English one (a proper name)
    no_result: str = ""  # why tasks have no paper number, when the paper says which it reports
    # the words of the model's views by core.views.Text code, in English and in Chinese (the same codes)
    view_text: dict[str, str] = field(default_factory=dict)
    view_text_zh: dict[str, str] = field(default_factory=dict)
    # what each of its interventions tests, in Chinese, by key (the English is its InterventionSpec.section)
    interventions_zh: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if set(self.view_text) != set(self.view_text_zh):
            raise ValueError(f"{self.name}: view_text and view_text_zh must word the same codes")
        declare_view_text(self.view_text)  # a view's Text is built from its code as soon as the model runs

    def display_name(self, lang: str = "en") -> str:
        """The name with its paper ("DCNN (Kalchbrenner et al. 2014)"), or alone for a baseline; in English, or in
        Chinese for any other `lang`."""
        name = self.name if lang == "en" else self.name_zh or self.name
        return f"{name} ({self.cited})" if self.cited else name
