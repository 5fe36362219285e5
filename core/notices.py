"""Every coded message core gives: a `Notice` (something the user should know) and `NoticeError`, the one
base class of every refusal (bad input, a bad file, a job that cannot be taken). Each carries a code and its
parameters; str(err) is its English wording, and the front end words the same codes in the page's language
(demo/i18n.py). Each part of core that refuses input subclasses NoticeError with its own TEXT table."""

from dataclasses import dataclass, field

# What core tells the user, as codes with parameters; the English wording here serves the CLI, the JSON API
# and the logs, and demo/i18n.py words the same codes for the page (English from here, Chinese its own).
NOTICE_TEXT = {
    # input that cannot be analysed (InputError)
    "not_a_string": "{name} must be a string, got {type}",
    "empty": "Please type a sentence: the text is empty.",
    "no_words": "No words found in the text.",
    "unknown_language": "unknown language '{lang}'; choose 'en' or 'zh'",
    "unknown_task": "no model is loaded for task '{task}'; available: {available}",
    "nothing_loaded": "no model is loaded for task '{task}': no checkpoint is loaded at all",
    "unknown_model": "model '{model}' is not available for task '{task}'; available: {available}",
    "one_model_expected": "'all' is every model, not one: use compare (the /compare endpoint, --model all)",
    "unknown_method": "unknown attribution method '{method}'; available: {available}",
    "bad_intervention": "an intervention is a name, or a name and an index as 'name:index', got '{value}'",
    "unknown_intervention": "model {model} has no intervention '{intervention}'; available: {available}",
    "no_index": "intervention '{intervention}' of model {model} takes no index",
    "index_out_of_range": "intervention '{intervention}' needs a {what} from {lowest} to {highest}, got {value}",
    # notices on a prediction
    "surrogates_replaced": "Invalid characters (lone surrogates) were replaced with \ufffd.",
    "text_cut": "The text was cut to its first {max_chars} characters.",
    "words_cut": "Only the first {max_words} words were analysed.",
    "language_mismatch": (
        "The text looks {text_lang} but task {task} is {task_lang}; most words will be unknown to its models."
    ),
    "all_unknown": "None of these words is in the model's vocabulary: the prediction is the model's prior.",
    "some_unknown": "{unknown} of {total} words are unknown to this model (marked in the highlight).",
    "attribution_skipped": (
        "Word attributions ({methods}) are computed for texts of up to {max_words} words; "
        "this one has {words}, so no word is highlighted."
    ),
    "intervention": "Intervention “{intervention}” on {model}: the model was changed, not only observed.",
    "pyramid_reduced": (
        "The text has more than {max_words} words, so AdaSent's pyramid is sent at reduced "
        "resolution: without its gates, scores rounded to 3 decimals."
    ),
}
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
LANGUAGE_PARAMS = ("text_lang", "task_lang")  # parameters that hold a language code, worded as its name
# a "methods" parameter holds attribution method codes (core.analysis.attribution.METHODS), worded as names
METHOD_NAMES = {
    "occlusion": "leave-one-word-out",
    "gradient_x_input": "gradient × input",
    "integrated_gradients": "integrated gradients",
    "smoothgrad": "SmoothGrad",
}


@dataclass
class Notice:
    """Something the user should know, as data: `code` (a key of NOTICE_TEXT) and its `params`."""

    code: str
    params: dict = field(default_factory=dict)

    def format(self, templates: dict[str, str] = NOTICE_TEXT, language_names: dict[str, str] = LANGUAGE_NAMES) -> str:
        """The notice in words: its template filled in, language and method codes as names, lists joined."""
        values = {
            k: language_names.get(v, v)
            if k in LANGUAGE_PARAMS
            else ", ".join(METHOD_NAMES.get(m, m) for m in v)
            if k == "methods"
            else ", ".join(v)
            if isinstance(v, list)
            else v
            for k, v in self.params.items()
        }
        return templates[self.code].format(**values)


class NoticeError(ValueError):
    """A request core cannot answer; `notice` (a code of TEXT and its params) says why, and str(err) is its
    English wording. Each part of core that refuses input subclasses it with its own TEXT."""

    TEXT = NOTICE_TEXT

    def __init__(self, code: str, **params):
        self.notice = Notice(code, params)
        super().__init__(self.notice.format(self.TEXT))

    @property
    def code(self) -> str:
        return self.notice.code

    @property
    def params(self) -> dict:
        return self.notice.params


class InputError(NoticeError):
    """Input we cannot analyse."""


class InterventionError(InputError):
    """An intervention a model does not offer, or an index it does not have."""
