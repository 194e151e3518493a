"""One parser per environment: a reply is a parsed action or an `InvalidReply` with its reason."""

from __future__ import annotations

import pytest

from lifelong_gym.actions import InvalidReply
from lifelong_gym.envs.db.actions import parse_reply as parse_db
from lifelong_gym.envs.kg.actions import parse_reply as parse_kg
from lifelong_gym.envs.os.actions import parse_action as parse_os

PARSERS = {"db": parse_db, "os": parse_os, "kg": parse_kg}
VALID = {
    "db": ["Action: Operation\n```sql\nSELECT  1\n```", "Action: Answer\nFinal Answer: [(1,)]"],
    "os": ["Act: bash\n\n```bash\nls  /\n```", "Act: finish", "Act: answer(42)"],
    "kg": ["Action: get_relations( m.0abc12 )", "Final Answer: #0"],
}
JUNK = [
    "",
    "I do not know.",
    "Action:",
    "Act:",
    "Action: Operation\nSELECT 1",
    "\x00" * 50,
    "Action: " + "(" * 10_000,
    "x" * 200_000,
]


@pytest.mark.parametrize("environment", sorted(PARSERS))
@pytest.mark.parametrize("reply", JUNK)
def test_a_reply_in_no_format_is_an_invalid_reply_with_its_reason(environment, reply):
    parsed = PARSERS[environment](reply)
    assert isinstance(parsed, InvalidReply), parsed  # not None, not an exception
    assert parsed.reason.strip()


@pytest.mark.parametrize("environment", sorted(PARSERS))
def test_a_parsed_action_writes_itself_back_in_both_formats(environment):
    parse = PARSERS[environment]
    for reply in VALID[environment]:
        parsed = parse(reply)
        assert not isinstance(parsed, InvalidReply), (reply, parsed)
        assert parse(parsed.text()) == parsed  # the text format reads back as the same action
        assert parsed.key() == parse(parsed.text()).key()
        assert parsed.tool_call().name  # and it has a tool call of its own
