"""UI text in English and Chinese.

Static labels (component labels, headings) go through `gr.I18n` and follow the browser's language.
Text the callbacks write (the result summary, notices, legends, table headers) is worded here, in
the language of the request's Accept-Language header, so both halves of the page agree. Core's notices
and input errors arrive as codes with parameters (core.predict.Notice): English from core's own
wording, Chinese from NOTICES_ZH.
"""

import dataclasses

import gradio as gr

from core.analysis.attribution import ON_DEMAND
from core.notices import Notice
from core.analysis.probes import PROBE_NOTICE_TEXT
from core.data.sst import FINE_LABELS
from core.analysis.treebank import TREEBANK_NOTICE_TEXT
from core.views import Text
from demo.examples import EXAMPLES

EN = {
    "title": "# Compositional sentence-model lab",
    "intro": ("Type a sentence and see how five classic neural sentence models compose it: the prediction, "
              "a per-word sentiment curve, which words the prediction rests on, and each model's own view "
              "of the sentence. English and Chinese are detected automatically."),
    "sentence": "Sentence",
    "placeholder": "e.g. The acting is great, but the plot is dull.",
    "model": "Model",
    "model_info": "One model, or all of them side by side",
    "all_models": "All five",
    "task": "Task",
    "task_info": "Auto: the default task of the detected language",
    "language": "Language",
    "auto": "Auto",
    "english": "English",
    "chinese": "Chinese",
    "run": "Analyse",
    "examples": "Examples: negation, contrast, intensifiers, the papers' sentences, Chinese",
    "probabilities": "Class probabilities",
    "curve": "Per-word sentiment",
    "comparison": "The five predictions",
    "panels": "## What each model composed",
    "tab_lab": "Lab",
    "tab_models": "Checkpoints",
    "tab_api": "API",
    "models_md": "The checkpoints this app loaded, and where each came from.",
    "api_md": "Every analysis is also a JSON endpoint.",
    "tab_probes": "Probes",
    "probes_md": ("Behavioural probes (CheckList's three test types): does a model know polar words, does *not* flip "
                  "them, does *but* shift the weight to the second clause, does *extremely* push further than "
                  "*slightly*, and does the prediction ignore names, fillers and punctuation? Each cell is the "
                  "pass rate of one capability for one model; choose a cell to see its failures."),
    "probe_suite": "Suite",
    "probe_run": "Run the suite",
    "probe_table": "Pass rate per capability and model (%)",
    "probe_capability": "Capability",
    "probe_failures": "Failures of the chosen cell",
    "probe_failure": "Failure",
    "probe_open": "Open this failure in the Lab",
    "probe_failure_info": "Choose a row of the failures table, or one here",
    "pair": "Minimal pair",
    "pair_md": ("A second sentence that differs from the first in a few words (or a probe failure opened here): "
                "for each model, both predictions, the change of the expected sentiment from A to B, and both "
                "per-word curves on aligned words. A word both sentences share has one position; a word only "
                "one of them has stands alone, its tick in that sentence's colour."),
    "sentence_b": "Sentence B (the sentence above is A)",
    "run_pair": "Compare A and B",
    "probe_user": "Your own cases: one per line, sentence<TAB>expectation (positive, negative, not_positive, a label) or sentence<TAB>variant<TAB>up|down|same",
    "probe_upload": "…or upload a CSV/TSV file with the same columns",
    "probe_run_user": "Run my cases",
}

ZH = {
    "title": "# 组合式句子模型实验室",
    "intro": "输入一句话，看五个经典神经网络句子模型如何组合它：预测结果、逐词情感曲线、预测依赖哪些词，以及每个模型自己的视图。自动识别英文或中文。",
    "sentence": "句子",
    "placeholder": "例如：这部电影不怎么好看，但是演员很棒",
    "model": "模型",
    "model_info": "单个模型，或全部模型并排比较",
    "all_models": "全部五个",
    "task": "任务",
    "task_info": "自动：按识别出的语言选择默认任务",
    "language": "语言",
    "auto": "自动",
    "english": "英文",
    "chinese": "中文",
    "run": "分析",
    "examples": "示例：否定、转折、程度副词、论文中的句子、中文",
    "probabilities": "各类别概率",
    "curve": "逐词情感",
    "comparison": "五个模型的预测",
    "panels": "## 每个模型组合出了什么",
    "tab_lab": "实验室",
    "tab_models": "模型文件",
    "tab_api": "接口",
    "models_md": "本应用加载的模型文件及其来源。",
    "api_md": "每次分析也可以通过 JSON 接口调用。",
    "tab_probes": "行为探针",
    "probes_md": ("行为探针（CheckList 的三类测试）：模型是否认识褒贬词，“不”能否翻转它们，“但是”能否把重心移到后一分句，"
                  "“非常”是否比“有点”更强，预测是否不受人名、插入语和标点影响？每格是一个模型在一项能力上的通过率；选择一格查看失败用例。"),
    "probe_suite": "测试集",
    "probe_run": "运行测试集",
    "probe_table": "各能力、各模型的通过率（%）",
    "probe_capability": "能力",
    "probe_failures": "所选格子的失败用例",
    "probe_failure": "失败用例",
    "probe_open": "在实验室中打开这个失败用例",
    "probe_failure_info": "在失败用例表中选一行，或在这里选择",
    "pair": "最小对比句对",
    "pair_md": ("第二个句子与第一个只差几个词（或从行为探针打开的失败用例）：每个模型对两句的预测、期望情感从 A 到 B 的变化，"
                "以及两句对齐后的逐词曲线。两句共有的词占同一位置；只有一句有的词单独占一个位置，刻度用该句的颜色标出。"),
    "sentence_b": "句子 B（上面的句子是 A）",
    "run_pair": "比较 A 和 B",
    "probe_user": "自己的用例：每行一个，句子<TAB>预期（positive、negative、not_positive 或标签名）或 句子<TAB>变体<TAB>up|down|same",
    "probe_upload": "……或上传相同列的 CSV/TSV 文件",
    "probe_run_user": "运行我的用例",
}

TASK_NAMES = {
    "en": {"sst5": "SST fine-grained (5 classes)", "sst2": "SST binary", "zh_sentiment": "Chinese sentiment (binary)",
           "zh_news": "Chinese news titles (10 topics)", "trec": "TREC question type", "mr": "MR polarity"},
    "zh": {"sst5": "SST 细粒度（5 类）", "sst2": "SST 二分类", "zh_sentiment": "中文情感（二分类）",
           "zh_news": "中文新闻标题（10 类）", "trec": "TREC 问题类型", "mr": "MR 影评极性"},
}

