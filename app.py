"""The Gradio lab, also the Space's entry: `python app.py` serves http://127.0.0.1:7860 (settings: service/settings)."""

import gc
import logging
import os
import threading
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no version check over the network
# one torch thread per op: "all five" runs its models side by side (/compare p50 47 ms with 1 thread, 71 with 2)
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Gradio's queue re-summarises its last GRADIO_ANALYTICS_MAX_EVENTS (10,000) events with pandas after every
# request, for a monitoring page we do not serve: a cost that grows with uptime; summarise every 1,000 instead
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", "1000")

from demo import CSS, I18N, THEME, build_demo, t
from service.lab import ServedLab
from service.settings import Settings
from web import app_kwargs, bound_malloc, handler_threads, queued, warm_up

settings = Settings.at_start()  # every LAB_* variable, read once here and passed down (service/settings.py)
# before the checkpoints load: their log says, one line each, where each came from (task/model <- source)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
logging.getLogger("httpx").setLevel(logging.WARNING)  # Gradio's own startup probes
ROOT = str(settings.checkpoints or Path(__file__).resolve().parent / "checkpoints")
lab = ServedLab.load(settings.checkpoints)  # $LAB_CHECKPOINTS > Hub (configs/hub.toml) > bundled checkpoints/
demo = build_demo(lab, ROOT, settings)

if __name__ == "__main__":
    gc.freeze()  # the models and the UI live as long as the process: keep them out of every garbage collection
    bound_malloc()  # before the model threads first allocate: freed memory is given back (web/memory.py)
    threading.Thread(target=warm_up, args=(lab, demo), daemon=True).start()
    # every model event a client's fair share admits enters its handler, then web.runner.LANES give turns
    # fmt: off
    queued(demo, settings).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        theme=THEME, css=CSS, i18n=I18N, app_kwargs=app_kwargs(settings, t), max_threads=handler_threads(settings),
        state_session_capacity=settings.sessions)  # what Gradio keeps per visitor, bounded: web/sessions.py
