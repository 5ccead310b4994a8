"""Runs scheduled one per thread across processes (the top of `run/`): the scheduler, runs
handed to workers elsewhere, and each thread's run by its workspace's parts. The lease, the
deferral and the store's errors are `run/core/`'s."""
