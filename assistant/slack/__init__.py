"""The Slack edge: the Web API client and its retries, the Socket Mode connection's log, token
checks, Slack's mrkdwn text, file downloads, channel names and a thread's history.

May import: `context`, slack-sdk, aiohttp. Knows nothing of runs, events, the panel or the
settings: its callers pass what it needs."""
