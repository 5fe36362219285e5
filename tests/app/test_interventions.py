"""Interventions (`forward`'s `intervention`, core.models.base): each model's parts switched off or replaced at
inference.
Each is checked against a brute-force version of what it claims (a model whose weights make the intervention
a no-op gives the plain forward pass; a replaced quantity equals the one computed by hand from the plain
pass), then through the Lab: named in the answer, carried to the worker process, bad input refused."""

import re

import pytest
import torch
from test_models_common import SENTENCES
from test_models_common import build as build_model

from core.data.batching import pad_batch
from core.models.base import Intervention, parse_intervention
from core.notices import InterventionError
from demo.i18n import intervention_name, t

BATCH = pad_batch(SENTENCES)


def build(key: str, num_classes: int = 3):
    model = build_model(key, num_classes)
    if key == "tensor_cnn":  # §5 starts W at zero: every input would give the same logits
        torch.nn.init.normal_(model.classifier.weight)
    return model


def _logits(model, intervention: Intervention | None = None, explain: int = 0):
    with torch.no_grad():
        return model(BATCH.ids, BATCH.lengths, explain=explain, intervention=intervention)


def _same_as_plain(model, intervention: Intervention) -> None:
    assert torch.allclose(_logits(model, intervention).logits, _logits(model).logits, atol=1e-6)


def _changed(model, intervention: Intervention) -> None:
    assert not torch.allclose(_logits(model, intervention).logits, _logits(model).logits, rtol=0, atol=1e-6)


def test_parse_intervention():
    assert parse_intervention(None) is None and parse_intervention(" none ") is None and parse_intervention("") is None
    assert parse_intervention("layer_off:2") == Intervention("layer_off", 2)
    assert str(Intervention("layer_off", 2)) == "layer_off:2" and str(Intervention("skip_only")) == "skip_only"
    for bad in ("layer off", "x:y", ":3", "a" * 100, "map_off:1.5"):
        with pytest.raises(InterventionError):
            parse_intervention(bad)


def test_checks_name_model_and_index():
    model = build("tensor_cnn")  # 2 layers, orders 1..3
    model.check_intervention(Intervention("layer_off", 2))
    cases = [
        (Intervention("gates_open", 2), "unknown_intervention"),
        (Intervention("layer_off", 3), "index_out_of_range"),
        (Intervention("layer_off"), "index_out_of_range"),
        (Intervention("consecutive", 1), "no_index"),
    ]
    for intervention, code in cases:
        with pytest.raises(InterventionError) as err:
            model.check_intervention(intervention)
        assert err.value.code == code


# -- tensor CNN ---------------------------------------------------------------------------------------------


def test_tensor_cnn_identities():
    model = build("tensor_cnn")
    _same_as_plain(model, Intervention("max_order", model.config.ngram_order))  # every order kept
    _changed(model, Intervention("max_order", 1))
    _changed(model, Intervention("consecutive"))
    model.config.decay = 0.0  # λ = 0 already: consecutive n-grams only
    _same_as_plain(model, Intervention("consecutive"))


def test_tensor_cnn_layer_off_is_its_softmax_block_zeroed():
    model = build("tensor_cnn")
    off = _logits(model, Intervention("layer_off", 1)).logits
    h = model.config.hidden
    with torch.no_grad():
        model.classifier.weight[:, :h] = 0  # layer 1's block of W
    assert torch.allclose(off, _logits(model).logits, atol=1e-6)


# -- mRNN ---------------------------------------------------------------------------------------------------


def test_mrnn_identities():
    model = build("mrnn")
    _same_as_plain(model, Intervention("cut_at", 1))  # h is h_0 before the first word anyway
    _changed(model, Intervention("cut_at", 2))
    _changed(model, Intervention("additive"))
    with torch.no_grad():
        model.A.zero_()  # no multiplicative term to switch off
    _same_as_plain(model, Intervention("additive"))


