"""An analysis drawn for the page is kept beside its answers (demo.lab_analysis.answer_keys): the same request in
the same language, method and room is answered with the HTML drawn the first time, a lecture hall's link drawn
once, not once per visitor; another room, language or request is drawn anew, and a text too long to keep is
drawn every time."""

import pytest

import demo.lab_analysis as lab_analysis
from core.answers import AnswerCache
from demo.lab_analysis import analyse
from demo.svg import drawn_for
from demo.tabs.checkpoints import facts
from service.lab import ServedLab
from service.owners import KEY, owner_id

TEXT = "It is not a bad film, but the plot is dull."


@pytest.fixture
def drawings(lab_root, monkeypatch):
    """A lab keeping its answers, and the list of the results drawn on it (result_html's calls)."""
    lab = ServedLab.load(lab_root)
    lab.answers = AnswerCache()
    drawn: list[str] = []
    draw = lab_analysis.result_html

    def counted(*args, **kwargs):
        drawn.append(html := draw(*args, **kwargs))
        return html

    monkeypatch.setattr(lab_analysis, "result_html", counted)
    return lab, drawn


def test_the_same_analysis_for_the_same_room_is_drawn_once(drawings):
    lab, drawn = drawings
    known = facts(lab)
    drawn_for(900)
    first = analyse(lab, known, TEXT, "all", "sst5", "auto", "en")
    again = analyse(lab, known, TEXT, "all", "sst5", "auto", "en")
    assert len(drawn) == 1
    assert again[0] == first[0] and again[2] == first[2] and again[1]["value"] == first[1]["value"]
    analyse(lab, known, TEXT, "all", "sst5", "auto", "zh")  # another language
    analyse(lab, known, TEXT, "dcnn", "sst5", "auto", "en")  # another model
    analyse(lab, known, TEXT, "dcnn", "sst5", "auto", "en", "occlusion", "map_off:0")  # an intervention
    drawn_for(400)  # a phone's room
    phone = analyse(lab, known, TEXT, "all", "sst5", "auto", "en")
    assert len(drawn) == 5 and phone[2] != first[2]
    drawn_for(None)


def test_a_text_too_long_to_keep_is_drawn_every_time_and_for_itself(drawings):
    lab, drawn = drawings
    lab.answers = AnswerCache(max_words=3)
    known = facts(lab)
    for _ in range(2):
        analyse(lab, known, TEXT, "dcnn", "sst5", "auto", "en")
    other = analyse(lab, known, "A moving and funny film with a great cast.", "dcnn", "sst5", "auto", "en")
    assert len(drawn) == 3 and "moving" in other[2] and "moving" not in drawn[0]


def test_a_hundred_fresh_visitors_share_one_drawing_and_add_nothing(drawings):
    """A visitor costs nothing to create: 100 fresh sessions (each its own owner) opening the same link on the
    public models are drawn for once, and the kept answers do not grow with them."""
    lab, drawn = drawings
    known = facts(lab)
    drawn_for(900)
    analyse(lab, known, TEXT, "dcnn", "sst5", "auto", "en")
    kept = len(lab.answers)
    for n in range(100):
        visitor = lab.visible_to(owner_id(KEY, f"a fresh session hash, number {n:03d}"))
        analyse(visitor, known, TEXT, "dcnn", "sst5", "auto", "en")
    assert len(drawn) == 1 and len(lab.answers) == kept
    drawn_for(None)
