"""Live answers judged (ASSISTANT_JUDGE_SAMPLE): after a run ends, a share of the answers it
posted scored by a judge model, in the background (docs/evaluation.md, "Watching live
quality"). Above the scheduler: it wraps the scheduler's run function."""