def test_mrnn_cut_reads_the_rest_as_a_new_sentence():
    model = build("mrnn")
    cut = _logits(model, Intervention("cut_at", 3)).logits
    rest = pad_batch([s[2:] or s[-1:] for s in SENTENCES])
    with torch.no_grad():
        alone = model(rest.ids, rest.lengths).logits
    long_enough = [i for i, s in enumerate(SENTENCES) if len(s) >= 3]
    assert torch.allclose(cut[long_enough], alone[long_enough], atol=1e-6)


# -- DCNN ---------------------------------------------------------------------------------------------------


def test_dcnn_map_off_is_its_softmax_weights_zeroed():
    model = build("dcnn")
    off = _logits(model, Intervention("map_off", 1), explain=4)
    top = model.out.weight.view(model.out.out_features, *off.activations[-1].shape[1:])  # (C, r, n, k)
    with torch.no_grad():
        top[:, :, 1] = 0
    assert torch.allclose(off.logits, _logits(model).logits, atol=1e-6)
    assert bool((off.activations[-1][:, :, 1] == 0).all())  # the view is drawn from what the model used


def one_layer_dcnn(k_top: int):
    from core.models.dcnn import DCNN, DCNNConfig

    return DCNN(
        DCNNConfig(vocab_size=23, num_classes=3, embed_dim=8, widths=[3], maps=[2], k_top=k_top, conv_l2_scale=[1.0])
    ).eval()


def test_dcnn_max_pool_is_k_max_with_k_one():
    _changed(build("dcnn"), Intervention("max_pool"))
    _same_as_plain(one_layer_dcnn(k_top=1), Intervention("max_pool"))  # the top's k is k_top = 1 already


def test_dcnn_no_folding_equals_folding_when_row_pairs_agree():
    model = one_layer_dcnn(k_top=2)
    with torch.no_grad():  # embedding rows 2ρ and 2ρ+1 equal, and so are their filters
        model.embedding.weight.view(23, 4, 2)[:, :, 1] = model.embedding.weight.view(23, 4, 2)[:, :, 0]
        weight = model.layers[0].conv.weight.view(4, 2, -1)
        weight[:, 1] = weight[:, 0]
    _same_as_plain(model, Intervention("no_folding"))
    with torch.no_grad():
        model.layers[0].conv.weight.add_(torch.randn_like(model.layers[0].conv.weight))
    _changed(model, Intervention("no_folding"))


# -- AdaSent ------------------------------------------------------------------------------------------------


def test_adasent_gates_against_the_level_probabilities():
    model = build("adasent")
    plain = _logits(model, explain=4)
    real = torch.arange(plain.level_probs.shape[1])[None, :] < BATCH.lengths[:, None]  # (B, T)
    uniform = (plain.level_probs * real[..., None]).sum(1) / real.sum(1, keepdim=True)  # mean over real levels
    assert torch.allclose(_logits(model, Intervention("uniform_gates")).logits.softmax(-1), uniform, atol=1e-6)
    level_two = _logits(model, Intervention("level_only", 2)).logits.softmax(-1)
    top = BATCH.lengths.clamp(max=2) - 1  # a one-word sentence reads its only level
    assert torch.allclose(level_two, plain.level_probs[torch.arange(len(top)), top], atol=1e-6)


def test_adasent_fixed_local_gates_are_a_no_op_when_the_gates_are_uniform():
    model = build("adasent")
    _changed(model, Intervention("fixed_local_gates", 2))
    with torch.no_grad():
        for p in (model.G_L, model.G_R, model.b_G):
            p.zero_()  # softmax of 0: every unit's gates are 1/3 already
    _same_as_plain(model, Intervention("fixed_local_gates", 2))


# -- AGT ----------------------------------------------------------------------------------------------------


