import random

import pytest

from models.datagen.template import join_pieces, parse_template, render


def test_join_keeps_exact_spans_and_squeezes_spaces() -> None:
    pieces = [("book ", None), ("", None), (" the ", None), ("Everest", "room"), (" ", None),
              ("at ", None), ("9", "start_time"), (" a.m.", "start_time"), (" .", None)]
    text, spans = join_pieces(pieces)
    assert text == "book the Everest at 9 a.m.."
    assert [(text[s:e], label) for s, e, label in spans] == [("Everest", "room"), ("9 a.m.", "start_time")]


def test_range_without_spaces() -> None:
    text, spans = join_pieces([("10", "start_time"), ("-", None), ("11", "end_time")])
    assert text == "10-11"
    assert spans == [(0, 2, "start_time"), (3, 5, "end_time")]


def test_choices_optionals_and_placeholders() -> None:
    node = parse_template("(book|reserve) {room:bare}[ now]")
    renderers = {"room": lambda rng, kind: [(f"Fuji<{kind}>", "room")]}
    seen = {join_pieces(render(node, random.Random(i), renderers))[0] for i in range(50)}
    assert seen == {"book Fuji<bare>", "reserve Fuji<bare>", "book Fuji<bare> now", "reserve Fuji<bare> now"}


@pytest.mark.parametrize("bad", ["(a|b", "[a", "a)", "{Room}"])
def test_malformed_templates_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_template(bad)
