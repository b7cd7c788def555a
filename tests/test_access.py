"""The access rules on their own: loopback names, the Host and Origin checks, tokens and their identities, and a
reachable bind refused without a token (the live server is tested in test_reliability.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.config import AccessSettings
from assistant.errors import ConfigError
from assistant.server.access import Access, is_loopback


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("192.168.1.10", False), ("::", False), ("example.com", False), ("", False),
])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_pages_own_origin_passes_and_others_do_not() -> None:
    access = Access.configure(AccessSettings(allowed_origins=["https://intranet.example/"]), "127.0.0.1", {})
    assert access.check_request("127.0.0.1:8765", None) is None  # no Origin: no browser
    assert access.check_request("127.0.0.1:8765", "http://127.0.0.1:8765") is None
    assert access.check_request("localhost:8765", "http://LOCALHOST:8765/") is None
    assert access.check_request("127.0.0.1:8765", "https://intranet.example") is None
    for origin in ("http://evil.example", "http://127.0.0.1:9999", "null", "http://127.0.0.1:8765.evil.example"):
        refusal = access.check_request("127.0.0.1:8765", origin)
        assert refusal is not None and (refusal.status, refusal.code) == (403, "forbidden_origin"), origin
    rebinding = access.check_request("evil.example:8765", "http://evil.example:8765")
    assert rebinding is not None and rebinding.code == "forbidden_host"


def test_a_reachable_bind_needs_a_token_and_any_host_name_may_reach_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ASSISTANT_TOKEN"):
        Access.configure(AccessSettings(), "0.0.0.0", {})
    with pytest.raises(ConfigError, match="16 characters"):
        Access.configure(AccessSettings(), "0.0.0.0", {"ASSISTANT_TOKEN": "short"})
    access = Access.configure(AccessSettings(), "0.0.0.0", {"ASSISTANT_TOKEN": "s3cret-s3cret-s3cret"})
    assert access.token_required and access.check_request("meeting-box.office:8765", None) is None
    assert access.identity("s3cret-s3cret-s3cret") == "token" and access.identity("s3cret") is None
    assert access.identity(None) is None


def test_named_tokens_from_a_file(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# name token\nalice alice-token-0123456789\n\nbob bob-token-0123456789ab\n")
    access = Access.configure(AccessSettings(tokens_file=str(tokens)), "127.0.0.1", {})
    assert access.identity("alice-token-0123456789") == "alice" and access.identity("bob-token-0123456789ab") == "bob"
    assert access.identity("alice-token-012345678") is None
    tokens.write_text("alice short\n")
    with pytest.raises(ConfigError, match="tokens_file .*:1"):
        Access.configure(AccessSettings(tokens_file=str(tokens)), "127.0.0.1", {})


def test_without_tokens_everyone_is_anonymous_and_bearer_headers_are_read() -> None:
    access = Access.configure(AccessSettings(), "127.0.0.1", {})
    assert not access.token_required and access.identity(None) == "" and access.identity("anything") == ""
    assert Access.bearer("Bearer abc") == "abc" and Access.bearer("bearer  abc ") == "abc"
    assert Access.bearer("Basic abc") is None and Access.bearer(None) is None and Access.bearer("Bearer") is None
