"""The fake OpenAI-compatible server (`FakeOpenAI`): chat completions whole and streamed,
audio transcriptions, and the refusals of the real servers it can play."""