EN.update({f"task_{k}": v for k, v in TASK_NAMES["en"].items()})
ZH.update({f"task_{k}": v for k, v in TASK_NAMES["zh"].items()})
I18N = gr.I18n(en=EN, zh=ZH, **{"zh-CN": ZH, "zh-TW": ZH})
L = I18N  # L("key") in component constructors

# -- text written by callbacks -----------------------------------------------------------------------

MESSAGES = {
    "en": {
        "no_models": "No checkpoints are loaded. Put trained checkpoints in `{root}/<task>/<model>/` (or point LAB_CHECKPOINTS there) and restart.",
        "load_errors": "Some checkpoints could not be loaded; the other models keep serving:",
        "failed": "Model {model} failed on this input ({error}); the other models still answered.",
        "internal": "Something went wrong inside model {model} ({error}). The input was not the problem; please report it.",
        "prediction": "Prediction",
        "model": "model", "task": "task", "language": "language", "source": "checkpoint",
        "lang_en": "English", "lang_zh": "Chinese", "detected": "detected",
        "curve_native": "native: the model's own per-word output",
        "curve_probe": "probe: the model's classifier on each word alone, which the model itself never does",
        "curve_prefix": "prefix: the prediction on words 1..i",
        "occlusion": "Leave-one-word-out: which words the prediction '{label}' rests on",
        "occlusion_note": "Colour = change in P({label}) when the word is removed, scaled to the largest change ({scale:.3g}).",
        "strong_for": "strongly supports", "for": "supports", "against": "speaks against",
        "strong_against": "strongly against", "unknown": "unknown word",
        "col_model": "model", "col_label": "label", "col_confidence": "probability", "col_curve": "curve",
        "col_source": "checkpoint", "col_task": "task", "col_lang": "language", "col_classes": "classes",
        "col_accuracy": "test accuracy", "col_path": "checkpoint", "col_error": "error",
        "majority": "Majority label: **{label}** ({votes} of {n} models)",
        "words_unknown": "unknown words",
        "probe_summary": "{suite} on task {task}: {cases} cases, {models} models, {seconds:.2f} s.",
        "probe_cell": "{capability} · {model}: {passed} of {total} passed",
        "probe_none": "No failures in this cell.",
        "col_capability": "capability", "col_test": "test", "col_type": "type", "col_sentence": "sentence", "col_variant": "variant",
        "col_expected": "expected", "col_predicted": "predicted", "col_score_change": "change of {score}",
        "type_mft": "minimum functionality", "type_inv": "invariance", "type_dir": "directional",
        "expect_up": "rises", "expect_down": "falls", "expect_same": "same label",
        "user_cases": "your cases",
        "probe_no_failure": "Run a suite and choose a failure first.",
        "pair_summary": "### A → B: {score} rises for {up} and falls for {down} of {n} models",
        "pair_texts": "**A**: {a} · **B**: {b}",
        "pair_error": "Sentence {sentence}: {message}",
        "col_label_a": "label A", "col_label_b": "label B", "col_score_a": "A: {score}", "col_score_b": "B: {score}",
        "col_difference": "B − A",
    },
    "zh": {
        "no_models": "没有加载任何模型。请把训练好的模型放在 `{root}/<任务>/<模型>/`（或用 LAB_CHECKPOINTS 指定）后重启。",
        "load_errors": "部分模型文件无法加载，其余模型照常服务：",
        "failed": "模型 {model} 处理这段输入时出错（{error}），其余模型已给出结果。",
        "internal": "模型 {model} 内部出错（{error}）。这不是输入的问题，请报告给我们。",
        "prediction": "预测",
        "model": "模型", "task": "任务", "language": "语言", "source": "模型文件",
        "lang_en": "英文", "lang_zh": "中文", "detected": "自动识别",
        "curve_native": "原生：模型自己在每个词上的输出",
        "curve_probe": "探针：模型的分类器单独作用于每个词，模型自身从不这样用它",
        "curve_prefix": "前缀：对第 1..i 个词的预测",
        "occlusion": "逐词删除：预测“{label}”依赖哪些词",
        "occlusion_note": "颜色 = 删除该词后 P({label}) 的变化，按最大变化（{scale:.3g}）缩放。",
        "strong_for": "强烈支持", "for": "支持", "against": "反对",
        "strong_against": "强烈反对", "unknown": "未登录词",
        "col_model": "模型", "col_label": "标签", "col_confidence": "概率", "col_curve": "曲线",
        "col_source": "模型文件", "col_task": "任务", "col_lang": "语言", "col_classes": "类别",
        "col_accuracy": "测试准确率", "col_path": "模型文件", "col_error": "错误",
        "majority": "多数标签：**{label}**（{n} 个模型中 {votes} 个）",
        "words_unknown": "未登录词",
        "probe_summary": "测试集 {suite}，任务 {task}：{cases} 个用例，{models} 个模型，用时 {seconds:.2f} 秒。",
        "probe_cell": "{capability} · {model}：{total} 个中通过 {passed} 个",
        "probe_none": "这一格没有失败用例。",
        "col_capability": "能力", "col_test": "测试", "col_type": "类型", "col_sentence": "句子", "col_variant": "变体",
        "col_expected": "预期", "col_predicted": "预测", "col_score_change": "{score} 的变化",
        "type_mft": "最低功能", "type_inv": "不变性", "type_dir": "方向性",
        "expect_up": "上升", "expect_down": "下降", "expect_same": "标签不变",
        "user_cases": "你的用例",
        "probe_no_failure": "请先运行测试集并选择一个失败用例。",
        "pair_summary": "### A → B：{n} 个模型中，{score} 上升的有 {up} 个，下降的有 {down} 个",
        "pair_texts": "**A**：{a} · **B**：{b}",
        "pair_error": "句子 {sentence}：{message}",
        "col_label_a": "A 的标签", "col_label_b": "B 的标签", "col_score_a": "A：{score}", "col_score_b": "B：{score}",
        "col_difference": "B − A",
    },
}

MODEL_NAMES = {
    "tensor_cnn": "Tensor CNN (Lei et al. 2015)",
    "mrnn": "mRNN (Irsoy & Cardie 2015)",
    "dcnn": "DCNN (Kalchbrenner et al. 2014)",
    "adasent": "AdaSent (Zhao et al. 2015)",
    "agt": "AGT (Guo 2017)",
    "nbow": "NBoW baseline",
}

LABELS_ZH = {"very negative": "非常负面", "negative": "负面", "neutral": "中性", "positive": "正面",
             "very positive": "非常正面", "subjective": "主观", "objective": "客观"}

