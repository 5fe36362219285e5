"""Where the app runs its models: one thread pool that Lab.compare spreads "all five" over, and the warm-up."""

import logging
import os
from concurrent.futures import ThreadPoolExecutor

from core.predict import Lab

log = logging.getLogger(__name__)
# "all five" runs the models side by side: torch releases the GIL, and one request's small tensors
# rarely use both cores on their own
MODEL_POOL = ThreadPoolExecutor(max_workers=min(5, os.cpu_count() or 1), thread_name_prefix="model")


def warm_up(lab: Lab) -> None:
    """Load the tokenizers (spaCy, jieba) and touch every model once, so the first request is fast."""
    for text, lang in (("a good film", "en"), ("很好", "zh")):
        if lab.tasks(lang):
            try:
                lab.compare(text, lab.tasks(lang)[0], lang, executor=MODEL_POOL)
            except Exception:  # warming up is best effort
                log.warning("warm-up failed for %s", lang, exc_info=True)
