"""The fake Slack (`FakeSlack`): its Web API methods, Socket Mode and OAuth, one module per
family, with Slack's documented shapes and errors."""