# core's notices and input errors (core.predict.NOTICE_TEXT) in Chinese: the same codes and parameters
NOTICES_ZH = {
    "not_a_string": "{name} 必须是字符串，收到的是 {type}",
    "empty": "请输入一句话：文本为空。",
    "no_words": "文本中没有找到任何词（只有标点或表情？）。",
    "unknown_language": "未知语言 '{lang}'；请选择 'en' 或 'zh'",
    "unknown_task": "任务 {task} 没有加载模型；可用任务：{available}",
    "nothing_loaded": "任务 {task} 没有加载模型：一个模型文件都没有加载。",
    "unknown_model": "模型 {model} 不支持任务 {task}；可用模型：{available}",
    "one_model_expected": "'all' 是全部模型，不是一个模型：请用 compare（/compare 接口，或命令行 --model all）",
    "surrogates_replaced": "无效字符（孤立的代理码元）已替换为 \ufffd。",
    "text_cut": "文本过长，只保留了前 {max_chars} 个字符。",
    "words_cut": "只分析了前 {max_words} 个词。",
    "language_mismatch": "文本看起来是{text_lang}，但任务 {task} 是{task_lang}的；大部分词对这些模型来说都是未登录词。",
    "all_unknown": "这些词都不在模型的词表中：预测只是模型的先验。",
    "some_unknown": "{total} 个词中有 {unknown} 个不在模型词表中（在高亮中标出）。",
    "occlusion_skipped": "逐词删除的词归因只对不超过 {max_words} 个词的文本计算。",
    "bad_intervention": "干预写作一个名称，或“名称:序号”，收到的是“{value}”",
    "unknown_intervention": "模型 {model} 没有干预“{intervention}”；可用：{available}",
    "no_index": "模型 {model} 的干预“{intervention}”不带序号",
    "index_out_of_range": "干预“{intervention}”需要 {lowest} 到 {highest} 之间的 {what}，收到的是 {value}",
    "intervention": "对 {model} 施加了干预 {intervention}：模型本身被改变，而不只是被观察。",
    "pyramid_reduced": "文本超过 {max_words} 个词，AdaSent 金字塔以较低精度发送：不含门控值，分数保留三位小数。",
}
LANGUAGE_NAMES_ZH = {"en": "英文", "zh": "中文"}

# core.analysis.probes' problems with user cases (PROBE_NOTICE_TEXT) in Chinese: the same codes and parameters
PROBE_NOTICES_ZH = {
    "no_cases": "没有用例：每行写一个，`句子<TAB>预期` 或 `句子<TAB>变体<TAB>up|down|same`。",
    "bad_columns": "第 {line} 行：应有 2 或 3 列（以制表符分隔），实际为 {found} 列。",
    "bad_expectation": "第 {line} 行：'{value}' 不是任务 {task} 的预期；可用：{allowed}。",
    "bad_direction": "第 {line} 行：'{value}' 不是方向；请用 up、down 或 same。",
    "too_many_cases": "一次最多 {max_cases} 个用例；收到 {found} 个。",
    "no_sentiment": "任务 {task} 没有正面/负面类别（{labels}）：探针需要情感任务。",
    "unknown_task": "任务 {task} 没有加载模型；可用任务：{available}。",
    "unknown_model": "模型 {model} 没有为任务 {task} 加载；可用模型：{available}。",
    "unknown_expectation": "测试 {test}：'{value}' 不是任务 {task} 的预期；可用：{allowed}。",
}


def request_lang(request) -> str:
    """'zh' when the browser prefers Chinese (Accept-Language), else 'en'."""
    headers = getattr(request, "headers", None) or {}
    accept = headers.get("accept-language", "") if hasattr(headers, "get") else ""
    first = accept.split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def msg(key: str, lang: str, **values) -> str:
    return MESSAGES.get(lang, MESSAGES["en"]).get(key, MESSAGES["en"][key]).format(**values)


def notice_text(notice: Notice, lang: str) -> str:
    """A notice or input error from core in the UI language."""
    return notice.format(NOTICES_ZH, LANGUAGE_NAMES_ZH) if lang == "zh" else notice.format()


def probe_notice_text(notice: Notice, lang: str) -> str:
    """A problem with probe cases from core.analysis.probes in the UI language."""
    return notice.format(PROBE_NOTICES_ZH, LANGUAGE_NAMES_ZH) if lang == "zh" else notice.format(PROBE_NOTICE_TEXT)


def label_name(label: str, lang: str) -> str:
    return LABELS_ZH.get(label, label) if lang == "zh" else label


def model_name(key: str, cited: bool = True) -> str:
    """The model's name with its paper ("Tensor CNN (Lei et al. 2015)"), or without (`cited=False`)."""
    name = MODEL_NAMES.get(key, key)
    return name if cited else name.split(" (")[0]


def task_name(task: str, lang: str) -> str:
    return TASK_NAMES.get(lang, TASK_NAMES["en"]).get(task, task)


# -- the Treebank tab (demo/tabs/treebank.py; issue 23) ---------------------------------------------

I18N_TREEBANK = {
    "en": {
        "tab_treebank": "Treebank",
        "treebank_md": ("The Stanford Sentiment Treebank labels every phrase of every sentence: the one place where a model's "
                        "composition can be checked node by node. Pick a dev/test sentence to see its gold tree, each node "
                        "with its gold label and every model's prediction on that node's phrase alone; below, each model "
                        "against the whole test set (computed beforehand by `make evaluate-all`)."),
        "tb_trees": "Sentence trees",
        "tb_split": "Split",
        "tb_words": "Words",
        "tb_words_info": "a word or phrase the sentence contains",
        "tb_label": "Gold label of the sentence",
        "tb_phenomenon": "Phenomenon",
        "tb_min": "At least (words)",
        "tb_max": "At most (words, 0 = any)",
        "tb_search": "Search",
        "tb_random": "Random sentence",
        "tb_sentence": "Sentence",
        "tb_any": "Any",
        "tb_negation": "Negation (not, n't, no, never…)",
        "tb_contrast": "Contrast (but, however, although…)",
        "tb_tree": "Gold tree and predictions",
        "tb_nodes": "Every node: gold label and each model's prediction on the phrase alone (✓ = gold)",
        "tb_node": "Node",
        "tb_node_info": "Choose a row of the node table, or a node here",
        "tb_open_node": "Open this phrase in the Lab",
        "tb_dataset": "Dataset view (test set)",
        "tb_length": "Accuracy by length",
        "tb_confusion": "Confusion matrix",
        "tb_per_class": "Per class",
        "tb_slices": "Slices",
        "tb_disagree": "Test sentences on which the models disagree most",
        "tb_disagree_pick": "Sentence",
        "tb_open_sentence": "Open this sentence in the Lab",
    },
    "zh": {
        "tab_treebank": "树库",
        "treebank_md": ("斯坦福情感树库为每个句子的每个短语都标注了情感：这是逐个节点检验模型组合能力的唯一途径。选择一个开发集/测试集句子，"
                        "查看它的标准句法树：每个节点给出标准标签，以及每个模型单独对该节点短语的预测；下方是每个模型在整个测试集上的表现"
                        "（事先由 `make evaluate-all` 计算）。"),
        "tb_trees": "句子树",
        "tb_split": "数据划分",
        "tb_words": "词语",
        "tb_words_info": "句子中包含的词或短语",
        "tb_label": "句子的标准标签",
        "tb_phenomenon": "语言现象",
        "tb_min": "至少（词数）",
        "tb_max": "至多（词数，0 = 不限）",
        "tb_search": "搜索",
        "tb_random": "随机句子",
        "tb_sentence": "句子",
        "tb_any": "任意",
        "tb_negation": "否定（not、n't、no、never……）",
        "tb_contrast": "转折（but、however、although……）",
        "tb_tree": "标准句法树与预测",
        "tb_nodes": "每个节点：标准标签和每个模型单独对该短语的预测（✓ = 与标准一致）",
        "tb_node": "节点",
        "tb_node_info": "在节点表中选一行，或在这里选择",
        "tb_open_node": "在实验室中打开这个短语",
        "tb_dataset": "数据集视图（测试集）",
        "tb_length": "按长度的准确率",
        "tb_confusion": "混淆矩阵",
        "tb_per_class": "各类别",
        "tb_slices": "子集",
        "tb_disagree": "模型分歧最大的测试句子",
        "tb_disagree_pick": "句子",
        "tb_open_sentence": "在实验室中打开这个句子",
    },
}
for lang, names in (("en", {"dev": "dev", "test": "test"}), ("zh", {"dev": "开发集", "test": "测试集"})):
    I18N_TREEBANK[lang].update({f"tb_split_{split}": name for split, name in names.items()})
