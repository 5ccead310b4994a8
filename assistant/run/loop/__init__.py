"""The agent: a run's setup (`agent.py`), the step loop (`step_loop.py`), tool dispatch
(`dispatch.py`), how a run ends otherwise (`endings.py`); what the answer has done so far, the
images of the prompt, the apologies, and who may use the bot in a channel."""
