"""The Gradio front end. It only calls core.predict (Lab, Prediction) and draws core.views; it holds
no model logic and never imports torch (tests/unit/test_architecture.py checks)."""

from demo.i18n import I18N
from demo.limits import app_kwargs
from demo.memory import bound_malloc
from demo.runner import handler_threads, queued, warm_up
from demo.ui import CSS, THEME, build_demo

__all__ = [
    "CSS",
    "I18N",
    "THEME",
    "app_kwargs",
    "bound_malloc",
    "build_demo",
    "handler_threads",
    "queued",
    "warm_up",
]
