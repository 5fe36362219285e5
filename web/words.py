"""What web/ says to a visitor. The words are the page's (demo.i18n.t, demo/locales/), handed to web's parts when
app.py builds them: web holds no words of its own, only a refusal's locale key and its parameters, and the
visitor's language, read here from the request's Accept-Language."""

from collections.abc import Callable

Words = Callable[..., str]  # (key, lang, **params) -> the key's words in `lang`, filled in: demo.i18n.t


def request_lang(request) -> str:
    """The browser's first language (Accept-Language): 'zh' (Simplified Chinese), 'zh-TW' or 'zh-HK'
    (Traditional: Taiwan's, Hong Kong's and Macau's), else 'en'."""
    headers = getattr(request, "headers", None) or {}
    accept = headers.get("accept-language", "") if hasattr(headers, "get") else ""
    first = accept.split(",")[0].strip().lower()
    if not first.startswith("zh"):
        return "en"
    if first.startswith(("zh-hk", "zh-mo", "zh-hant-hk", "zh-hant-mo")):
        return "zh-HK"
    return "zh-TW" if first.startswith(("zh-tw", "zh-hant")) else "zh"
