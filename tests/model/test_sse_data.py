"""Server-Sent Events split a read of the body at a time (assistant/model/sse.py):
events cut anywhere between reads, any of the three line ends, comments, `[DONE]`, and an error
sent as a chunk."""

from __future__ import annotations

import json

import pytest

from assistant.model.completion import NotACompletion
from assistant.model.sse import SseData
from assistant.model.stream import parse_chunks

CHUNKS = [{"choices": [{"index": 0, "delta": {"content": f"part {n}"}}]} for n in range(3)]


def body(end: bytes = b"\n") -> bytes:
    events = [b"data: " + json.dumps(c).encode() for c in CHUNKS]
    return b"".join(e + end + end for e in [b": keep-alive", *events, b"data: [DONE]"])


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [1, 7, 10_000])
def test_every_chunk_once_in_order_however_the_body_is_cut(end: bytes, size: int) -> None:
    sse, data, read = SseData(), body(end), []
    for start in range(0, len(data), size):
        read += sse.feed(data[start : start + size])
    assert read == CHUNKS
    assert sse.done


def test_an_event_not_ended_yet_waits_for_its_blank_line() -> None:
    sse = SseData()
    assert sse.feed(b'data: {"a": 1}\n') == []
    assert sse.feed(b"\n") == [{"a": 1}]
    assert not sse.done


def test_data_on_several_lines_is_one_value_and_nothing_counts_after_done() -> None:
    sse = SseData()
    assert sse.feed(b'data: {"a":\ndata:1}\n\ndata: [DONE]\n\ndata: {"b": 2}\n\n') == [{"a": 1}]


def test_an_error_in_the_stream_ends_it_after_the_chunks_before_it() -> None:
    sse = SseData()
    error = b'data: {"error": {"message": "overloaded", "type": "server"}}\n\n'
    assert sse.feed(b'data: {"a": 1}\n\n' + error + b'data: {"b": 2}\n\n') == [{"a": 1}]
    assert sse.done and sse.error is not None
    assert str(sse.error) == "overloaded"
    assert sse.error.body == {"message": "overloaded", "type": "server"}


def test_nothing_counts_after_done_when_every_event_is_one_line() -> None:
    sse = SseData()
    assert sse.feed(b'data: {"a": 1}\n\ndata: [DONE]\n\ndata: {"b": 2}\n\n') == [{"a": 1}]
    assert sse.done
    assert sse.feed(b'data: {"c": 3}\n\n') == []


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_two_reads_cut_anywhere_give_the_chunks_of_one(end: bytes) -> None:
    data = body(end)
    for cut in range(len(data)):
        sse = SseData()
        assert sse.feed(data[:cut]) + sse.feed(data[cut:]) == CHUNKS, cut


def test_a_read_is_parsed_and_checked_in_one_pass_as_the_client_reads_it() -> None:
    """The client parses a read's chunks with `parse_chunks` (pydantic's JSON parser and
    the chunk's shape at once): the same chunks as JSON's, an error chunk still ends the
    stream, and a chunk of another shape, or not JSON, is the model service's error."""
    sse, data = SseData(parse_chunks), body()
    assert sse.feed(data) == CHUNKS and sse.done
    failing = SseData(parse_chunks)
    error = b'data: {"error": {"message": "overloaded"}}\n\n'
    assert failing.feed(b'data: {"choices": []}\n\n' + error) == [{"choices": []}]
    assert failing.done and str(failing.error) == "overloaded"
    for bad in (b'data: {"choices": "no"}\n\n', b"data: {not json\n\n"):
        with pytest.raises(NotACompletion, match="stream chunk of another shape"):
            SseData(parse_chunks).feed(bad)
