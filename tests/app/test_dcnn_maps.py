"""The DCNN's top-layer maps (issue 20): the one-map feature graph defaults to the map that adds most to the
predicted class's logit, any other map can be asked for, the Lab panel lists every map with its contribution
and redraws the chosen one alone, and the first-layer detectors' n-grams never reach past the sentence."""

import re

import pytest
from test_dcnn import SENTENCES, batch, tiny_model

from core.views import KMaxGraph
from demo.lab_analysis import index_box, redraw_top_map
from demo.lab_html import model_panel
from demo.tabs.checkpoints import facts

TEXT = "it is not a bad film , but the plot is dull"


def test_map_contributions_and_the_bias_sum_to_the_logit_and_the_default_is_the_largest():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(lengths))
    for index, sentence in enumerate(SENTENCES):
        words = [f"w{t}" for t in sentence]
        _, chosen, _ = model.views(out, index, words)
        predicted = int(out.logits[index].argmax())
        assert len(chosen.contributions) == model.config.maps[-1]
        logit, bias = float(out.logits[index, predicted].detach()), float(model.out.bias[predicted].detach())
        assert sum(chosen.contributions) + bias == pytest.approx(logit)
        assert chosen.top_map == max(range(len(chosen.contributions)), key=chosen.contributions.__getitem__)
        assert chosen.title == f"Induced feature graph (§4.2), top-layer map {chosen.top_map}"


def test_any_top_layer_map_can_be_asked_for():
    model = tiny_model()
    ids, lengths = batch(SENTENCES)
    out = model(ids, lengths, explain=len(lengths))
    words = [f"w{t}" for t in SENTENCES[1]]
    default = model.views(out, 1, words)[1]
    graphs = {}
    for top_map in range(model.config.maps[-1]):
        everything, chosen, _ = model.views(out, 1, words, top_map=top_map)
        assert chosen.top_map == top_map and everything.top_map is None and not everything.contributions
        assert chosen.contributions == default.contributions  # the choice changes the graph, not the numbers
        assert chosen.edges() == model.feature_graph(out, 1, words, top_map=top_map).edges()
        graphs[top_map] = chosen.edges()
    assert len({tuple(edges) for edges in graphs.values()}) > 1, "every map gave the same graph"
    for bad in (-1, model.config.maps[-1]):
        with pytest.raises(ValueError, match="not a top-layer map"):
            model.views(out, 1, words, top_map=bad)


def test_detector_ngrams_stay_inside_a_sentence_shorter_than_the_filter():
    model = tiny_model(widths=[6, 3], k_top=2)  # a window of 6 words over sentences of 2 and 3 words
    sentences = [[3, 4], [5, 6, 7]]
    ids, lengths = batch(sentences)
    out = model(ids, lengths, explain=len(lengths))
    for index, sentence in enumerate(sentences):
        words = [f"w{t}" for t in sentence]
        table = model.strongest_detectors(out, index, words)
        for _, _, _, ngram in table.rows:
            shown = ngram.split()
            assert shown and len(shown) <= len(words)
            # a contiguous run of the sentence's own words: the window's part outside the sentence is cut
            assert any(words[i : i + len(shown)] == shown for i in range(len(words)))


def test_the_lab_panel_lists_every_map_and_redraws_the_chosen_one(lab):
    known = facts(lab)
    p = lab.predict(TEXT, "dcnn", task="sst5")
    index, view = next((i, v) for i, v in enumerate(p.views) if isinstance(v, KMaxGraph) and v.top_map is not None)
    panel = model_panel(p, known.get((p.task, p.model)), "en")
    options = re.findall(
        r'<option value="(\d+)"( selected)?>map (\d+): ([+-]\d\.\d{3})( \(adds most\))?</option>', panel
    )
    assert [int(o[0]) for o in options] == sorted(range(len(view.contributions)), key=lambda m: -view.contributions[m])
    assert options[0][1] and options[0][4] and not any(o[1] or o[4] for o in options[1:])  # the best: first, chosen
    assert f"Top-layer map {view.top_map} is shown because" in panel and f'data-text="{TEXT}"' in panel

    other = int(options[1][0])
    redrawn = redraw_top_map(lab, known, p.text, p.task, "dcnn", other, "en")
    assert f"top-layer map {other}</text>" in redrawn and f'data-name="dcnn-{index + 1}-kmaxgraph"' in redrawn
    assert f"Top-layer map {other}, as picked" in redrawn and f"map {view.top_map} adds most" in redrawn
    assert "<option" not in redrawn  # only the figure and its note: the choice stays as the user left it
    chinese = redraw_top_map(lab, known, p.text, p.task, "dcnn", other, "zh")
    assert f"顶层特征映射 {other}（所选）" in chinese and not re.search(r"as picked|adds most", chinese)


@pytest.mark.parametrize(
    "text, model, top_map, says",
    [
        (TEXT, "dcnn", 99, "There is no top-layer map 99"),
        (TEXT, "dcnn", "x", "There is no top-layer map x"),
        (TEXT, "mrnn", 1, "There is no top-layer map 1"),  # a model without maps
        ("   ", "dcnn", 1, "Please type a sentence"),
    ],
)
def test_a_map_request_the_page_never_makes_gets_a_line_not_a_figure(lab, text, model, top_map, says):
    answer = redraw_top_map(lab, facts(lab), text, "sst5", model, top_map, "en")
    assert says in answer and "<figure" not in answer


def test_the_map_off_index_starts_at_the_map_the_panel_names_as_adding_most(lab):
    """Issue 45: the index box of map_off starts at the analysed sentence's most important map (the one the panel
    shows first), within the DCNN's maps; an index of no map (a word's) starts at its lowest."""
    view = next(
        v for v in lab.predict(TEXT, "dcnn", task="sst5").views if isinstance(v, KMaxGraph) and v.top_map is not None
    )
    best = max(range(len(view.contributions)), key=view.contributions.__getitem__)
    assert lab.intervention_start(TEXT, "dcnn", "sst5", "map_off") == view.top_map == best
    box = index_box(lab, TEXT, "dcnn", "sst5", "map_off", "en")
    assert box["value"] == best and (box["minimum"], box["maximum"]) == (0, len(view.contributions) - 1)
    assert index_box(lab, "   ", "dcnn", "sst5", "map_off", "en")["value"] == 0  # nothing typed yet: the lowest
    assert index_box(lab, TEXT, "mrnn", "sst5", "cut_at", "en")["value"] == 1
    assert index_box(lab, TEXT, "dcnn", "sst5", "max_pool", "en") == {"__type__": "update", "visible": False}
