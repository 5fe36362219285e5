"""UI text in English and Chinese.

Static labels (component labels, headings) go through `gr.I18n` and follow the browser's language.
Text the callbacks write (the result summary, notices, legends, table headers) is worded here, in
the language of the request's Accept-Language header, so both halves of the page agree. Core's notices
and input errors arrive as codes with parameters (core.predict.Notice): English from core's own
wording, Chinese from NOTICES_ZH.
"""

import dataclasses
import re

import gradio as gr

from core.predict import Notice
from core.probes import PROBE_NOTICE_TEXT
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
    "pyramid_reduced": "文本超过 {max_words} 个词，AdaSent 金字塔以较低精度发送：不含门控值，分数保留三位小数。",
}
LANGUAGE_NAMES_ZH = {"en": "英文", "zh": "中文"}

# core.probes' problems with user cases (PROBE_NOTICE_TEXT) in Chinese: the same codes and parameters
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
    """A problem with probe cases from core.probes in the UI language."""
    return notice.format(PROBE_NOTICES_ZH, LANGUAGE_NAMES_ZH) if lang == "zh" else notice.format(PROBE_NOTICE_TEXT)


def label_name(label: str, lang: str) -> str:
    return LABELS_ZH.get(label, label) if lang == "zh" else label


def model_name(key: str) -> str:
    return MODEL_NAMES.get(key, key)


def task_name(task: str, lang: str) -> str:
    return TASK_NAMES.get(lang, TASK_NAMES["en"]).get(task, task)


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
    "graph_map_note": ("Top-layer map {map} is shown because, of all the top layer's maps, it adds most to the logit of "
                       "the predicted class '{label}' (its output weights times its k-max values)."),
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
    "graph_map_note": "显示顶层特征映射 {map}，因为在顶层所有特征映射中，它对预测类别“{label}”的 logit 贡献最大（输出权重乘以它的 k-max 值）。",
    "pyramid_level": "第 {level} 层", "pyramid_axis": "层 t（跨度长度）", "pyramid_beliefs": "层置信度 γ_t",
    "pyramid_gates": "；门控：左 {left:.2f}，右 {right:.2f}，组合 {compose:.2f}",
})

# The models' views carry English titles and axis names (core/models/*.py); the Chinese UI words them here:
# exact strings first, then patterns with their numbers. A string missing here stays English, which the e2e
# test over the Chinese page catches.
VIEW_TEXT_ZH = {
    "Local sentiment at each word, per layer (Lei et al. 2015, Fig. 5)": "每个词处的局部情感，逐层（Lei 等 2015，图 5）",
    "Hidden-state trajectory (mRNN, cf. paper Fig. 2)": "隐藏状态轨迹（mRNN，参见论文图 2）",
    "Ordinal outputs after each word (§4.2, decoded at 0.5)": "每个词之后的序数输出（§4.2，以 0.5 为界解码）",
    "Layer attention over the words (min-max normalised per layer, Fig. 4)": "各层对词的注意力（每层最小-最大归一化，图 4）",
    "Words selected per layer (normalised attention > 0.95, §3.1) and composed phrases":
        "每层选中的词（归一化注意力 > 0.95，§3.1）及组成的短语",
    "Transform-gate activity per layer (Fig. 3)": "每层变换门的活动（图 3）",
    "AdaSent pyramid: unit (t, j) covers words j..j+t-1; colour = the classifier g on the unit alone (a probe)":
        "AdaSent 金字塔：单元 (t, j) 覆盖第 j..j+t-1 个词；颜色 = 分类器 g 单独作用于该单元（探针）",
    "Induced feature graph (§4.2), all maps": "诱导特征图（§4.2），全部特征映射",
    "the model's own per-word output": "模型自己在每个词上的输出",
    "the model's classifier applied to each word alone (a probe: the model never does this)":
        "模型的分类器单独作用于每个词（探针：模型自身从不这样用它）",
    "prediction on each prefix": "对每个前缀的预测",
    "expected sentiment (-2..2)": "期望情感（-2..2）", "top class probability": "最高类别概率",
    "all layers": "全部层", "mean T_l over units": "各单元 T_l 的均值", "sigmoid output": "sigmoid 输出",
    "transform gate T_l": "变换门 T_l", "normalised attention d_{l,n}": "归一化注意力 d_{l,n}",
    "layer": "层", "word": "词", "selected words": "选中的词", "phrases (runs of selected words)": "短语（连续选中的词）",
    "loose selection (> 0.5)": "宽松选择（> 0.5）", "map": "特征映射", "row": "行", "activation": "激活值",
    "n-gram": "n 元组",
}
VIEW_PATTERNS_ZH = [
    (re.compile(r"Induced feature graph \(§4\.2\), top-layer map (\d+)"), lambda m: f"诱导特征图（§4.2），顶层特征映射 {m[1]}"),
    (re.compile(r"Strongest first-layer feature detectors in this sentence \(width (\d+), §5\.5\)"),
     lambda m: f"本句中最强的第一层特征检测器（窗口宽度 {m[1]}，§5.5）"),
    (re.compile(r"layer (\d+)"), lambda m: f"第 {m[1]} 层"),
    (re.compile(r"P\((.+)\)"), lambda m: f"P({label_name(m[1], 'zh')})"),
    (re.compile(r"PCA of this sentence's hidden states h_1\.\.h_T \(centred, torch\.linalg\.svd\): PC1 (\S+), "
                r"PC2 (\S+) of their variance; signs chosen so the last word has x, y >= 0; colour = (.+) after each word"),
     lambda m: (f"本句隐藏状态 h_1..h_T 的主成分分析（已中心化）：PC1 占方差的 {m[1]}，PC2 占 {m[2]}；"
                f"符号取使最后一个词的 x、y >= 0；颜色 = 每个词之后的{view_text(m[3], 'zh')}")),
]
MAP_TITLE = re.compile(r"top-layer map (\d+)$")  # the DCNN's one-map feature graph (core/models/dcnn.py)


def view_text(value: str, lang: str) -> str:
    """One string of a model's view in the UI language."""
    if lang != "zh" or not isinstance(value, str):
        return value
    if value in VIEW_TEXT_ZH:
        return VIEW_TEXT_ZH[value]
    for pattern, word in VIEW_PATTERNS_ZH:
        if match := pattern.fullmatch(value):
            return word(match)
    return value


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
    """Where a checkpoint came from (core.hub: "bundled: <path>", "hub: <repo>@<rev>", "directory: <path>")."""
    kind, _, where = source.partition(": ")
    return f"{SOURCE_KINDS_ZH[kind]}：{where}" if lang == "zh" and kind in SOURCE_KINDS_ZH and where else source
