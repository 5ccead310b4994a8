"""`FakeOpenAI.server`: the fake refuses long prompts and images with the bodies and statuses
of the servers it plays, as llama.cpp's server and vLLM send them (their issue threads show
them), read through the openai client."""

from __future__ import annotations

import openai
import pytest

from assistant.fakes import FakeOpenAI

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}


@pytest.fixture
def client_and_fake():
    with FakeOpenAI() as fake:
        client = openai.OpenAI(api_key="k", base_url=fake.base_url, max_retries=0)
        yield client, fake
        client.close()


def ask(client: openai.OpenAI, content: object, **extra: object) -> openai.APIStatusError:
    messages = [{"role": "user", "content": content}]
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="m", messages=messages, **extra)
    return caught.value


def test_llama_cpp_refuses_a_long_prompt_naming_its_window(client_and_fake):
    client, fake = client_and_fake
    fake.server.kind, fake.server.context_tokens = "llama.cpp", 10
    error = ask(client, "x" * 400)
    assert error.status_code == 400 and error.type == "exceed_context_size_error"
    assert error.body["n_ctx"] == 10 and error.body["n_prompt_tokens"] > 10
    assert "exceeds the available context size (10 tokens)" in error.body["message"]


def test_vllm_counts_the_answer_s_cap_against_its_window(client_and_fake):
    client, fake = client_and_fake
    fake.server.kind, fake.server.context_tokens = "vllm", 30
    assert ask(client, "hi").status_code == 500  # within the window: served (nothing scripted)
    error = ask(client, "hi", max_tokens=40)
    assert error.status_code == 400 and error.type == "BadRequestError"
    assert "maximum context length is 30 tokens" in error.body["message"]
    assert "40 in the completion" in error.body["message"]


@pytest.mark.parametrize(("kind", "status"), [("llama.cpp", 500), ("openai", 400)])
def test_a_text_only_model_refuses_images(client_and_fake, kind, status):
    client, fake = client_and_fake
    fake.server.kind, fake.server.images = kind, False
    error = ask(client, [{"type": "text", "text": "x"}, IMAGE])
    assert error.status_code == status
    assert "image" in error.body["message"]