for i, name in enumerate(FINE_LABELS):  # the picker's gold-label filter
    I18N_TREEBANK["en"][f"tb_label_{i}"], I18N_TREEBANK["zh"][f"tb_label_{i}"] = name, LABELS_ZH[name]
EN.update(I18N_TREEBANK["en"])
ZH.update(I18N_TREEBANK["zh"])

MESSAGES["en"].update({
    "tb_tree_summary": "**{split} #{index}** · {words} words · gold: **{gold}** · nodes each model gets right: {accuracy}",
    "tb_hits": "{n} sentences found",
    "tb_hits_capped": "the first {n} sentences found (narrow the search to see others)",
    "tb_no_gold": "no label in this task",
    "tb_agree": "{agree} of {n} models predict the gold label",
    "tb_legend": ("Circle: a node, its gold label inside ({symbols}), its colour how many models predict that label "
                  "(green all, red none, grey: no label in this task). Squares under it, left to right: {models}, "
                  "each coloured by its prediction (red negative … blue positive). Hover a node for the phrase."),
    "tb_col_node": "node", "tb_col_phrase": "phrase", "tb_col_gold": "gold", "tb_col_words": "words",
    "tb_col_agree": "models right",
    "tb_status_missing": "No evaluation is stored for {model} on {task}. Run `{command}`: it evaluates every checkpoint on its test set once and stores the result beside the weights.",
    "tb_status_stale": "The stored evaluation of {model} on {task} was computed from other weights (the checkpoint changed since). Run `{command}` to rebuild it.",
    "tb_status_invalid": "The stored evaluation of {model} on {task} cannot be read. Run `{command}` to rebuild it.",
    "tb_disagreement_stale": "Another model of {task} changed since this list was computed; run `{command}` to refresh it.",
    "tb_dataset_summary": ("**{model}** on the {task} test set: sentences (root) **{sentences:.1%}** of {n}{phrases}. "
                           "Computed by `{command}` from these exact weights."),
    "tb_phrases": ", every labelled phrase **{accuracy:.1%}** of {n}",
    "tb_length_phrase": "Accuracy by n-gram length (every labelled test phrase)",
    "tb_length_sentence": "Accuracy by sentence length (test sentences)",
    "tb_length_axis": "length in words", "tb_accuracy": "accuracy", "tb_count": "phrases or sentences",
    "tb_gold_axis": "gold", "tb_predicted_axis": "predicted",
    "tb_col_class": "class", "tb_col_precision": "precision", "tb_col_recall": "recall", "tb_col_f1": "F1",
    "tb_col_support": "support", "tb_col_slice": "slice", "tb_col_n": "sentences", "tb_col_accuracy": "accuracy",
    "tb_col_sentence": "sentence", "tb_col_distinct": "distinct labels",
    "tb_slice_all": "all test sentences", "tb_slice_negation": "with negation", "tb_slice_contrast": "with contrast",
    "tb_slice_unknown_words": "with words this model does not know",
    "tb_no_trees": "The tree view is not available: {error}",
    "tb_no_node": "Choose a sentence and a node first.",
    "tb_no_sentence": "Choose a sentence first.",
})
MESSAGES["zh"].update({
    "tb_tree_summary": "**{split} #{index}** · {words} 个词 · 标准标签：**{gold}** · 各模型预测正确的节点比例：{accuracy}",
    "tb_hits": "找到 {n} 个句子",
    "tb_hits_capped": "找到的前 {n} 个句子（缩小搜索范围以查看其他句子）",
    "tb_no_gold": "该任务中无标签",
    "tb_agree": "{n} 个模型中有 {agree} 个预测为标准标签",
    "tb_legend": ("圆圈：一个节点，圈内是它的标准标签（{symbols}），颜色表示有多少模型预测了该标签（绿色全部，红色没有，灰色：该任务中无标签）。"
                  "下方的小方块从左到右依次是：{models}，颜色表示各自的预测（红色负面……蓝色正面）。鼠标悬停可查看短语。"),
    "tb_col_node": "节点", "tb_col_phrase": "短语", "tb_col_gold": "标准", "tb_col_words": "词数",
    "tb_col_agree": "预测正确的模型数",
    "tb_status_missing": "{task} 上的 {model} 还没有保存评估结果。请运行 `{command}`：它会在测试集上评估每个模型文件一次，并把结果保存在权重旁边。",
    "tb_status_stale": "{task} 上 {model} 保存的评估是用另一份权重计算的（模型文件之后改变了）。请运行 `{command}` 重新生成。",
    "tb_status_invalid": "{task} 上 {model} 保存的评估无法读取。请运行 `{command}` 重新生成。",
    "tb_disagreement_stale": "计算这份列表之后，{task} 的另一个模型已改变；请运行 `{command}` 刷新。",
    "tb_dataset_summary": ("**{model}** 在 {task} 测试集上：句子（根节点）**{sentences:.1%}**，共 {n} 句{phrases}。"
                           "由 `{command}` 基于这份权重计算。"),
    "tb_phrases": "；全部标注短语 **{accuracy:.1%}**，共 {n} 个",
    "tb_length_phrase": "按 n 元短语长度的准确率（全部标注的测试短语）",
    "tb_length_sentence": "按句子长度的准确率（测试句子）",
    "tb_length_axis": "长度（词数）", "tb_accuracy": "准确率", "tb_count": "短语或句子数",
    "tb_gold_axis": "标准", "tb_predicted_axis": "预测",
    "tb_col_class": "类别", "tb_col_precision": "精确率", "tb_col_recall": "召回率", "tb_col_f1": "F1",
    "tb_col_support": "样本数", "tb_col_slice": "子集", "tb_col_n": "句子数", "tb_col_accuracy": "准确率",
    "tb_col_sentence": "句子", "tb_col_distinct": "不同标签数",
    "tb_slice_all": "全部测试句子", "tb_slice_negation": "含否定", "tb_slice_contrast": "含转折",
    "tb_slice_unknown_words": "含该模型不认识的词",
    "tb_no_trees": "树视图不可用：{error}",
    "tb_no_node": "请先选择一个句子和一个节点。",
    "tb_no_sentence": "请先选择一个句子。",
})

