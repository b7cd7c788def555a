from assistant.nlu.bio import char_spans_to_tags, tags_to_spans


def test_spans_from_clean_bio() -> None:
    tags = ["O", "B-room", "B-date", "O", "B-start_time", "I-start_time", "O"]
    assert tags_to_spans(tags) == [(1, 2, "room"), (2, 3, "date"), (4, 6, "start_time")]


def test_adjacent_b_tags_are_two_spans() -> None:
    assert tags_to_spans(["B-attendees", "B-attendees"]) == [(0, 1, "attendees"), (1, 2, "attendees")]


def test_stray_inside_tag_starts_a_span_like_conlleval() -> None:
    assert tags_to_spans(["O", "I-room", "I-room"]) == [(1, 3, "room")]
    # I- of another name breaks the open span
    assert tags_to_spans(["B-date", "I-start_time"]) == [(0, 1, "date"), (1, 2, "start_time")]


def test_span_running_to_the_end() -> None:
    assert tags_to_spans(["O", "B-duration", "I-duration"]) == [(1, 3, "duration")]
    assert tags_to_spans([]) == []


def test_char_spans_to_tags_marks_words_starting_inside() -> None:
    # "book everest at 9 a.m." -> words: book, everest, at, 9, a, ., m, .
    words = [(0, 4), (5, 12), (13, 15), (16, 17), (18, 19), (19, 20), (20, 21), (21, 22)]
    tags = char_spans_to_tags(words, [(5, 12, "room"), (16, 22, "start_time")])
    assert tags == ["O", "B-room", "O", "B-start_time", "I-start_time", "I-start_time", "I-start_time",
                    "I-start_time"]
    assert tags_to_spans(tags) == [(1, 2, "room"), (3, 8, "start_time")]
