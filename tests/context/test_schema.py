"""The exported JSON Schema: a valid 2020-12 schema that agrees with the validator."""

import json

import jsonschema
import pytest

from tests.cli import DATA, ROOT, run_cli
from tests.commands.test_validate_cli import BROKEN

# Broken in structure (what a JSON Schema can see); the rules on index sequence and turns
# are beyond a schema and are the validator's job.
STRUCTURALLY_BROKEN = [
    "bad-timestamp.json",
    "unknown-role.json",
    "system-content-object.json",
    "user-content-string.json",
    "unknown-toolcall.json",
    "missing-argument.json",
    "bad-argument-types.json",
    "entry-not-object.json",
    "several-problems.json",
    "not-array.json",
]


@pytest.fixture(scope="module")
def validator():
    result = run_cli("schema")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.mark.parametrize(
    "path",
    [DATA / "aya-lunch.json", *sorted((ROOT / "examples").glob("*.json"))],
    ids=lambda p: p.name,
)
def test_schema_accepts_valid_logs(validator, path):
    assert list(validator.iter_errors(json.loads(path.read_bytes()))) == []


@pytest.mark.parametrize("name", STRUCTURALLY_BROKEN)
def test_schema_rejects_structurally_broken_logs(validator, name):
    assert list(validator.iter_errors(json.loads((BROKEN / name).read_bytes())))
