"""Predictions drawn inline in a notebook (Jupyter, VS Code, Colab) with the Lab tab's own figures: SVG and HTML,
no JavaScript. Importing this module is enough:

    import demo.notebook  # noqa: F401  (registers the drawing)
    from core import Lab
    Lab.load().predict("It is not a bad film.", "dcnn")   # the cell shows the prediction, curves and views

`show(prediction, ui="zh")` draws it in Chinese; a list of predictions (Lab.compare(...).predictions, or a model
before and after an intervention) is drawn side by side, as in the Lab.
"""

from core.predict import Prediction
from demo.lab_html import result_html

STYLE = (
    "<style>.lab-result svg{max-width:100%;height:auto}.lab-result details summary{cursor:default}"
    ".lab-result mark{padding:0 2px}</style>"
)


class Figures(str):
    """HTML a notebook displays as such (IPython looks for _repr_html_)."""

    def _repr_html_(self) -> str:
        return str(self)


def show(predictions: Prediction | list[Prediction], ui: str = "en") -> Figures:
    """The Lab's result for one prediction or several of the same text: probabilities, curves, each model's panel."""
    chosen = [predictions] if isinstance(predictions, Prediction) else list(predictions)
    return Figures(STYLE + result_html(chosen, {}, ui))


Prediction.html_renderer = lambda prediction: str(show(prediction))
