"""`assistant serve` attacked while Slack's events arrive (`python -m bench flood`, at a size
for the suite): strangers send bodies of 50 MB, requests that stop halfway and malformed
bodies, over and over. Every genuine mention is acknowledged and answered, every attacker is
answered with a refusal or cut off, and the app's memory does not grow by what they sent.
Times are the benchmark's business; this checks what happens."""

from __future__ import annotations

from assistant.fakes import FakeOpenAI
from assistant.fakes.events import attacks
from bench.flood import flood
from bench.model import AnsweringModel
from bench.server import AppServer

SIZE = {"mentions": 10, "pace": 0.0, "big": 3, "big_bytes": 50_000_000, "slow": 4, "bad": 2}
MiB = 2**20

# What each attack gets. A sender still pushing its body when the answer comes may see its
# connection reset before it reads the answer: "no answer" is fine there, an open one is not.
EXPECTED = {
    "50 MB body, declared length": {"413", "no answer"},
    "50 MB body, chunked, unsigned": {"401", "no answer"},
    "50 MB body, chunked, forged signature": {"413", "no answer"},
    "a body that stops": {"408"},
    "half a request line": {"no answer"},
    "half the headers": {"no answer"},
    "nothing sent": {"no answer"},
    **{kind: {str(status)} for kind, (_, status) in attacks.MALFORMED.items()},
}


def test_genuine_mentions_are_answered_through_a_flood_and_memory_stays_flat(slack, tmp_path):
    model = AnsweringModel()
    with FakeOpenAI(default=model) as fake, AppServer(slack, fake, tmp_path) as app:
        result = flood(app, slack, model, SIZE)

    assert [d.status for d in result.acks] == [200] * SIZE["mentions"]
    assert result.answered == SIZE["mentions"]

    got: dict[str, set[str]] = {}
    for (kind, what), _ in result.attack.outcomes.items():
        status, _, closed = what.partition(", ")
        assert closed == "closed", (kind, what)  # no attacker's connection was left open
        got.setdefault(kind, set()).add(status)
    assert set(got) == set(EXPECTED)  # every kind of attack ran
    for kind, statuses in got.items():
        assert statuses <= EXPECTED[kind], (kind, statuses)

    # At least 150 MB of bodies offered (3 x 50 MB at once, several times over); the app
    # reads at most 1 MiB of any of them.
    assert result.attack.offered >= 150_000_000
    growth = result.rss_peak - result.rss_before
    assert growth < 32 * MiB, f"the app grew by {growth / MiB:.0f} MiB"
