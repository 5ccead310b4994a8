"""Streamed answers: a postMessage text shown in Slack while the model writes it, and the
sweep of the streams a dead process left (their leftovers and Slack's pace: `run/core/`)."""
