"""Regenerate the spoken test fixtures with hibari TTS (pip install --no-deps hibari-tts==0.2.1; the default
voice is bundled, so nothing is downloaded). Usage: python tests/data/make_speech.py"""

from __future__ import annotations

from pathlib import Path

SPEECH = {
    "book_everest_tomorrow_9.wav": "Book Everest tomorrow at nine for an hour.",
    "cancel_denali_friday.wav": "Cancel my meeting in Denali on Friday at three.",
}


def main() -> None:
    from hibari import Hibari

    tts = Hibari()
    here = Path(__file__).resolve().parent
    for name, text in SPEECH.items():
        tts.save(text, str(here / name), seed=0)
        print(f"wrote {name}: {text}")


if __name__ == "__main__":
    main()
