"""What a submitted decision form means, so the app never stores something the listener did not choose.

- No decision is preselected: a form without one is not stored (the listener is asked to
  choose), unless the text was edited, which means a correction.
- Keep with an edited text is ambiguous (keep the reference, or the edit?): the listener is
  asked, and the answer (``confirm``) decides.
- A correction whose text equals the reference (whitespace aside) is a keep.
- Unresolved and non-speech ignore the text field.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.adjudication.store import ACTIONS, CORRECT, KEEP

ASK_CHOOSE, ASK_KEEP_OR_CORRECT, ASK_TEXT = "choose", "keep_or_correct", "text"
CONFIRM_KEEP, CONFIRM_CORRECT = "keep", "correct"


@dataclass(frozen=True)
class Submission:
    """The form as sent: decision chosen ("" for none), text, note, and the answer to a question."""

    action: str
    text: str
    note: str = ""
    confirm: str = ""


@dataclass(frozen=True)
class Resolution:
    """Either a decision to store (``action``, ``text``) or a question for the listener (``ask``)."""

    action: str = ""
    text: str = ""
    ask: str = ""


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def resolve(submission: Submission, reference_text: str) -> Resolution:
    """The decision ``submission`` stands for, on a stretch whose reference reads ``reference_text``."""
    action, text = submission.action, submission.text
    if action not in ("", *ACTIONS):
        raise ValueError(f"unknown decision '{action}'")
    edited = not _same(text, reference_text)
    if action == "":
        return Resolution(CORRECT, text) if edited and text.strip() else Resolution(ask=ASK_CHOOSE)
    if action == KEEP and edited:
        if submission.confirm == CONFIRM_KEEP:
            return Resolution(KEEP, reference_text)
        if submission.confirm == CONFIRM_CORRECT:
            return Resolution(CORRECT, text) if text.strip() else Resolution(ask=ASK_TEXT)
        return Resolution(ask=ASK_KEEP_OR_CORRECT)
    if action == CORRECT:
        if not text.strip():
            return Resolution(ask=ASK_TEXT)
        return Resolution(KEEP, reference_text) if not edited else Resolution(CORRECT, text)
    return Resolution(action, reference_text if action == KEEP else "")
