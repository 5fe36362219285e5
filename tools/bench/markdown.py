"""reports/benchmarks.md from a benchmark report: every section's table with what it measures; the accuracy
section's every-entry table, with each entry's commands, in its own file beside it (reports/runs.md)."""

from core.models.papers import Reported, find_reported
from core.predict import MAX_WORDS
from tools.bench.accuracy import SST, curve_rows


def _ms(x: float | None) -> str:
    """3 significant digits or so, for milliseconds and seconds alike."""
    if x is None:
        return "—"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def _regime(task: str, phrases: bool) -> str:
    return ("phrases" if phrases else "sentences") if task in SST else "—"


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


RUNS_FILE = "runs.md"  # beside benchmarks.md: every accuracy entry, too long for the headline page


def _bar_reported(bar: dict) -> Reported | None:
    found = find_reported(bar["model"], bar["task"], bar["phrases"])
    return found[0] if found else None


def _paper_cell(paper: float, reported: Reported | None) -> str:
    if reported is None or reported.mean_std is None:
        return f"{paper:.1f}"
    mean, std = reported.mean_std
    return f"{paper:.1f} (mean {mean:.1f} ± {std:.1f})"


def _reproduction_cell(reported: Reported | None) -> str:
    if reported is None:
        return "—"
    r = reported.reproduction
    if not r.found:
        return "none found"
    value = f"{r.accuracy:.1f}" + (f"–{r.accuracy_max:.1f}" if r.accuracy_max is not None else "")
    return value + (" (the authors' re-run)" if r.by_authors else "")


def _reproduction_source(bar: dict, reported: Reported | None) -> str:
    """One line under the Paper bars table: where the reproduction number is said, or where none was found."""
    label = f"- {bar['task']} {_regime(bar['task'], bar['phrases'])} {bar['model']}: "
    if reported is None:
        return label + "no paper record in configs/papers.toml"
    r = reported.reproduction
    where = (f"[{r.source}]({r.url})" if r.url else r.source) if r.found else "none found"
    # a none-found record's url is the nearest attempt, which its note describes
    parts = [where, f"searched: {r.searched}" if r.searched else "", r.note, "" if r.found else r.url]
    return label + "; ".join(p for p in parts if p)


def _mean_std(row: dict) -> str:
    return f"{row['mean']:.1f}" + (f" ± {row['std']:.1f}" if row["std"] is not None else "")


def render_markdown(r: dict) -> str:
    m, s = r["machine"], r["settings"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `{r['command']}` on {r['generated']} at commit `{m['commit'] or 'unknown'}`. "
        "Do not edit by hand: re-run the command. Raw numbers: `benchmarks.json`.",
        "",
    ]
    if carried := r.get("carried_sections"):
        kept = ", ".join(f"{name} ({date})" for name, date in carried.items())
        lines += [f"Sections this run did not select, kept as an earlier run measured them: {kept}.", ""]
    if s["smoke"]:
        lines += [
            "> **Smoke run**: tiny synthetic models and data; these numbers only show that the command works.",
            "",
        ]

    lines += ["## Machine", ""]
    lines += _table(
        ["", ""],
        [
            ["CPU", m["cpu"]],
            ["cores (logical / usable)", f"{m['logical_cpus']} / {m['cpus_usable']}"],
            ["memory", f"{m['memory_gib']} GiB"],
            ["torch threads (set by --threads)", f"{m['torch_threads']} (interop {m['torch_interop_threads']})"],
            ["load average at start / end (1 min)", f"{m['load_average'][0]:.2f} / {r['load_average_end'][0]:.2f}"],
            ["platform", m["platform"]],
            ["versions", ", ".join(f"{k} {v}" for k, v in m["versions"].items())],
        ],
    )
    lines += [
        "",
        "Latencies are wall-clock on this machine as it was (other processes included); the load average "
        "says how busy it was.",
        "",
    ]
    timed = any(k in r and k not in r.get("carried_sections", {}) for k in ("inference", "scaling", "memory", "app"))
    if timed and max(m["load_average"][0], r["load_average_end"][0]) > (m["cpus_usable"] or 1):
        lines += [
            f"> **The machine was busy** (load average above its {m['cpus_usable']} usable cores): latencies are "
            "inflated, and with more than one torch thread each small op can wait for a descheduled thread. "
            "For clean numbers re-run on an idle machine, or compare with `--threads 1`.",
            "",
        ]

    lines += accuracy_markdown(r)
    lines += speed_markdown(r)
    lines += inference_markdown(r)
    lines += loadtest_markdown(r.get("loadtest"))
    return "\n".join(lines) + "\n"


