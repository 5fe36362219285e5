"""UI text in English and Chinese.

Static labels (component labels, headings) go through `gr.I18n` and follow the browser's language.
Text the callbacks write (the result summary, notices, legends, table headers) is worded here, in
the language of the request's Accept-Language header, so both halves of the page agree. Core's notices
and input errors arrive as codes with parameters (core.predict.Notice): English from core's own
wording, Chinese from NOTICES_ZH.
"""

import gradio as gr

from core.attribution import ON_DEMAND
from core.predict import Notice
from core.probes import PROBE_NOTICE_TEXT

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

# -- word attribution methods (demo/attribution_view.py, core/attribution.py) ------------------------
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
    "attr_best": "Most faithful in the deletion test (docs/attribution.md, {n} test sentences per task):",
    "attr_best_row": "{model} on {task}: **{method}** (AOPC {aopc:.3f}; random order {random:.3f})",
    "attr_not_measured": "No deletion test has been measured for these checkpoints (`make attribution`).",
}
MESSAGES["zh"] |= {
    "attr_highlight": "{method}：预测“{label}”依赖哪些词",
    "attr_note_gradient": "颜色 = 按{method}计算的该词对“{label}”logit 的贡献，按最大值（{scale:.3g}）缩放。",
    "attr_completeness": "积分梯度：{steps} 步，完备性误差 {error:.1%}（分数之和与 logit 相对全零词向量的变化之差）。",
    "attr_scores": "各方法的逐词分数（正数：支持“{label}”）",
    "attr_word": "词",
    "attr_best": "删除测试中最忠实的方法（docs/attribution.md，每个任务 {n} 个测试句）：",
    "attr_best_row": "{model}（{task}）：**{method}**（AOPC {aopc:.3f}；随机顺序 {random:.3f}）",
    "attr_not_measured": "尚未对这些模型文件做删除测试（`make attribution`）。",
}
