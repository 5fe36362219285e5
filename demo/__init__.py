"""The page: the Gradio Blocks of the Lab's tabs, their figures (svg, plots, charts) and their words in English and
Chinese (i18n, locales). It calls core.predict (Lab, Prediction) and draws core.views; it holds no model logic and
never imports torch (tests/unit/test_architecture.py checks). web/ serves it."""

import web  # noqa: F401  (before gradio: web/gradio_import.py)
from demo.i18n import I18N, t
from demo.ui import CSS, THEME, build_demo

__all__ = ["CSS", "I18N", "THEME", "build_demo", "t"]
