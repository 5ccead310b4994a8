"""The model client: what one Chat Completions call sends (the fixed instructions, the tool
schemas and the parsing of the calls the model makes), the call itself, whole or streamed, and
the parsing of its answer.

May import: `context`, openai, aiohttp. Knows nothing of Slack, runs, events or the settings."""