# core.analysis.treebank's errors (TREEBANK_NOTICE_TEXT) in Chinese: the same codes and parameters
TREEBANK_NOTICES_ZH = {
    "no_trees": "SST 句法树不可用（{error}）；请把 DATA_DIR 设为包含 sst/trees/ 的文件夹。",
    "unknown_split": "未知的数据划分 '{split}'；可选：{available}",
    "bad_index": "{split} 中没有第 {index} 个句子，它共有 {size} 个句子（0..{last}）",
    "not_sst": "任务 '{task}' 没有句法树；树视图需要以下任务之一：{available}",
    "no_models": "任务 '{task}' 没有加载模型；可用任务：{available}",
    "unknown_model": "模型 '{model}' 没有为任务 '{task}' 加载；可用模型：{available}",
    "unknown_phenomenon": "未知的语言现象 '{phenomenon}'；可选：{available}",
    "unknown_label": "未知标签 '{label}'；可选：{available}",
    "no_match": "{split} 中没有符合这次搜索的句子。",
}


def treebank_notice_text(notice: Notice, lang: str) -> str:
    """A problem from core.analysis.treebank in the UI language."""
    return notice.format(TREEBANK_NOTICES_ZH, LANGUAGE_NAMES_ZH) if lang == "zh" else notice.format(TREEBANK_NOTICE_TEXT)

# -- the Train tab (issue 26): static labels, callback text, and core's job/file errors in Chinese -----------

EN.update({
    "tab_train": "Train",
    "train_md": ("Train a model on your own labelled file: a CSV, TSV or JSONL file with a text column and a label "
                 "column (found by their names, e.g. *text*/*review* and *label*/*stars*, or choose them). English or "
                 "Chinese is detected per file; without a *split* column (train/dev/test) the rows are split 80/10/10. "
                 "Training runs in a background worker, one job at a time; the finished model joins the Lab tab."),
    "train_file": "Labelled file (CSV, TSV or JSONL)",
    "train_text_column": "Text column",
    "train_label_column": "Label column",
    "train_column_info": "Empty: detected from the column names",
    "train_model": "Model",
    "train_vectors": "Word vectors",
    "train_vectors_none": "Random (trained from scratch)",
    "train_vectors_auto": "Pretrained, when available for the language",
    "train_epochs": "Epochs",
    "train_minutes": "Time budget (minutes)",
    "train_start": "Start training",
    "train_cancel": "Cancel",
    "train_job": "Job",
    "train_loss": "Training loss",
    "train_dev": "Dev accuracy",
    "train_confusion": "Confusion matrix on the test rows (rows: true label, columns: predicted)",
    "train_publish": "Publish to the Hugging Face Hub",
    "train_repo": "Model repo (owner/name)",
    "train_token": "Hugging Face write token (not stored)",
    "train_push": "Publish",
})
ZH.update({
    "tab_train": "训练",
    "train_md": ("用你自己的标注文件训练模型：CSV、TSV 或 JSONL 文件，含一列文本和一列标签（按列名识别，如 *text*/*review* 和 "
                 "*label*/*stars*，也可以自己选）。每个文件自动识别英文或中文；没有 *split* 列（train/dev/test）时按 80/10/10 "
                 "划分。训练在后台进程中进行，一次一个任务；训练好的模型会出现在实验室标签页中。"),
    "train_file": "标注文件（CSV、TSV 或 JSONL）",
    "train_text_column": "文本列",
    "train_label_column": "标签列",
    "train_column_info": "留空：按列名自动识别",
    "train_model": "模型",
    "train_vectors": "词向量",
    "train_vectors_none": "随机初始化（从头训练）",
    "train_vectors_auto": "预训练词向量（该语言有时）",
    "train_epochs": "训练轮数",
    "train_minutes": "时间上限（分钟）",
    "train_start": "开始训练",
    "train_cancel": "取消",
    "train_job": "任务",
    "train_loss": "训练损失",
    "train_dev": "验证集准确率",
    "train_confusion": "测试集上的混淆矩阵（行：真实标签，列：预测标签）",
    "train_publish": "发布到 Hugging Face Hub",
    "train_repo": "模型仓库（owner/name）",
    "train_token": "Hugging Face 写入令牌（不会保存）",
    "train_push": "发布",
})
MESSAGES["en"].update({
    "train_file_ok": "{rows} rows · text column **{text}** · label column **{label}** · {n} labels ({labels}) · {language}",
    "train_status_queued": "Waiting: position {position} in the training queue.",
    "train_status_running": "Training: epoch {epoch:.1f} of {epochs} ({percent:.0f}%){eta}.",
    "train_eta": " · about {time} left",
    "train_status_done": "Done: task **{task}**, model **{model}** · test accuracy **{accuracy:.3f}** on {n} rows. It is now in the Lab tab's task choice.",
    "train_status_failed": "Failed: {error}",
    "train_status_cancelled": "Cancelled.",
    "train_status_stopped": "Stopped: the training worker was killed before it finished; start the training again.",
    "train_pushed": "Published: {url}",
    "train_no_job": "Start a training first.",
    "col_gold": "true \\ predicted",
})
MESSAGES["zh"].update({
    "train_file_ok": "{rows} 行 · 文本列 **{text}** · 标签列 **{label}** · {n} 个标签（{labels}）· {language}",
    "train_status_queued": "等待中：训练队列第 {position} 位。",
    "train_status_running": "训练中：第 {epoch:.1f} / {epochs} 轮（{percent:.0f}%）{eta}。",
    "train_eta": " · 约剩 {time}",
    "train_status_done": "完成：任务 **{task}**，模型 **{model}** · 测试准确率 **{accuracy:.3f}**（{n} 行）。已加入实验室标签页的任务选项。",
    "train_status_failed": "失败：{error}",
    "train_status_cancelled": "已取消。",
    "train_status_stopped": "已停止：训练进程在完成前被终止；请重新开始训练。",
    "train_pushed": "已发布：{url}",
    "train_no_job": "请先开始一次训练。",
    "col_gold": "真实 \\ 预测",
})

