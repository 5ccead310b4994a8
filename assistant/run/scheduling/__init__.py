"""Runs scheduled one per thread across processes: leases, deferral after a Slack outage,
runs handed to workers elsewhere, and the database errors a run may outlive."""
