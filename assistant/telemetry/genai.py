"""The OpenTelemetry GenAI semantic conventions followed: v1.44.0 (development status;
https://github.com/open-telemetry/semantic-conventions/tree/v1.44.0/docs/gen-ai), named here
once rather than imported from the SDK's `_incubating` modules, which may rename them.

Contents (prompts, tool calls' arguments and results) are captured only when
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, and then made printable as the
console does (`context.render.printable`): nothing but what the log itself holds, which has no
token and no secret.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from context.render import printable as printable  # runs.py uses it too, as genai.printable

SEMCONV_VERSION = "1.44.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHED_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
ERROR_TYPE = "error.type"
# A live judge's verdict (ASSISTANT_JUDGE_SAMPLE): the conventions' evaluation event.
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
EVALUATION_ANSWER = "answer_quality"  # our evaluation's name: LIVE_RUBRIC's verdict

# The app's own attributes, beside the conventions'.
ENTRY_INDEX = "assistant.entry.index"
SLACK_TS = "slack.message.ts"
SLACK_ERROR = "slack.error"
STEPS = "assistant.run.progress.steps"
OUTCOME = "assistant.run.outcome"
ROUTINE = "assistant.routine.id"  # the routine a run answers, when a routine started it

PROVIDER_OPENAI = "openai"

# The conventions' recommended buckets for the two GenAI client histograms.
TOKEN_BUCKETS = [4**n for n in range(14)]
DURATION_BUCKETS = [0.01 * 2**n for n in range(14)]

CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def capture_contents(env: Mapping[str, str] = os.environ) -> bool:
    return env.get(CAPTURE_VARIABLE, "").strip().lower() == "true"


def input_messages(prompt_text: str) -> str:
    """The prompt as `gen_ai.input.messages`: the serialized log is the user message (the
    fixed system message is the code's, not the conversation's)."""
    parts = [{"type": "text", "content": printable(prompt_text)}]
    return json.dumps([{"role": "user", "parts": parts}], ensure_ascii=False)


def output_messages(
    calls: list[tuple[str | None, str, str]], text: str | None, finish: str | None
) -> str:
    """A reply as `gen_ai.output.messages`: its text and its tool calls (id, name, arguments)."""
    parts: list[dict[str, object]] = []
    if text:
        parts.append({"type": "text", "content": printable(text)})
    parts += [
        {"type": "tool_call", "id": call_id, "name": name, "arguments": printable(arguments)}
        for call_id, name, arguments in calls
    ]
    message = {"role": "assistant", "parts": parts, "finish_reason": finish or "tool_call"}
    return json.dumps([message], ensure_ascii=False)