# core.data.user.USER_DATA_TEXT and core.training.jobs.JOB_TEXT in Chinese: the same codes and parameters
TRAIN_ERRORS_ZH = {
    "unknown_format": "“{name}”不是 CSV、TSV 或 JSONL 文件（文件名须以 .csv、.tsv 或 .jsonl 结尾）",
    "too_large": "文件大小为 {size_mb:.1f} MB，上限是 {max_mb:.1f} MB",
    "bad_encoding": "第 {row} 行不是 UTF-8 文本；请把文件另存为 UTF-8 后重新上传",
    "empty_file": "文件中没有任何数据行",
    "bad_json": "第 {row} 行不是 JSON 对象（{error}）",
    "missing_column": "没有名为“{column}”的列；现有列：{columns}",
    "choose_columns": "无法判断哪一列是文本、哪一列是标签；请选择（现有列：{columns}）",
    "same_column": "文本列和标签列必须不同（两者都是“{column}”）",
    "empty_text": "第 {row} 行的文本为空",
    "empty_label": "第 {row} 行没有标签",
    "bad_split": "第 {row} 行：划分“{value}”不是 train、dev 或 test",
    "missing_split": "划分列中没有“{split}”行",
    "one_label": "所有行的标签都是“{label}”：分类器至少需要两个标签",
    "too_many_labels": "“{column}”列有 {count} 个不同标签（最多 {max_labels} 个）；它是标签列吗？",
    "too_few_rows": "文件只有 {rows} 行；至少需要 {min_rows} 行",
    "too_many_rows": "文件超过 {max_rows} 行，超出这里的上限",
    "no_file": "请选择要训练的 CSV、TSV 或 JSONL 文件",
    "unknown_model": "这里不能训练模型“{model}”；可选：{models}",
    "bad_epochs": "训练轮数必须是 1 到 {max_epochs} 的整数，收到 {value}",
    "bad_minutes": "时间上限必须在 0.5 到 {max_minutes} 分钟之间，收到 {value}",
    "bad_vectors": "词向量必须是 {choices} 之一，收到“{value}”",
    "unknown_job": "没有训练任务“{job}”",
    "not_done": "任务 {job} 尚未完成（{status}）：还没有可发布的模型",
    "no_token": "请用 Hugging Face 登录或粘贴写入令牌后再发布",
    "bad_repo": "“{repo}”不是 Hub 模型仓库名（owner/name）",
    "hub_offline": "这里无法连接 Hugging Face Hub（已设置 HF_HUB_OFFLINE）：模型保留在本地",
    "hub_failed": "发布到 Hub 失败：{error}",
}


def train_error_text(code: str, params: dict, english: str, lang: str) -> str:
    """A UserDataError or JobError from core (a code, its parameters and core's English) in the UI language."""
    return TRAIN_ERRORS_ZH[code].format(**params) if lang == "zh" and code in TRAIN_ERRORS_ZH else english
# -- word attribution methods (demo/attribution_view.py, core/analysis/attribution.py) ------------------------
NOTICES_ZH["unknown_method"] = "未知的词归因方法 '{method}'；可用：{available}"
ATTRIBUTION_NAMES = {
    "en": {"occlusion": "leave-one-word-out (occlusion)", "gradient_x_input": "gradient × input",
           "integrated_gradients": "integrated gradients", "smoothgrad": "SmoothGrad"},
    "zh": {"occlusion": "逐词删除（遮挡）", "gradient_x_input": "梯度 × 输入", "integrated_gradients": "积分梯度",
           "smoothgrad": "SmoothGrad（加噪平滑梯度）"},
}
EN |= {"attr_method": "Word attribution",
       "attr_method_info": "How the highlight scores each word; beside it, the method the deletion test found most faithful."}
ZH |= {"attr_method": "词归因方法", "attr_method_info": "高亮如何给每个词打分；旁边是删除测试中最忠实的方法。"}
# selector labels; a method too slow for every request says so (it runs when chosen)
EN |= {f"attr_{m}": name + (" (slower: computed when chosen)" if m in ON_DEMAND else "")
       for m, name in ATTRIBUTION_NAMES["en"].items()}
ZH |= {f"attr_{m}": name + ("（较慢：选中时才计算）" if m in ON_DEMAND else "") for m, name in ATTRIBUTION_NAMES["zh"].items()}
MESSAGES["en"] |= {
    "attr_highlight": "{method}: which words the prediction '{label}' rests on",
    "attr_note_gradient": "Colour = the word's share of the '{label}' logit by {method}, scaled to the largest ({scale:.3g}).",
    "attr_completeness": "Integrated gradients: {steps} steps, completeness error {error:.1%} (the scores' sum vs the logit's change from all-zero word vectors).",
    "attr_scores": "Per-word scores by method (positive: supports '{label}')",
    "attr_word": "word",
    "attr_best": "Most faithful in the deletion test (docs/attribution.md, {n} test sentences per task; AOPC, higher is more faithful, against a random order's):",
    "attr_best_cell": "**{method}** {aopc:.3f} (random order {random:.3f})",
    "attr_model": "model",
    "attr_not_measured": "No deletion test has been measured for these checkpoints (`make attribution`).",
}
MESSAGES["zh"] |= {
    "attr_highlight": "{method}：预测“{label}”依赖哪些词",
    "attr_note_gradient": "颜色 = 按{method}计算的该词对“{label}”logit 的贡献，按最大值（{scale:.3g}）缩放。",
    "attr_completeness": "积分梯度：{steps} 步，完备性误差 {error:.1%}（分数之和与 logit 相对全零词向量的变化之差）。",
    "attr_scores": "各方法的逐词分数（正数：支持“{label}”）",
    "attr_word": "词",
    "attr_best": "删除测试中最忠实的方法（docs/attribution.md，每个任务 {n} 个测试句；AOPC 越高越忠实，括号内为随机顺序的值）：",
    "attr_best_cell": "**{method}** {aopc:.3f}（随机顺序 {random:.3f}）",
    "attr_model": "模型",
    "attr_not_measured": "尚未对这些模型文件做删除测试（`make attribution`）。",
}
# -- the Lab's result in a real browser (issue 20): views, figures, permalinks, export ------------------

