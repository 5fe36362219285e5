"""The Gradio lab (also the Hugging Face Space entry): `python app.py` serves http://127.0.0.1:7860.

Checkpoints load once from $LAB_CHECKPOINTS (default: ./checkpoints/<task>/<model>/); the page is
served at once and the tokenizers warm up in the background.
"""

import logging
import os
import threading
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no version check over the network

from core.predict import Lab  # noqa: E402
from demo import CSS, I18N, THEME, build_demo, warm_up  # noqa: E402

ROOT = os.environ.get("LAB_CHECKPOINTS") or str(Path(__file__).resolve().parent / "checkpoints")
lab = Lab.load(os.environ.get("LAB_CHECKPOINTS") or None)  # explicit dir > Hub (configs/hub.toml) > bundled
demo = build_demo(lab, ROOT)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Gradio's own startup probes
    threading.Thread(target=warm_up, args=(lab,), daemon=True).start()
    demo.queue(default_concurrency_limit=2, max_size=64).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        theme=THEME, css=CSS, i18n=I18N)