def accuracy_markdown(r: dict) -> list[str]:
    """The Accuracy section: each entry against its paper's number, the sweeps, what is missing."""
    lines = ["## Accuracy", ""]
    if "accuracy" not in r:
        lines += ["Not run (section not selected).", ""]
    else:
        acc = r["accuracy"]
        lines += [
            f"Test accuracy (%) read from `{r['runs_dir']}/**/metrics.json` (test at the best dev epoch), "
            "mean ± sample std over seeds or over the test folds of a 10-fold split (MR, CR, SUBJ, MPQA). "
            f"Δ = ours − paper. Every entry ({len(acc['rows'])} rows: each variant and ablation, with its seeds, "
            f"commands and commit) is in [{RUNS_FILE}]({RUNS_FILE}), where the ids A1, A2, ... name its rows.",
            "",
        ]
        if acc.get("bars"):
            lines += [
                "### Paper bars",
                "",
                "Each paper number against the complete entry (3 seeds, or all 10 folds on MR/CR/SUBJ/MPQA) with the "
                "best mean dev accuracy among the variants tried for it, so no test number chose it; *entry* is its "
                f"row in [{RUNS_FILE}]({RUNS_FILE}).",
                "",
            ]
            bar_rows, sources = [], []
            for bar in acc["bars"]:
                tried = f"{bar['variants']} ({bar['runs']} runs)"
                # read from configs/papers.toml, not the stored report, so --render shows what the file says now
                reported = _bar_reported(bar)
                head = [
                    bar["task"],
                    _regime(bar["task"], bar["phrases"]),
                    bar["model"],
                    _paper_cell(bar["paper"], reported),
                    _reproduction_cell(reported),
                ]
                sources.append(_reproduction_source(bar, reported))
                if bar["row"] is None:
                    bar_rows.append(head + ["no complete entry", "—", "—", "—", "—", tried])
                    continue
                best = acc["rows"][bar["row"] - 1]
                runs = f"{len(best['folds'])} folds" if len(best["folds"]) > 1 else f"{best['n']} seeds"
                bar_rows.append(
                    head
                    + [
                        f"{_mean_std(best)} ({runs})",
                        f"{best['delta']:+.1f}",
                        f"{best['dev_mean']:.2f}",
                        f"A{bar['row']}",
                        best["variant"] or "defaults",
                        tried,
                    ]
                )
            lines += _table(
                [
                    "task",
                    "regime",
                    "model",
                    "paper",
                    "best public reproduction",
                    "ours (test)",
                    "Δ",
                    "dev",
                    "entry",
                    "variant",
                    "variants tried",
                ],
                bar_rows,
            )
            lines += [
                "",
                "*paper*: the paper's best run, with its own mean ± std over repeated runs where it gives one. "
                "*best public reproduction*: the highest test accuracy a public re-run reports for that number "
                "(configs/papers.toml; how it was searched: docs/experiments.md, Reproductions); its source:",
                "",
                *sources,
                "",
            ]
        if missed := curve_rows(acc["rows"]):
            lines += [
                f"Dev accuracy at every evaluation of each run below its paper's number "
                f"({', '.join(i for i, _ in missed)}; the dashed line is the paper's test accuracy):",
                "",
                "![dev curves of the missed bars](dev_curves.svg)",
                "",
            ]
        lines += ["### Not run", ""]
        if acc["missing"]:
            lines += ["Default-variant entries wanted that have no run (or fewer seeds than wanted):", ""]
            lines += _table(
                ["task", "regime", "model", "missing seeds", "command"],
                [
                    [
                        x["task"],
                        _regime(x["task"], x["phrases"]),
                        x["model"],
                        ",".join(map(str, x["missing_seeds"])),
                        f"`{x['command']}`",
                    ]
                    for x in acc["missing"]
                ],
            )
        else:
            lines.append("Nothing: every wanted entry has its runs.")
        if acc["unfinished"]:
            lines += [
                "",
                "Unfinished runs (a log.jsonl but no metrics.json; running, or killed: add `--resume`): "
                + ", ".join(f"`{p}`" for p in acc["unfinished"]),
            ]
        lines.append("")
        if acc.get("sweeps"):
            lines += [
                "### Hyper-parameter sweeps",
                "",
                "The best trial of each `make sweep` (Ray Tune, random search with "
                "ASHA; dev accuracy, the trial's test is not used to choose): repeat it with its command for seeds.",
                "",
            ]
            lines += _table(
                ["task", "regime", "model", "trials", "max epochs", "best dev", "settings", "command"],
                [
                    [
                        x["task"],
                        _regime(x["task"], x["phrases"]),
                        x["model"],
                        len(x["trials"]),
                        x["max_epochs"],
                        f"{100 * x['best']['dev_accuracy']:.1f}",
                        ", ".join(
                            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in x["best"]["config"].items()
                        ),
                        f"`{x['best']['command']}`",
                    ]
                    for x in acc["sweeps"]
                ],
            )
            lines.append("")
    return lines


