"""Training: one run's settings (config), the loop (train: `python -m core.training.train`) and the queued jobs
that visitors submit from the app (jobs: `python -m core.training.jobs run <folder>`)."""
