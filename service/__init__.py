"""The Space's service around the library in core/: who owns what (store), what one client and the whole Space
may use (budgets). It imports core, never demo; demo words what it returns."""
