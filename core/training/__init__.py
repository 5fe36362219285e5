"""Training: one run's settings (config), the recipes, and the loop (train: `python -m core.training.train`).
The jobs that visitors submit from the app are the Space's service (service.jobs)."""
