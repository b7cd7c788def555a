"""The project's exceptions.

    AssistantError                 anything the product reports to a person in words
    ├── ConfigError                a config file or option is wrong
    │   └── SettingError           one setting's value, refused where its section is built (the key, the problem)
    ├── ModelUnavailable           an artifact cannot be made or loaded (missing package, no torch to train)
    ├── BackendUnavailable         an inference backend cannot run here (package, engine file or GPU missing)
    ├── ModelServerUnavailable     the model server (Triton) cannot be reached or has not loaded its models;
    │                              the gateways retry ([model_server] retry_s)
    ├── Overloaded                 a queue is full (a batcher's, or the model server's): refused, not queued
    └── InputError                 a request is unusable (empty, too long, bad audio); carries a stable `code`
        ├── ProtocolError          a client message breaks the websocket protocol (docs/protocol.md)
        └── LimitExceeded          a client went past one of its limits ([limits], [access])

Every InputError a client causes becomes an `error` event with its code; the connection goes on, except after
LimitExceeded: then the server closes it (code 1008, the code as the reason).
"""

from __future__ import annotations

__all__ = ["AssistantError", "ConfigError", "ModelUnavailable", "BackendUnavailable", "ModelServerUnavailable",
           "Overloaded", "InputError", "ProtocolError", "LimitExceeded", "SettingError"]


class AssistantError(Exception):
    """Base of every error the product explains to its user."""


class ConfigError(AssistantError):
    pass


class SettingError(ConfigError):
    """A section of settings refused one of its values; `key` is None when the problem spans several keys. Loading
    a file turns it into a ConfigError naming the file and section."""

    def __init__(self, key: str | None, problem: str) -> None:
        super().__init__(f"{key}: {problem}" if key else problem)
        self.key, self.problem = key, problem


class ModelUnavailable(AssistantError):
    pass


class BackendUnavailable(AssistantError):
    pass


class ModelServerUnavailable(AssistantError):
    """The model server did not answer (down, restarting, still loading): worth retrying, unlike a bad request."""


class Overloaded(AssistantError):
    """A queue is full (this process's batcher or the model server's): the request was refused, not queued."""


class InputError(AssistantError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ProtocolError(InputError):
    """A client message that breaks the protocol (malformed, out of order, too large)."""


class LimitExceeded(InputError):
    """A client went past a limit that ends its connection (too fast, timed out, not authorized)."""