EN.update({"analysing": "⏳ Analysing…", "copy_link": "Copy link", "permalink": "Link to this analysis"})
ZH.update({"analysing": "⏳ 分析中……", "copy_link": "复制链接", "permalink": "本次分析的链接"})
MESSAGES["en"].update({
    "probabilities": "Class probabilities", "curve_title": "Per-word sentiment: {score}",
    "accuracy": "test accuracy {ours:.1%} on {task}", "accuracy_paper": "paper {paper:.1f}%",
    "caption": "{model} · {task} · checkpoint sha256 {sha} · commit {commit}",
    "plot_score": "score", "graph_words": "words", "graph_layer": "layer {layer} (k-max)",
    "graph_position": "position {position}", "graph_value": "mean activation",
    "graph_edges": "show all {total} edges (now the {per_node} strongest per node: {shown})",
    "graph_map_note": ("Top-layer map {map} is shown because, of the top layer's {n} maps, it adds most to the logit of "
                       "the predicted class '{label}': {value:+.3f} (its output weights times its k-max values). "
                       "Pick another map above."),
    "graph_map_chosen": ("Top-layer map {map}, as picked: it adds {value:+.3f} to the logit of the predicted class "
                         "'{label}' (its output weights times its k-max values); map {best} adds most ({best_value:+.3f})."),
    "graph_map_choice": "Top-layer map shown, with what it adds to the logit of '{label}'",
    "graph_map_option": "map {map}: {value:+.3f}", "graph_map_best": " (adds most)",
    "graph_map_error": "There is no top-layer map {map} to draw.",
    "pyramid_level": "level {level}", "pyramid_axis": "level t (span length)", "pyramid_beliefs": "level belief γ_t",
    "pyramid_gates": "; gates left {left:.2f}, right {right:.2f}, compose {compose:.2f}",
})
MESSAGES["zh"].update({
    "probabilities": "各类别概率", "curve_title": "逐词情感：{score}",
    "accuracy": "{task} 测试准确率 {ours:.1%}", "accuracy_paper": "论文 {paper:.1f}%",
    "caption": "{model} · {task} · 模型文件 sha256 {sha} · 提交 {commit}",
    "plot_score": "分数", "graph_words": "词", "graph_layer": "第 {layer} 层（k-max）",
    "graph_position": "位置 {position}", "graph_value": "平均激活值",
    "graph_edges": "显示全部 {total} 条边（现在每个节点最强的 {per_node} 条：{shown} 条）",
    "graph_map_note": ("显示顶层特征映射 {map}，因为在顶层 {n} 个特征映射中，它对预测类别“{label}”的 logit 贡献最大：{value:+.3f}"
                       "（输出权重乘以它的 k-max 值）。可在上方选择其他特征映射。"),
    "graph_map_chosen": ("顶层特征映射 {map}（所选）：它对预测类别“{label}”的 logit 贡献 {value:+.3f}（输出权重乘以它的 k-max 值）；"
                         "贡献最大的是特征映射 {best}（{best_value:+.3f}）。"),
    "graph_map_choice": "显示的顶层特征映射，及其对“{label}”logit 的贡献",
    "graph_map_option": "特征映射 {map}：{value:+.3f}", "graph_map_best": "（贡献最大）",
    "graph_map_error": "没有可绘制的顶层特征映射 {map}。",
    "pyramid_level": "第 {level} 层", "pyramid_axis": "层 t（跨度长度）", "pyramid_beliefs": "层置信度 γ_t",
    "pyramid_gates": "；门控：左 {left:.2f}，右 {right:.2f}，组合 {compose:.2f}",
})

# The models' views send their words as core.views.Text: a code and its parameters. English is core's own
# wording (core.views.VIEW_TEXT); here are the same codes in Chinese. A code missing here is a KeyError in the
# tests over every view of every model, never English on the Chinese page.
VIEW_TEXT_ZH = {
    "curve_native": "模型自己在每个词上的输出",
    "curve_probe": "模型的分类器单独作用于每个词（探针：模型自身从不这样用它）",
    "curve_prefix": "对每个前缀的预测",
    "score_expected": "期望情感（-2..2）", "score_probability": "P({label})", "score_top": "最高类别概率",
    "axis_word": "词", "axis_layer": "层",
    "tcnn_layers": "每个词处的局部情感，逐层（Lei 等 2015，图 5）", "tcnn_layer": "第 {layer} 层", "tcnn_all_layers": "全部层",
    "mrnn_trajectory": "隐藏状态轨迹（mRNN，参见论文图 2）",
    "mrnn_pca": ("本句隐藏状态 h_1..h_T 的主成分分析（已中心化）：PC1 占方差的 {pc1:.0%}，PC2 占 {pc2:.0%}；"
                 "符号取使最后一个词的 x、y >= 0；颜色 = 每个词之后的{score}"),
    "mrnn_ordinal": "每个词之后的序数输出（§4.2，以 0.5 为界解码）", "mrnn_ordinal_curve": "P(y > {k})",
    "mrnn_sigmoid": "sigmoid 输出",
    "dcnn_graph_all": "诱导特征图（§4.2），全部特征映射", "dcnn_graph_map": "诱导特征图（§4.2），顶层特征映射 {map}",
    "dcnn_detectors": "本句中最强的第一层特征检测器（窗口宽度 {width}，§5.5）",
    "dcnn_map": "特征映射", "dcnn_row": "行", "dcnn_activation": "激活值", "dcnn_ngram": "n 元组",
    "adasent_pyramid": "AdaSent 金字塔：单元 (t, j) 覆盖第 j..j+t-1 个词；颜色 = 分类器 g 单独作用于该单元（探针）",
    "agt_attention": "各层对词的注意力（每层最小-最大归一化，图 4）", "agt_attention_value": "归一化注意力 d_{{l,n}}",
    "agt_selected": "每层选中的词（归一化注意力 > 0.95，§3.1）及组成的短语",
    "agt_selected_words": "选中的词", "agt_phrases": "短语（连续选中的词）", "agt_loose": "宽松选择（> 0.5）",
    "agt_gates": "每层变换门的活动（图 3）", "agt_gate_mean": "各单元 T_l 的均值", "agt_gate": "变换门 T_l",
}


def view_text(value, lang: str) -> str:
    """One string of a view in the UI language: a Text worded from its code (its parameters too: a class
    name as the UI's, a Text in turn); anything else (a word, a label like L1) as it is."""
    if lang != "zh" or not isinstance(value, Text):
        return value
    params = {k: view_text(v, lang) if isinstance(v, Text) else label_name(v, lang) if k == "label" else v
              for k, v in value.params.items()}
    return VIEW_TEXT_ZH[value.code].format(**params)


def word_view(view, lang: str):
    """A copy of a view with its titles, axis names, legends and column heads in the UI language."""
    texts = {name: view_text(getattr(view, name), lang) for name in
             ("title", "score_label", "y_label", "x_title", "value_label", "axis_note") if hasattr(view, name)}
    if hasattr(view, "curves"):
        texts["curves"] = {view_text(k, lang): v for k, v in view.curves.items()}
    if hasattr(view, "columns"):
        texts["columns"] = [view_text(c, lang) for c in view.columns]
    return dataclasses.replace(view, **texts)