def speed_markdown(r: dict) -> list[str]:
    """The Training speed section: seconds per epoch beside Lei et al.'s."""
    lines = ["## Training speed", ""]
    if "speed" not in r:
        lines += ["Not run (section not selected).", ""]
    else:
        lines += [
            "Seconds per training epoch (`epoch_seconds` in metrics.json: the training pass only, no evaluation), "
            "median over all epochs of all seeds of a group, per torch threads. *timing* rows are dedicated one-epoch "
            "runs (runs/timing/) on an otherwise idle machine; the other rows come from training runs, which often "
            "shared the 2 cores with other jobs. Lei et al. (Table 1) report 28 s (root labels) and 445 s (all "
            "phrases) per SST-5 epoch on one 2.6 GHz i7 core; ratio = ours / theirs.",
            "",
        ]
        rows = [
            [
                x["task"],
                _regime(x["task"], x["phrases"]),
                x["model"],
                (x["variant"] or "defaults") + (" (timing)" if x.get("timing_only") else ""),
                x["vectors"],
                _ms(x["median_s"]),
                f"{_ms(x['min_s'])}–{_ms(x['max_s'])}",
                f"{x['epochs_timed']} ({x['runs']} runs)",
                f"{x['train_examples']:.0f}",
                _ms(x["s_per_10k"]),
                x["threads"],
                f"{x['paper_s']:.0f}" if "paper_s" in x else "—",
                f"{x['ratio']:.2f}" if "ratio" in x else "—",
            ]
            for x in r["speed"]
        ]
        lines += (
            _table(
                [
                    "task",
                    "regime",
                    "model",
                    "variant",
                    "vectors",
                    "s/epoch",
                    "range",
                    "epochs",
                    "examples",
                    "s/10k ex.",
                    "threads",
                    "Lei s/epoch",
                    "ratio",
                ],
                rows,
            )
            if rows
            else ["No finished runs with epoch times found."]
        )
        lines.append("")
    return lines


