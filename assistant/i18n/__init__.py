"""The bot's own words in people's languages (docs/development.md, "Strings and languages"):
the message catalogs (`messages/`, gettext `.po` files read with Babel), the words of one
language (`words.py`), and which language a person is shown (`languages.py`). Pure: no Slack
calls, nothing else of `assistant`."""
