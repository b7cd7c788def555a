"""Validate results against the published JSON Schema (configs/result.schema.json)."""

import json
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "configs" / "result.schema.json").read_text())
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def assert_valid_result(result: dict[str, Any]) -> None:
    errors = sorted(_VALIDATOR.iter_errors(result), key=str)
    assert not errors, f"{result} breaks the schema: {errors[0].message}"
