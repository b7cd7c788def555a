"""Words the generator draws from: rooms, people, titles, numbers, days and months.

The room vocabulary is deliberately wider than the default directory (configs/rooms.toml): invented names and
recognizer misspellings teach the tagger to find a room by its place in the sentence, so a user's own directory
works without retraining.
"""

from __future__ import annotations

__all__ = [
    "DIRECTORY_ROOMS",
    "EXTRA_ROOMS",
    "MISHEARD_ROOMS",
    "FIRST_NAMES",
    "LAST_NAMES",
    "TEAMS",
    "TITLES",
    "WEEKDAYS",
    "MONTHS",
    "number_word",
    "ordinal_word",
    "ordinal_suffix",
]

DIRECTORY_ROOMS: dict[str, list[str]] = {
    "Everest": ["the Everest room", "Mount Everest", "Everest room"],
    "Kilimanjaro": ["Kili", "Kilimanjaro room"],
    "Denali": ["Denali room", "Mount Denali"],
    "Fuji": ["Mount Fuji", "Fuji room"],
    "Matterhorn": ["the Matterhorn", "Matterhorn room"],
    "Olympus": ["Mount Olympus", "Olympus room", "the big room"],
}

EXTRA_ROOMS = [
    "Aconcagua", "Elbrus", "Vinson", "Kosciuszko", "Rainier", "Whitney", "Shasta", "Hood", "Blanc", "Etna",
    "Annapurna", "Lhotse", "Makalu", "K2", "Cho Oyu", "Eiger", "Jungfrau", "Ararat", "Logan", "Aoraki",
    "Orion", "Aurora", "Atlas", "Boardroom", "Library", "Lighthouse", "Harbor", "Summit", "Pine", "Cedar",
    "Room 4B", "Room 101", "Studio 3", "Redwood", "Sequoia", "Blue", "Phoenix", "Andromeda",
    "Kailash", "Table Mountain", "Snowdon", "Ben Nevis", "Zugspitze", "Triglav", "Olympia", "Sierra", "Rocky",
]

# How speech recognizers misspell the default rooms.
MISHEARD_ROOMS = [
    "Kili manjaro", "Kilimanjaro's", "Killamanjaro", "Kilomanjaro", "Mattahorn", "Matter horn", "Materhorn",
    "Everist", "Ever rest", "Evrest", "Denally", "Denaly", "De Nali", "Fujii", "Foo G", "Fuji's", "Olimpus",
    "Olympics", "Olympus's", "Mount Evrest", "Mckinley",
]

FIRST_NAMES = [
    "Alice", "Bob", "Carol", "Dave", "Priya", "Tom", "Sarah", "Miguel", "Wei", "Fatima", "John", "Olga", "Kenji",
    "Amara", "Lucas", "Emma", "Noah", "Liam", "Sofia", "Mateo", "Aisha", "Chen", "Ravi", "Hannah", "Jonas",
    "Elena", "Omar", "Grace", "Yuki", "Lars", "Ines", "Pedro", "Zoe", "Ahmed", "Nora", "Felix", "Maya", "Sam",
    "Julia", "Ben", "Kate", "Anna", "Mark", "Lisa", "David", "Mary", "Peter", "Paul", "Rachel", "Daniel",
]
LAST_NAMES = [
    "Smith", "Johnson", "Garcia", "Nguyen", "Patel", "Kim", "Müller", "Rossi", "Tanaka", "Okafor", "Silva",
    "Cohen", "Novak", "Larsen", "Dubois", "Khan", "Lopez", "Brown", "Wilson", "Chen",
]
TEAMS = [
    "the design team", "the marketing team", "engineering", "the sales team", "the board", "the interns",
    "the product team", "finance", "the whole team", "the leadership team", "HR", "legal", "the client",
]

TITLES = [
    "budget review", "design sync", "standup", "daily standup", "weekly sync", "sprint planning", "retro",
    "retrospective", "one on one", "1:1", "interview", "all hands", "quarterly planning", "Q4 planning",
    "board meeting", "client call", "project kickoff", "kickoff", "demo", "product demo", "team lunch",
    "onboarding", "training session", "code review", "architecture review", "offsite prep", "hiring committee",
    "status update", "roadmap review", "marketing sync", "sales pipeline review", "brainstorm", "workshop",
    "performance review", "town hall", "customer workshop", "investor update", "launch review", "bug triage",
    "security review", "strategy session", "team meeting", "lunch and learn", "release planning", "tech talk",
]

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
]

_ONES = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_ONES = [
    "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
    "nineteenth",
]


def number_word(n: int) -> str:
    """0..99 in words: 7 -> "seven", 45 -> "forty-five"."""
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + ("" if ones == 0 else "-" + _ONES[ones])


def ordinal_word(n: int) -> str:
    """1..31 as an ordinal word: 4 -> "fourth", 21 -> "twenty-first"."""
    if n < 20:
        return _ORDINAL_ONES[n]
    tens, ones = divmod(n, 10)
    if ones == 0:
        return _TENS[tens][:-1] + "ieth"
    return _TENS[tens] + "-" + _ORDINAL_ONES[ones]


def ordinal_suffix(n: int) -> str:
    """1 -> "1st", 22 -> "22nd", 13 -> "13th"."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