def render_runs(r: dict) -> str:
    """RUNS_FILE: every accuracy entry (A1, A2, ... as benchmarks.md names them) with its seeds and commands;
    for a report with an accuracy section."""
    m = r["machine"]
    lines = [
        "# Every accuracy entry",
        "",
        f"Written by `{r['command']}` on {r['generated']} at commit `{m['commit'] or 'unknown'}` beside "
        "[benchmarks.md](benchmarks.md), whose *Paper bars* table names these rows. Do not edit by hand: re-run "
        "the command. Raw numbers: `benchmarks.json`.",
        "",
    ]
    acc = r["accuracy"]
    lines += [
        f"Test accuracy (%) read from `{r['runs_dir']}/**/metrics.json` (test at the best dev epoch). "
        "Runs are grouped by task, training regime (SST: sentences only or all labelled phrases), model and "
        "variant (every setting that differs from the model's defaults and task preset, e.g. `--vectors none`; "
        "empty = defaults). *vectors* = the word vectors the run actually started from (with `--vectors auto` "
        "that depends on what existed). Mean ± sample std over seeds, or over the test folds of a 10-fold split "
        "(MR, CR, SUBJ, MPQA; *runs* says which); † = one run; ‡ = fewer seeds than the 3 wanted on SST; "
        "§ = carried over from the "
        "report generated then, the whole row or some of its runs (they are not in this runs folder; see the "
        "commands below). "
        "Δ = ours − paper, shown only when the paper used the same regime. Re-running an entry's command "
        "should land within its std.",
        "",
    ]
    rows = []
    for i, row in enumerate(acc["rows"], 1):
        seeds, folds = len(set(row["seeds"])), len(row["folds"])
        mark = (
            ("†" if row["n"] == 1 else "")
            + ("‡" if seeds < row["seeds_wanted"] else "")
            + ("§" if row.get("carried_from") or row.get("merged_from") else "")
        )
        runs = f"{folds} folds" + (f" × {seeds} seeds" if seeds > 1 else "") if folds > 1 else f"{row['n']}"
        value = _mean_std(row)
        paper = f"{row['paper']:.1f}" if "paper" in row else "—"
        if "paper" in row and row.get("delta") is None:
            paper += " (other regime)"
        delta = f"{row['delta']:+.1f}" if row.get("delta") is not None else "—"
        rows.append(
            [
                f"A{i}",
                row["task"],
                _regime(row["task"], row["phrases"]),
                row["model"],
                row["variant"] or "defaults",
                row["vectors"],
                value,
                f"{runs}{mark}",
                paper,
                delta,
                ", ".join(row["commits"]),
            ]
        )
    header = ["id", "task", "regime", "model", "variant", "vectors", "test %", "seeds", "paper", "Δ", "commit"]
    lines += _table(header, rows) if rows else ["No finished runs found."]
    if rows:
        lines += ["", "<details><summary>Commands, seeds and paper sources</summary>", ""]
        for i, row in enumerate(acc["rows"], 1):
            source = f"; paper: {row['paper_source']}" if "paper_source" in row else ""
            fold_note = f", folds {row['folds']}" if len(row["folds"]) > 1 else ""
            ranking = f", ranking loss {row['ranking_loss']:.4f}" if "ranking_loss" in row else ""
            carried = f"; carried over from the report of {row['carried_from']}" if row.get("carried_from") else ""
            if row.get("merged_from"):
                carried = f"; {', '.join(row['carried_paths'])} carried over from the report of {row['merged_from']}"
            accuracies = [round(a, 2) for a in row["accuracies"]]
            lines.append(
                f"- **A{i}** seeds {row['seeds']}{fold_note}, accuracies {accuracies}{ranking}{source}{carried}"
            )
            lines += [f"  - `{c}`" for c in row["commands"]]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def loadtest_markdown(lt: dict | None) -> list[str]:
    """The stored figures of the last `make loadtest` (reports/loadtest.json), quoted with their date: the plain
    run, the mixed profile's (10% long inputs) and the soak's."""
    lines = ["## Load test", ""]
    if not lt:
        return lines + ["Not run: `make loadtest` writes reports/loadtest.json, which this section quotes.", ""]
    for title, run in (
        ("", lt if "config" in lt else None),
        ("### Mixed profile (`make loadtest PROFILE=mixed`)", lt.get("mixed")),
    ):
        lines += [title, ""] if title else []
        if not run:
            lines += ["Not run.", ""]
            continue
        cfg, lat, rss, burst, targets = run["config"], run["latency_s"], run["rss_mb"], run["burst"], run["targets"]
        p95_target = next(k for k in targets if "p95_le" in k)
        rows = [
            [
                "clients × requests",
                f"{cfg['clients']} × {cfg['requests']} = {run['requests']} (/compare share "
                f"{cfg['compare_share']}"
                + (f", long inputs {cfg['long_share']:g})" if "latency_by_length_s" in run else ")"),
            ],
            ["failed requests", f"{run['failed']} {_YES[targets['no_failed_requests']]}"],
            [
                "throughput",
                f"{run['throughput_rps']:.1f} req/s; "
                f"CPU per request: server {run['cpu_ms_per_request']['server']:.1f} ms, "
                f"clients {run['cpu_ms_per_request']['clients']:.1f} ms",
            ],
            [
                "latency p50 / p95 / max",
                f"{lat['p50']:.2f} / {lat['p95']:.2f} / {lat['max']:.2f} s"
                + ("" if "latency_by_length_s" in run else f"; p95 ≤ {cfg['max_p95']:g} s {_YES[targets[p95_target]]}"),
            ],
        ]
        for kind, x in run.get("latency_by_length_s", {}).items():
            rows.append(
                [
                    f"{kind} requests p50 / p95 / max",
                    f"{_s(x['p50'])} / {_s(x['p95'])} / {_s(x['max'])} s (n = {x['n']})"
                    + (f"; p95 ≤ {cfg['max_p95']:g} s {_YES[targets[p95_target]]}" if kind == "short" else ""),
                ]
            )
        rows += [
            [
                "resident memory after warm-up / run / burst",
                " / ".join(f"{rss[k]:.0f}" if k in rss else "—" for k in ("after_warmup", "after_run", "after_burst"))
                + f" MB; growth over the run "
                f"{run['rss_growth_pct']:.1f}% {_YES[targets['rss_growth_le_10pct']]}",
            ],
            [
                "machine load (1 / 5 / 15 min)",
                (
                    f"at the start {' / '.join(f'{x:.2f}' for x in run['load_average_start'])}, "
                    if "load_average_start" in run
                    else ""
                )
                + "at the end "
                + " / ".join(f"{x:.2f}" for x in run["load_average"])
                + f" on {run['cpus']} cores",
            ],
        ]
        if burst["submitted"]:
            rows.append(
                [
                    "burst beyond the queue",
                    f"{burst['submitted']} /compare at once: {burst['answered']} answered, "
                    f"{burst['busy']} 'Queue is full' (within {burst['busy_answer_max_s']:.1f} s), "
                    f"{burst['other_errors']} "
                    f"other errors {_YES[targets['busy_is_clear_never_a_hang']]}",
                ]
            )
        lines += [
            f"`make loadtest` of {run['date']} (UTC), app.py on 127.0.0.1 with the bundled checkpoints, "
            f"{run['cpus']} cores shared by the server and the gradio_client clients; raw figures in `loadtest.json`.",
            "",
        ]
        lines += _table(["measure", "value"], rows) + [""]
    return lines + soak_markdown(lt.get("soak"))