def test_agt_gates():
    model = build("agt")  # 4 layers: gates at L2..L4
    for key in ("gates_open", "gates_closed"):
        _changed(model, Intervention(key, 3))
    with torch.no_grad():
        model.gate[1].bias.fill_(1e4)  # L3's gate is open whatever it reads
    _same_as_plain(model, Intervention("gates_open", 3))
    with torch.no_grad():
        for gate in model.gate:
            gate.bias.fill_(-1e4)  # every gate shut: only the skip paths remain
    _same_as_plain(model, Intervention("skip_only"))
    _same_as_plain(model, Intervention("gates_closed", 4))


def test_agt_uniform_attention_on_one_word_is_a_no_op():
    model = build("agt")
    one = pad_batch([[5]])
    with torch.no_grad():
        changed = model(one.ids, one.lengths, intervention=Intervention("uniform_attention", 1)).logits
    with torch.no_grad():
        assert torch.allclose(changed, model(one.ids, one.lengths).logits, atol=1e-6)
    _changed(model, Intervention("uniform_attention", 1))


# -- through the Lab ----------------------------------------------------------------------------------------


def test_the_lab_lists_applies_and_names_interventions(lab):
    listed = lab.interventions("sst5")
    assert set(listed) == set(lab.models("sst5")) and all(len(ivs) >= 2 for ivs in listed.values())
    plain = lab.predict("the film is not good", "tensor_cnn", task="sst5")
    changed = lab.predict("the film is not good", "tensor_cnn", task="sst5", intervention="max_order:1")
    assert plain.intervention == "none" and changed.intervention == "max_order:1"
    assert changed.probs != plain.probs and changed.notices[-1].code == "intervention"
    assert changed.to_dict()["intervention"] == "max_order:1"


@pytest.mark.parametrize(
    "intervention, code",
    [
        ("no_such", "unknown_intervention"),
        ("gates_open:2", "unknown_intervention"),
        ("layer_off:9", "index_out_of_range"),
        ("max_order", "index_out_of_range"),
        ("bad name", "bad_intervention"),
    ],
)
def test_the_lab_refuses_bad_interventions(lab, intervention, code):
    with pytest.raises(InterventionError) as err:
        lab.predict("the film is not good", "tensor_cnn", task="sst5", intervention=intervention)
    assert err.value.code == code


def test_a_word_index_past_the_text_is_refused(lab):
    with pytest.raises(InterventionError) as err:
        lab.predict("the film is good", "mrnn", task="sst5", intervention="cut_at:5")
    assert err.value.code == "index_out_of_range" and err.value.params["highest"] == 4


def test_the_worker_process_runs_the_intervention(lab):
    from web.runner import ModelWorker

    checked = lab.check_text("the film is not good", "sst5")
    intervention = Intervention("consecutive")
    here = lab.attempt(checked, "tensor_cnn", ("occlusion",), None, intervention)
    worker = ModelWorker(nice=0)
    try:
        there = worker.run(lab._job(checked, "tensor_cnn", ("occlusion",), None, intervention))
    finally:
        worker.close()
    assert there.intervention == "consecutive" and there.probs == pytest.approx(here.probs, abs=1e-6)


def test_the_api_lists_and_applies_interventions(client):
    listed = client.predict("sst5", api_name="/interventions")
    assert listed["dcnn"]["map_off"]["index"] == "map" and "§" in listed["agt"]["skip_only"]["section"]
    plain = client.predict("the film is not good", "mrnn", "sst5", "auto", "default", api_name="/predict")
    cut = client.predict("the film is not good", "mrnn", "sst5", "auto", "default", "cut_at:4", api_name="/predict")
    assert plain["intervention"] == "none" and cut["intervention"] == "cut_at:4" and cut["probs"] != plain["probs"]
    for bad in ("cut_at:9", "layer_off:1"):
        with pytest.raises(Exception) as err:
            client.predict("the film is not good", "mrnn", "sst5", "auto", "default", bad, api_name="/predict")
        assert "Traceback" not in str(err.value) and "intervention" in str(err.value)


