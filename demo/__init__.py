"""The Gradio front end. It only calls core.predict (Lab, Prediction) and draws core.views; it holds
no model logic and never imports torch (tests/unit/test_architecture.py checks)."""

from demo.i18n import I18N
from demo.limits import APP_KWARGS
from demo.memory import bound_malloc
from demo.runner import QUEUE, queued, warm_up
from demo.sessions import SESSION_CAPACITY
from demo.ui import CSS, THEME, build_demo

__all__ = [
    "APP_KWARGS",
    "CSS",
    "I18N",
    "QUEUE",
    "SESSION_CAPACITY",
    "THEME",
    "bound_malloc",
    "build_demo",
    "queued",
    "warm_up",
]
