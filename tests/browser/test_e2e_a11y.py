"""The Lab for every student, in a real browser: axe-core (WCAG 2.0/2.1 A and AA) finds nothing on it before and
after "all five" (`make a11y` checks every tab, width and language: reports/a11y.md), the whole path works from the
keyboard alone with the focus always visible, and a visitor who asked for less motion gets none."""

import pytest
from playwright.sync_api import expect

from demo.i18n import model_name, t
from tools.bench.a11y import new_page, open_tab, open_tables, run_probes, violations
from tools.bench.browser import settle_after_click

TEXT = "The acting is great, but the plot is dull."


def assert_no_violations(page) -> None:
    found = violations(page)
    assert not found, [(v["rule"], n["target"], n["html"], n["message"]) for v in found for n in v["nodes"]]


@pytest.mark.parametrize(("width", "locale"), [(390, "en-US"), (1400, "zh-TW")])
def test_axe_finds_no_violation_on_the_lab_before_and_after_all_five(browser, url, width, locale):
    page = new_page(browser, url, locale, width, 900)
    assert_no_violations(page)
    settle_after_click(page, TEXT)
    open_tables(page)  # every figure's table shown, so that axe checks them too
    figures = page.locator("#result figure.view").count()
    assert figures > 2
    expect(page.locator("#result figure.view > details.figure-data[open] table")).to_have_count(figures)
    assert_no_violations(page)
    page.context.close()


def test_axe_finds_no_violation_on_a_phone_s_probes_after_the_suite(browser, url):
    """The suite's tables at 390 px (they fit the width: test_e2e_probes_phone.py) after a run."""
    page = new_page(browser, url, "en-US", 390, 844)
    open_tab(page, "probes", "en")
    run_probes(page)
    assert_no_violations(page)
    page.context.close()


def focus_is_visible(page) -> str:
    """The focused element's description, once it shows a focus ring of at least 2 px (ui.CSS :focus-visible)."""
    ring = page.evaluate(
        """() => { const e = document.activeElement, s = getComputedStyle(e);
          return [e.matches(':focus-visible'), s.outlineStyle, parseFloat(s.outlineWidth), e.tagName + '#' + e.id] }"""
    )
    assert ring[0] and ring[1] != "none" and ring[2] >= 2, ring
    return ring[3]


def tab_to(page, where: str, back: bool = False, most: int = 80) -> int:
    """Press Tab (Shift+Tab: `back`) until the focused element `e` satisfies the JS condition `where`; the presses."""
    for presses in range(1, most + 1):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        if page.evaluate(f"() => {{ const e = document.activeElement; return !!({where}); }}"):
            focus_is_visible(page)
            return presses
    raise AssertionError(f"{most} presses of Tab never reached {where}")


def test_the_lab_from_the_keyboard_alone(browser, url):
    """Type, analyse, switch model and method, open a figure's table and a panel, copy a link: no mouse."""
    page = new_page(browser, url, "en-US", 1280, 1000)
    assert tab_to(page, "e.closest('#sentence')") <= 10  # past the tabs' names, the first control
    page.keyboard.type(TEXT)
    page.keyboard.press("Tab")
    assert focus_is_visible(page) == "BUTTON#run"
    page.keyboard.press("Enter")
    expect(page.locator(f"#result .lab-result[data-text='{TEXT}'] .model-panel")).to_have_count(5)

    tab_to(page, "e.closest('#model')")
    for _ in range(3):  # the list opens on the first; All five, Tensor CNN, mRNN, DCNN
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.locator("#model input")).to_have_value(model_name("dcnn"))
    # Gradio's dropdown lets go of the focus once it has chosen; the next Tab goes on from it, not from the top
    page.keyboard.press("Tab")
    focus_is_visible(page)
    assert page.evaluate("() => !!document.activeElement.closest('#task, #lang, #intervention')")
    # Gradio's radio buttons are each a stop of their own (no shared name, so no arrow keys): Tab, then Space
    tab_to(page, "e.closest('#attr-method') && e.value === 'gradient_x_input'")
    page.keyboard.press("Space")
    panel = page.locator("#result .model-panel")
    expect(panel).to_have_count(1)
    expect(panel.locator(".occlusion-head")).to_contain_text(t("attr_name_gradient_x_input", "en").split(" (")[0])

    tab_to(page, "e.matches('#result details.figure-data > summary')")
    page.keyboard.press("Enter")
    expect(page.locator("#result details.figure-data").first).to_have_attribute("open", "")
    page.keyboard.press("Tab")  # the table scrolls from the keyboard: it takes the focus
    assert focus_is_visible(page) == "TABLE#"
    tab_to(page, "e.matches('#result .model-panel > summary')")
    page.keyboard.press("Enter")  # the model's panel folds
    expect(panel).not_to_have_attribute("open", "")

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab_to(page, "e.id === 'copy-link'", back=True)
    page.keyboard.press("Enter")
    link = page.locator("#permalink")
    expect(link).to_contain_text("model=dcnn")
    expect(link).to_contain_text("method=gradient_x_input")
    expect(link).to_contain_text("text=The+acting")
    page.context.close()


@pytest.mark.parametrize("motion", ["reduce", "no-preference"])
def test_less_motion_stops_the_analysing_pulse(browser, url, motion):
    page = browser.new_context(reduced_motion=motion).new_page()
    page.goto(url)
    page.locator("#run").wait_for()
    page.evaluate("document.body.classList.add('lab-busy')")  # as from the click until the answer
    pulse = page.locator("#analysing p").first.evaluate("e => getComputedStyle(e).animationName")
    assert pulse == ("none" if motion == "reduce" else "lab-pulse")
    page.context.close()