def soak_markdown(soak: dict | None) -> list[str]:
    lines = ["### Soak (`make soak`)", ""]
    if not soak:
        return lines + ["Not run.", ""]
    rss, targets = soak["rss_mb"], soak["targets"]
    ratio_target = next(k for k in targets if k.startswith("rss_end"))
    samples = soak["rss_samples"]
    every = max(1, len(samples) // 12)
    rows = [
        ["requests", f"{soak['requests']} mixed, {soak['failed']} failed {_YES[targets['no_failed_requests']]}"],
        ["wall time, throughput", f"{soak['wall_s']:.0f} s, {soak['throughput_rps']:.1f} req/s"],
    ]
    rows += [
        [f"{kind} requests p50 / p95 / max", f"{_s(x['p50'])} / {_s(x['p95'])} / {_s(x['max'])} s (n = {x['n']})"]
        for kind, x in soak["latency_by_length_s"].items()
    ]
    rows += [
        [
            "resident memory after warm-up / end / max",
            f"{rss['after_warmup']:.0f} / {rss['end']:.0f} / {rss['max']:.0f} MB; "
            f"end / warm-up {soak['rss_end_over_warmup']:.3f} {_YES[targets[ratio_target]]}",
        ],
        [
            "RSS over time (s: MB, load)",
            ", ".join(
                f"{x['t_s']:.0f}: {x['rss_mb']:.0f} ({x['load_1min']:.1f})"
                for x in samples[::every] + ([samples[-1]] if (len(samples) - 1) % every else [])
            ),
        ],
    ]
    return (
        lines
        + [
            f"`make soak` of {soak['date']} (UTC); RSS read from /proc/<pid>/status every "
            f"{soak['config']['rss_every']:g} s; load = the machine's 1-minute load average.",
            "",
        ]
        + _table(["measure", "value"], rows)
        + [""]
    )


_YES = {True: "✓", False: "✗ (missed)"}


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def inference_markdown(r: dict) -> list[str]:
    s, lines = r["settings"], []

    def not_run(section: str) -> list[str]:
        if section in r["sections"] and r.get("checkpoints_note"):
            return [r["checkpoints_note"], ""]
        return ["Not run (section not selected).", ""]

    lines += ["## Inference", ""]
    if "inference" not in r:
        lines += not_run("inference")
    else:
        lines += [
            f"Task `{r['task']}`, checkpoints from `{r['checkpoints_dir']}`, "
            f"torch threads {r['machine']['torch_threads']}. "
            f"One sentence at a time, cycling over {r['sentences']} (mean "
            f"{next(iter(r['inference'].values()))['mean_words']:.1f} words). *forward* = pad + model forward under "
            "inference mode; *predict* = `Lab.predict` (tokenize, forward, word curve, leave-one-out occlusion, "
            "views). Batch: padded batches of 64 sentences, forward only.",
            "",
        ]
        rows = [
            [
                model,
                f"{x['parameters']:,}",
                _ms(x["forward"]["p50_ms"]),
                _ms(x["forward"]["p95_ms"]),
                _ms(x["predict"]["p50_ms"]),
                _ms(x["predict"]["p95_ms"]),
                f"{x['batch64']['sentences_per_s']:.0f}",
                f"{x['forward']['reps']}/{x['predict']['reps']}/{x['batch64']['batches']}",
            ]
            for model, x in r["inference"].items()
        ]
        lines += _table(
            [
                "model",
                "parameters",
                "forward p50 ms",
                "p95",
                "predict p50 ms",
                "p95",
                "batch-64 sent./s",
                "reps (fwd/pred/batches)",
            ],
            rows,
        )
        lines.append("")

    lines += ["## Forward pass and training step", ""]
    if "steps" not in r:
        lines += not_run("steps")
    else:
        lengths = s["step_lengths"]
        lines += [
            f"A batch of 32 random sentences of exactly L words (the trainer's exact-length buckets), torch threads "
            f"{r['machine']['torch_threads']}, p50 in ms: *forward* in eval mode with no explanation tensors, *step* = "
            "forward, backward and the model's own optimizer recipe (`configs/recipes/<model>.toml`).",
            "",
        ]
        rows = [
            [model] + [f"{_ms(f['p50_ms'])} / {_ms(t['p50_ms'])}" for f, t in zip(x["forward"], x["train_step"])]
            for model, x in r["steps"].items()
        ]
        lines += _table(["model"] + [f"L={n}: forward / step" for n in lengths], rows)
        lines.append("")
    lines += ["## Scaling with sentence length", ""]
    if "scaling" not in r:
        lines += not_run("scaling")
    else:
        lengths = s["lengths"]
        lines += [
            "![latency versus sentence length](scaling.svg)",
            "",
            "Bare forward of one sentence of L random in-vocabulary words: the best of N runs in ms (the "
            "lengths take turns, and the minimum is the time least disturbed by other processes; p50 is in the "
            "JSON). k = fitted exponent of latency ∝ L^k over L ≥ 50 (1 = linear, 2 = quadratic); at small L "
            "fixed per-call costs dominate, so k below 1 means the model's own growth is not visible yet.",
            "",
        ]
        rows = [
            [model]
            + [_ms(v) for v in x["forward"]["best_ms"]]
            + [x["forward"]["reps"]]
            + [f"{x['forward']['exponent']:.2f}" if x["forward"]["exponent"] is not None else "—"]
            for model, x in r["scaling"].items()
        ]
        lines += _table(["model"] + [f"L={n}" for n in lengths] + ["N", "k"], rows)
        lines += [
            "",
            f"`Lab.predict` (with explanations) on L words, p50 in ms; the app cuts input at {MAX_WORDS} words. "
            f"Once a length takes over {s['predict_cap_s']:.0f} s the longer ones are not run.",
            "",
        ]
        rows = []
        for model, x in r["scaling"].items():
            p = x["predict"]
            cells = {n: _ms(v) for n, v in zip(p["lengths"], p["p50_ms"])}
            rows.append([model] + [cells.get(n, "not run" if n in p["not_run"] else "—") for n in s["predict_lengths"]])
        lines += _table(["model"] + [f"L={n}" for n in s["predict_lengths"]], rows)
        notes = {
            (length, n)
            for x in r["scaling"].values()
            for length, ns in x["predict"].get("notices", {}).items()
            for n in ns
        }
        if notes:
            lines += ["", "Notices `Lab.predict` gave on these inputs (they explain jumps in the curve):"]
            for note in sorted({n for _, n in notes}):
                lengths = sorted({int(length) for length, n in notes if n == note})
                lines.append(f"- from L={lengths[0]}: {note}")
        lines.append("")

    lines += ["## Memory", ""]
    if "memory" not in r:
        lines += not_run("memory")
    else:
        lines += [
            "Peak resident memory (MiB) of a fresh process per model (`python -m tools.bench --memory-probe DIR`), "
            "read "
            "from VmHWM in /proc/self/status after each stage in order, so a peak includes every earlier stage. "
            "*baseline* = torch, core and the tokenizer loaded, no model yet; *weights* = the parameters' own size; "
            f"Lab.predict runs on {MAX_WORDS} words (the app's cap) unless the scaling section had to stop that model "
            "earlier, then on the longest length it measured. "
            "(`getrusage().ru_maxrss` is not used: a child process inherits its parent's peak through fork/exec.)",
            "",
        ]
        rows = []
        for model, x in r["memory"].items():
            if "not_run" in x:
                rows.append([model, "—", f"not run: {x['not_run']}", "", "", "", ""])
                continue
            st = x["stages_mib"]
            rows.append(
                [
                    model,
                    f"{x['parameters_mib']:.1f}",
                    f"{st['imports_and_tokenizer']:.0f}",
                    f"{st['load']:.0f}",
                    f"{st['forward_400_words']:.0f}",
                    f"{st['batch_64x20_words']:.0f}",
                    f"{st['predict']:.0f} ({x['predict_words']} words)",
                ]
            )
        lines += _table(
            ["model", "weights", "baseline", "+ load", "+ forward 400 words", "+ batch 64×20", "+ Lab.predict"], rows
        )
        lines.append("")

    lines += ["## The app end to end", ""]
    app = r.get("app")
    if app is None:
        lines += not_run("app")
    elif app["status"] == "measured":
        lines += [
            f"`app.py` started as its own process on 127.0.0.1 with the checkpoints above (serving after "
            f'{app["ready_s"]:.1f} s); `{app["endpoint"]}` ("all five": {", ".join(app["models"])}, with every '
            f"explanation) called one at a time, cycling over {r['sentences']}, and on the one word "
            f"\"{app['one_word']}\", which shows the round trip's fixed cost. The issue's bar for one sentence "
            "through all five models: p50 ≤ 100 ms, p95 ≤ 250 ms.",
            "",
        ]
        rows = []
        for key, client in (
            ("rest", "HTTP: `POST /gradio_api/call/compare`, then its event stream (httpx)"),
            ("gradio_client", '`gradio_client.Client.predict(..., api_name="/compare")`'),
        ):
            m, floor = app[key], app[f"{key}_one_word"]
            rows.append([client, _ms(m["p50_ms"]), _ms(m["p95_ms"]), m["reps"], _ms(floor["p50_ms"])])
        lines += _table(["client", "p50 ms", "p95 ms", "calls", "one word, p50 ms"], rows)
        lines += [
            "",
            "gradio_client waits for results by polling every 50 ms (`time.sleep(0.05)` in "
            "gradio_client/utils.py), which its one-word row shows; the HTTP row is what the app itself costs. "
            "The client is built by `tools.bench.loadtest.app_client`, with one SSL context for all its requests "
            "(gradio_client otherwise loads the CA bundle for every request, about 70 ms of CPU).",
            "",
        ]
    else:
        lines += [f"Not run ({app['status']}): {app['note']}.", ""]
    return lines
