"""Markup typed into the page is shown as text, never run: the payloads' highlight in every model's panel
reads as typed, nothing sets window.__pwned, no dialog opens and no element is injected."""

import json

PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">good film',
    "<script>window.__pwned=2</script> not bad",
    '"><svg onload="window.__pwned=3"> **bold** [link](javascript:window.__pwned=4)',
]
SHOWN = """() => [...document.querySelectorAll('.occlusion-text')].map(e => e.innerText.replaceAll('\\n', ''))"""


def test_payloads_in_the_page_are_text_never_run(open_page, url):
    page = open_page(url)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for payload in PAYLOADS:
        page.fill("#sentence textarea", payload)
        page.click("#run")
        # every model's highlight shows the payload, character for character, as text
        page.wait_for_function(
            f"({SHOWN})().length > 0 && ({SHOWN})().every(t => t.endsWith({json.dumps(payload)}))", timeout=60_000
        )
        assert page.evaluate("window.__pwned") is None and not dialogs
        injected = "#summary img, #summary svg, #summary script, #notices img, .occlusion img, .occlusion svg[onload]"
        assert page.locator(injected).count() == 0
    assert not page.external, f"the page reached outside: {page.external[:3]}"
