"""The Space's service around the library in core/: its settings (settings), the Lab it serves with visitors' models
added, owned and held in memory (lab, owners, model_cache, user_models), training jobs and their workers (jobs, the
Ray driver remote, cleanup, publish), the model worker (serving), who owns what (store) and what one client and the
whole Space may use (budgets). It imports core, never demo; demo words what it returns."""
