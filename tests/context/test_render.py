import io
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.fakes.openai import responses as replies
from context.canonical import export_json, load_log
from context.entry import UserContent
from context.log import ContextLog
from context.render import render_entry, render_log
from context.toolcalls import ExpandEntry, FinishRequest, GetThreadHistory, PostMessage
from context.trace import TraceWriter
from tests.cli import DATA, run_cli
from tests.harness import mention as say
from tests.harness import thread_of

SEED = (DATA / "aya-lunch.json").read_bytes()
EXPECTED = (DATA / "aya-lunch.console.txt").read_bytes()


def test_show_prints_the_golden_trace_byte_for_byte():
    result = run_cli("show", str(DATA / "aya-lunch.json"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED
    assert b"\x1b[" not in result.stdout


def test_show_reads_standard_input():
    result = run_cli("show", "-", stdin=SEED)
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED


def test_live_trace_equals_saved_rendering():
    log = load_log(SEED)
    stream = io.StringIO()
    writer = TraceWriter(stream)
    for entry in log.entries:
        writer.write(entry)
    assert stream.getvalue() == render_log(log.entries) == EXPECTED.decode()


def test_multiline_text_and_other_tools():
    log = ContextLog()
    log.append("line one\nline two", "2025-01-01T00:00:00Z")
    log.append(UserContent(userid="<@U1>", text="first\nsecond"), "2025-01-01T00:00:01Z")
    log.append(GetThreadHistory(ascending=True, limit=20), "2025-01-01T00:00:02Z")
    log.append(PostMessage(text="a\nb", reasoning="why\nbecause"), "2025-01-01T00:00:03Z")
    log.append(FinishRequest(), "2025-01-01T00:00:04Z")
    blocks = [render_entry(e) for e in log.entries]
    assert blocks[0] == "🧠 System: line one\n   line two"
    assert blocks[1].endswith("> first\n> second")
    assert "🔧 getThreadHistory (ascending: true, limit: 20)" in blocks[2]
    assert "└─ Reason" not in blocks[2]
    assert blocks[3].endswith('💬 postMessage:\n   "a\n   b"\n   └─ Reason: why\n   because')
    assert blocks[4] == "🤖 Assistant [Turn 1]\n🕐 2025-01-01T00:00:04Z\n✅ finishRequest"


# --- hostile text: the console is not a terminal the input controls --------------------------

# Clear the screen, an OSC 8 hyperlink hiding where it goes (ended by BEL), a carriage return
# that rewrites the line, a right-to-left override, a C1 CSI and DEL.
HOSTILE = "a\x1b[2Jb \x1b]8;;http://evil\x07click\x1b]8;;\x07 c\rd \u202eevil\u202c e\x9b31m\x7f"
UNSAFE = ("\x1b", "\x07", "\r", "\u202e", "\u202c", "\x9b", "\x7f")
COLOURS = ("\x1b[1m", "\x1b[2m", "\x1b[0m")


def hostile_log() -> ContextLog:
    """Every entry kind, hostile text in every text field."""
    log = ContextLog()
    log.append(HOSTILE, "2025-01-01T00:00:00Z")
    log.append(UserContent(userid=f"<@U1{HOSTILE}>", text=HOSTILE), "2025-01-01T00:00:01Z")
    log.append(GetThreadHistory(reasoning=HOSTILE), "2025-01-01T00:00:02Z")
    log.append(ExpandEntry(index=1, reasoning=HOSTILE), "2025-01-01T00:00:03Z")
    log.append(PostMessage(text=HOSTILE, reasoning=HOSTILE), "2025-01-01T00:00:04Z")
    log.append(FinishRequest(reasoning=HOSTILE), "2025-01-01T00:00:05Z")
    return log


def without_colours(text: str) -> str:
    for code in COLOURS:
        text = text.replace(code, "")
    return text


def assert_safe(trace: str, entries: int) -> None:
    assert [c for c in UNSAFE if c in trace] == []
    # Shown, not dropped: each hostile field is there with its escapes in view.
    assert trace.count("a\\u001b[2Jb \\u001b]8;;http://evil\\u0007click") >= entries
    assert "c\\u000dd \\u202eevil\\u202c e\\u009b31m\\u007f" in trace


def test_every_entry_kind_with_hostile_text_is_rendered_harmless_live():
    log = hostile_log()
    for colour in (False, True):
        stream = io.StringIO()
        writer = TraceWriter(stream, colour=colour)
        for entry in log.entries:
            writer.write(entry)
        trace = stream.getvalue()
        if colour:
            assert "\x1b[1m🧠 System:\x1b[0m" in trace  # the renderer's own codes stay
        assert_safe(without_colours(trace), len(log.entries))


def test_every_entry_kind_with_hostile_text_is_rendered_harmless_by_show():
    log = hostile_log()
    saved = export_json(log.entries).encode()
    assert load_log(saved).entries == log.entries  # the log keeps the exact text
    result = run_cli("show", "-", stdin=saved)
    assert result.returncode == 0, result.stderr
    assert_safe(result.stdout.decode(), len(log.entries))


def test_hostile_text_from_the_model_is_harmless_on_the_running_app_s_console(app, slack, model):
    model.script(
        replies.tool_calls(("postMessage", {"text": HOSTILE, "reasoning": HOSTILE})),
        replies.finish_request(HOSTILE),
    )
    mention = say(slack, "hello \u202eevil")
    assert app.send_event(mention).status == 200
    slack.wait_for_call("reactions.remove")
    app.wait_idle()
    trace = app.trace.getvalue()
    assert [c for c in UNSAFE if c in trace] == []
    assert "hello \\u202eevil" in trace
    log = app.log(thread_of(mention))
    assert log[2]["content"]["text"] == HOSTILE  # what the model said, kept exactly
    assert log[3]["content"]["reasoning"] == HOSTILE
    assert log[1]["content"]["text"] == "hello \u202eevil"


# Controls a trace may hold: newline, tab, and (in colour) the renderer's own codes.
ALLOWED = {"\n", "\t"}
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
any_text = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from([HOSTILE])


@st.composite
def entries(draw: st.DrawFn) -> ContextLog:
    log = ContextLog()
    texts = [draw(any_text) for _ in range(8)]
    log.append(texts[0], "2025-01-01T00:00:00Z")
    log.append(UserContent(userid=texts[1], text=texts[2]), "2025-01-01T00:00:01Z")
    log.append(GetThreadHistory(reasoning=texts[3] or None), "2025-01-01T00:00:02Z")
    log.append(PostMessage(text=texts[4] or "x", reasoning=texts[5]), "2025-01-01T00:00:03Z")
    log.append(ExpandEntry(index=0, reasoning=texts[6]), "2025-01-01T00:00:04Z")
    log.append(FinishRequest(reasoning=texts[7]), "2025-01-01T00:00:05Z")
    return log


@settings(max_examples=200)
@given(log=entries(), colour=st.booleans())
def test_a_rendered_entry_never_holds_a_control_or_bidi_character(log, colour):
    for entry in log.entries:
        shown = render_entry(entry, colour)
        if colour:
            shown = without_colours(shown)
        bad = {
            c for c in shown if (unicodedata.category(c) == "Cc" and c not in ALLOWED) or c in BIDI
        }
        assert bad == set()
