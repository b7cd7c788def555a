"""Regenerate the spoken test fixtures with hibari TTS (pip install --no-deps hibari-tts==0.2.1; the default
voice is bundled, so nothing is downloaded). Usage: python tests/data/make_speech.py"""

from __future__ import annotations

from pathlib import Path

SPEECH = {
    "book_everest_tomorrow_9.wav": "Book Everest tomorrow at nine for an hour.",
    "cancel_denali_friday.wav": "Cancel my meeting in Denali on Friday at three.",
}
# Two turns of one conversation with a pause between: a short request, then the time it lacked.
TURNS = {
    "book_denali_then_time.wav": ("Book Denali.", "Tomorrow at three p.m. for an hour."),
}
PAUSE_S = 1.5


def main() -> None:
    import wave

    from hibari import Hibari

    tts = Hibari()
    here = Path(__file__).resolve().parent
    for name, text in SPEECH.items():
        tts.save(text, str(here / name), seed=0)
        print(f"wrote {name}: {text}")
    for name, turns in TURNS.items():
        frames, params = [], None
        for i, text in enumerate(turns):
            tts.save(text, str(here / f"turn{i}.wav"), seed=0)
            with wave.open(str(here / f"turn{i}.wav"), "rb") as part:
                params = part.getparams()
                frames.append(part.readframes(part.getnframes()))
            (here / f"turn{i}.wav").unlink()
        assert params is not None
        pause = b"\0" * int(PAUSE_S * params.framerate) * params.sampwidth * params.nchannels
        with wave.open(str(here / name), "wb") as out:
            out.setparams(params)
            out.writeframes(pause.join(frames))
        print(f"wrote {name}: {' / '.join(turns)}")


if __name__ == "__main__":
    main()