def test_make_ablations_writes_every_intervention(lab_root, tiny_data, tmp_path):
    import json

    from tools.research.ablations import main

    assert (
        main(
            [
                "--tasks",
                "sst5",
                "--models",
                "tensor_cnn",
                "agt",
                "--checkpoints",
                str(lab_root),
                "--data",
                str(tiny_data),
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    rows = json.loads((tmp_path / "ablations.json").read_text())["rows"]
    agt = [r for r in rows if r["model"] == "agt"]
    assert agt[0]["intervention"] == "none" and {r["intervention"].split(":")[0] for r in agt[1:]} == {
        "uniform_attention",
        "gates_open",
        "gates_closed",
        "skip_only",
    }
    assert all(0 <= r["dev"] <= 100 and 0 <= r["test"] <= 100 for r in rows)
    assert next(r for r in agt if r["intervention"] == "skip_only")["paper"] == 48.5
    assert "| `skip_only` |" in (tmp_path / "ablations.md").read_text()


# -- in the Lab tab -----------------------------------------------------------------------------------------


def test_the_lab_tab_shows_before_and_after(lab):
    from demo.lab_analysis import analyse, intervention_value
    from demo.links import intervention_specs
    from demo.tabs.checkpoints import facts

    specs = intervention_specs(lab, "tensor_cnn", "auto")
    assert (
        intervention_value("max_order", 1, specs) == "max_order:1"
        and intervention_value("consecutive", 3, specs) == "consecutive"
    )
    assert intervention_value("gates_open", 2, specs) == "none" and intervention_specs(lab, "all", "auto") == {}
    for ui, tests, name in (
        ("en", "What it tests: §3 Eq. 3", "“Consecutive n-grams only”"),
        ("zh", "它检验的是：§3 式 3", "“只用连续 n 元组”"),
    ):
        summary, _, result = analyse(
            lab, facts(lab), "the film is not good", "tensor_cnn", "auto", "auto", ui, "occlusion", "consecutive"
        )
        assert name in summary and "→" in summary and tests in summary  # worded, not its key
        assert result.count('class="model-panel"') == 2 and name in result  # both panels, told apart
        rows = re.findall(r"<tr><td>([^<]*)</td>", result.split('id="comparison"')[1].split("</table>")[0])
        assert len(rows) == 2 and rows[0] != rows[1]  # the before/after table's rows too
        assert result.count(t("accuracy_intervened", ui)) == 2  # its row and its panel: never the checkpoint's
    summary, _, result = analyse(
        lab, facts(lab), "the film is not good", "all", "auto", "auto", "en", "occlusion", "consecutive"
    )
    assert "one model at a time" in summary and result == ""


def test_a_prediction_draws_itself_in_a_notebook(lab, monkeypatch):
    import demo.notebook

    prediction = lab.predict("the film is not good", "dcnn", task="sst5")
    drawn = prediction._repr_html_()
    assert drawn.count("<svg") >= 3 and "<script" not in drawn and "onclick" not in drawn
    before_after = demo.notebook.show(
        [prediction, lab.predict("the film is not good", "dcnn", task="sst5", intervention="max_pool")], ui="zh"
    )
    assert intervention_name("max_pool", "zh") in before_after._repr_html_() and "施加" in before_after
    monkeypatch.setattr(type(prediction), "html_renderer", None)  # core alone: a table of the probabilities
    plain = prediction._repr_html_()
    assert "<table>" in plain and "dcnn" in plain and "<svg" not in plain


def test_the_docs_notebook_runs(lab, monkeypatch):
    """Every code cell of docs/notebook.ipynb, in order, on the test checkpoints."""
    import json
    from pathlib import Path

    from core.predict import Lab

    monkeypatch.setattr(Lab, "load", classmethod(lambda cls, *args, **kwargs: lab))
    cells = json.loads((Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb").read_text())["cells"]
    scope: dict = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            *body, last = source.strip().splitlines()
            exec("\n".join(body), scope)
            shown = eval(last, scope)
            assert isinstance(shown, dict) or "<svg" in shown._repr_html_()