MESSAGES["en"].update({"col_paper": "paper's accuracy", "comparison": "The predictions side by side", "panels": "What each model composed",
                       "all_models": "All five"})
MESSAGES["zh"].update({"col_paper": "论文准确率", "comparison": "各模型的预测并排比较", "panels": "每个模型组合出了什么", "all_models": "全部五个"})

# the examples' labels (demo/examples.py names each by what it shows), in both languages
EXAMPLE_KINDS = {
    "negation": ("negation", "否定"), "double negation": ("double negation", "双重否定"),
    "contrast": ("contrast", "转折"), "intensifier": ("intensifier", "程度副词"),
    "Lei et al. 2015 §3": ("Lei et al. 2015 §3", "Lei 等 2015 §3"), "DCNN Fig. 1": ("DCNN Fig. 1", "DCNN 图 1"),
    "AdaSent (MR example)": ("AdaSent (MR example)", "AdaSent（MR 例句）"), "AGT Fig. 4": ("AGT Fig. 4", "AGT 图 4"),
    "中文 转折": ("Chinese, contrast", "中文 转折"), "中文 否定": ("Chinese, negation", "中文 否定"),
    "中文 双重否定": ("Chinese, double negation", "中文 双重否定"), "中文 程度": ("Chinese, intensifier", "中文 程度"),
}


def example_labels(lang: str) -> list[str]:
    """The examples' labels ("negation: The movie is not good.") in the UI language."""
    return [f"{EXAMPLE_KINDS.get(what, (what, what))[lang == 'zh']}{'：' if lang == 'zh' else ': '}{sentence}"
            for what, sentence in EXAMPLES]


SOURCE_KINDS_ZH = {"directory": "目录", "hub": "Hub", "bundled": "随应用附带"}


def source_text(source: str, lang: str) -> str:
    """Where a checkpoint came from (core.checkpoints.hub: "bundled: <path>", "hub: <repo>@<rev>", "directory: <path>")."""
    kind, _, where = source.partition(": ")
    return f"{SOURCE_KINDS_ZH[kind]}：{where}" if lang == "zh" and kind in SOURCE_KINDS_ZH and where else source

# -- interventions (the Lab's intervention menu) -------------------------------------------------------------
EN.update({"intervention": "Intervention", "intervention_index": "Which (layer, map, level, order or word)",
           "intervention_info": "One model: switch a part of it off, and see the prediction before and after"})
ZH.update({"intervention": "干预", "intervention_index": "哪一个（层、特征映射、层级、阶数或词）",
           "intervention_info": "单个模型：关闭它的某个部分，比较干预前后的预测"})
MESSAGES["en"].update({
    "intervention_none": "none (the model as trained)", "plain_model": "as trained", "intervened": "with {intervention}",
    "intervention_summary": "### {before} → **{after}** with `{intervention}`",
    "intervention_tests": "What it tests: {section}",
    "intervention_needs_one": "Interventions apply to one model at a time: choose a model to use one.",
})
MESSAGES["zh"].update({
    "intervention_none": "无（训练得到的模型）", "plain_model": "训练所得", "intervened": "施加 {intervention}",
    "intervention_summary": "### {before} → **{after}**（施加 `{intervention}`）",
    "intervention_tests": "它检验的是：{section}",
    "intervention_needs_one": "干预一次只作用于一个模型：请先选择一个模型。",
})
# What each intervention tests, in Chinese (English: the model's InterventionSpec.section)
INTERVENTION_SECTIONS_ZH = {
    "tensor_cnn.consecutive": "§3 式 3：非连续 n 元组（λ → 0 时只剩连续 n 元组）",
    "tensor_cnn.max_order": "§4：各阶 n 元组 1..n 相加（去掉高于该序号的阶）",
    "tensor_cnn.layer_off": "§4：每层的池化特征都进入 softmax（去掉其中一层）",
    "mrnn.additive": "§4.1 式 5：关闭乘性项 xᵀAh（即 §3.2、§5.2 的加性 RNN）",
    "mrnn.cut_at": "§3.2：循环状态携带到目前为止的语义（在该词之前把 h 重置为 h_0）",
    "dcnn.map_off": "§4.2：顶层某个特征映射对预测的贡献（把它置零）",
    "dcnn.max_pool": "§3.2 式 4：动态 k-max 池化（换成 k = 1 的最大池化）",
    "dcnn.no_folding": "§3.6：折叠把相邻两行相加（改为每行单独读取）",
    "adasent.level_only": "§门控网络：各层级的共识（只读一个层级）",
    "adasent.uniform_gates": "§门控网络：γ_t = p(H=t | x)（换成均匀权重）",
    "adasent.fixed_local_gates": "式 5、7：每个单元的局部门（在某一层级固定为各 1/3）",
    "agt.uniform_attention": "式 4-6：某层对词的注意力（改为均匀）",
    "agt.gates_open": "式 7-8：某层的变换门 T_l（固定全开：y_l = f(...)）",
    "agt.gates_closed": "式 7-8：某层的变换门 T_l（固定关闭：y_l = y_{l-1}）",
    "agt.skip_only": "§3.2：所有门关闭，只剩跳连路径：y = s+_0，即“只用 s+_0”的核心",
}

# -- owners (demo/owners.py, core/owners.py): whose jobs, tasks and models these are --------------------------
TRAIN_ERRORS_ZH["too_many_jobs"] = "你已有 {max_jobs} 个训练任务在等待或进行中；请等其中一个完成，或取消一个"
MESSAGES["en"] |= {"owner_key_bad": "an owner key is a string of {min_chars} to {max_chars} characters",
                   "owner_key_taken": "this session already acts for an owner key; keep the key you passed"}
MESSAGES["zh"] |= {"owner_key_bad": "所有者密钥须为 {min_chars} 到 {max_chars} 个字符的字符串",
                   "owner_key_taken": "此会话已使用你传入的所有者密钥；请保存该密钥"}

# -- training on a Ray cluster (core.training.remote.RAY_TEXT): errors and notices ---------------------------
TRAIN_ERRORS_ZH |= {
    "ray_unreachable": "无法连接 {address} 上的训练集群；请稍后再试",
    "ray_lost": "{address} 上的训练集群在第 {epoch} / {epochs} 轮之后断开了；请在集群恢复后重新开始训练",
    "ray_worker_lost": "训练集群已 {resumes} 次丢失此任务的工作进程；请重新开始训练",
    "ray_resumed": "它在训练集群上的工作进程丢失了；已在集群上从第 {epoch} 轮之后继续",
    "ray_local": "无法连接 {address} 上的训练集群：改为在本机训练",
    "ray_lost_local": "{address} 上的训练集群断开了：已在本机从第 {epoch} 轮之后继续",
}
