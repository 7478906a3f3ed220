"""Infrastructure shared by the library and the workflow, apart from the mathematics: input checks,
atomic file writes, and the run-time environment (thread limits, versions, machine)."""
