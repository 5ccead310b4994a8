"""What applies in a channel (its persona, model, tools, search, who may use it: over the
workspace default) and the language the bot's own words take there. The bottom of `run/`:
nothing else of `run`."""
