"""The app end to end: app.py started as its own process, `/compare` timed through its REST API and
through gradio_client."""

import json
import tempfile
import time
from pathlib import Path

from tools.bench.timing import summary, time_calls


def rest_compare(http, text: str, task: str) -> list:
    """One `/compare` call through Gradio's REST API, as curl or any HTTP client makes it: POST
    /gradio_api/call/compare, then read the event stream until `complete` (an `error` event raises)."""
    posted = http.post("/gradio_api/call/compare", json={"data": [text, task, "auto"]})
    posted.raise_for_status()
    event = None
    with http.stream("GET", f"/gradio_api/call/compare/{posted.json()['event_id']}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event:"):
                event = line[len("event:") :].strip()
            elif line.startswith("data:") and event in ("complete", "error"):
                data = json.loads(line[len("data:") :])
                if event == "error":
                    raise RuntimeError(f"the app answered with an error: {data}")
                return data[0]
    raise RuntimeError("the event stream ended without a result")


def measure_app(checkpoints: Path, task: str, models: list[str], sentences: list[str], reps: int) -> dict:
    """Start app.py as its own process (LAB_CHECKPOINTS=checkpoints, as `make demo` runs it) and time
    `/compare` ("all five") one call at a time, through the REST API and through gradio_client, on the
    task's sentences and on one word (the fixed cost of the round trip)."""
    import httpx

    from tools.bench.loadtest import LoadTestError, app_client, start_app, wait_until_up
    from tools.processes import free_port, stop_process

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log_path = Path(tempfile.mkstemp(prefix="bench-app-", suffix=".log")[1])
    with open(log_path, "wb") as log_file:
        proc = start_app(checkpoints, port, log_file)
        try:
            started = time.perf_counter()
            wait_until_up(url, proc, 180.0, log_path)
            ready_s = time.perf_counter() - started
            one_word = "good" if sentences and sentences[0].isascii() else "好"
            result = {
                "status": "measured",
                "endpoint": "/compare",
                "models": models,
                "ready_s": ready_s,
                "one_word": one_word,
            }

            def timings(name: str, call) -> None:  # the task's sentences, then the one word
                result[name] = summary(
                    time_calls(lambda i: call(sentences[i % len(sentences)]), reps, 60.0, warmup=2, min_reps=1)
                )
                result[f"{name}_one_word"] = summary(
                    time_calls(lambda i: call(one_word), reps, 30.0, warmup=1, min_reps=1)
                )

            with httpx.Client(base_url=url, timeout=60.0) as http:
                answer = rest_compare(http, sentences[0], task)
                if [p.get("model") for p in answer] != models:
                    raise RuntimeError(f"/compare answered for {[p.get('model') for p in answer]}, expected {models}")
                timings("rest", lambda text: rest_compare(http, text, task))
            client = app_client(url)
            try:
                timings("gradio_client", lambda text: client.predict(text, task, "auto", api_name="/compare"))
            finally:
                client.close()
            return result
        except (LoadTestError, RuntimeError, httpx.HTTPError) as err:
            message = " ".join(str(err).split())[-600:]  # one line, ending with the app log's last words
            return {"status": "failed", "note": f"{type(err).__name__}: {message} (app log: {log_path})"}
        finally:
            stop_process(proc)
