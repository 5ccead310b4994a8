"""Streamed answers: a postMessage text shown in Slack while the model writes it, the pace
Slack allows, and the streams a dead process left."""
