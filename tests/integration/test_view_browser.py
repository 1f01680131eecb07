"""`place view` in a real browser: Debian's headless Chromium driven through chromedriver
(selenium), the site opened from `file://` as a reader would.

The smoke run, a copy of it with one answer changed (so the two runs pair and differ) and
an answer-free population job: the scorecard renders and its cells open their items, a
filter narrows the item table, an item page shows both worlds, the comparison of two runs
renders, and the page logs no error. A screenshot of every page is kept in the test's tmp
directory. `make test` installs Chromium (tests/slurm/install-chromium.sh); without it (or
without selenium) these tests skip, except in CI, where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from place.cli import main

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke" / "smollm2-135m"
STATE = ROOT / "experiments" / "population" / "study" / "0_state"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WAIT = 15


def _unavailable() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the dev extra: pip install -e '.[dev]')"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return (
            "Chromium or its chromedriver is not installed (apt-get install chromium "
            "chromium-driver; `make test` does it as root, tests/slurm/install-chromium.sh)"
        )
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("browser")
    copy = base / "smoke-copy"
    shutil.copytree(SMOKE, copy, ignore=shutil.ignore_patterns("llm_cache.sqlite"))
    path = copy / "records" / "queries.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines):
        rec = json.loads(line)
        key = (rec["query"], rec["condition"], rec["mode"], rec["world"])
        if key == ("s-correction", "PLACE", "primary", "a"):
            rec["outcome"], rec["raw_answer"] = ["07:15"], "07:15."
            lines[n] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = base / "site"
    assert main(["view", str(SMOKE), str(copy), str(STATE), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    why = _unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(why + "; CI installs it with `make test`")
        pytest.skip(why)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not download drivers
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


class Page:
    """The browser on the site: open a route, wait for what it renders, keep a screenshot."""

    def __init__(self, driver: Any, site: Path, shots: Path) -> None:
        self.driver = driver
        self.url = (site / "index.html").as_uri()
        self.shots = shots
        shots.mkdir(parents=True, exist_ok=True)

    def open(self, route: str, css: str) -> Any:
        self.driver.get(f"{self.url}#{route}")
        return self.wait(css)

    def wait(self, css: str) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, WAIT).until(
            ec.presence_of_element_located((By.CSS_SELECTOR, css))
        )

    def all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        assert self.driver.save_screenshot(str(path))
        assert path.stat().st_size > 1000
        return path

    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]


@pytest.fixture
def page(browser: Any, site: Path, tmp_path: Path) -> Page:
    browser.get_log("browser")  # start each test with an empty console
    return Page(browser, site, tmp_path / "screenshots")


def test_the_run_header_and_tables_render(page: Page) -> None:
    page.open("/", "main h1")
    assert len(page.all("main table tbody tr")) == 3
    page.shot("home")
    page.open("/run/0", "img.plot")
    text = page.driver.find_element("css selector", "main").text
    assert "6e185549d8fa5684f55fa11568eda054b773f523883fabc954e87a1e47dcd009" in text
    assert "b8b8c99168f37761776924d951ec493bd643b010" in text  # the git commit
    images = page.all("img.plot")
    assert images and all(
        page.driver.execute_script("return arguments[0].naturalWidth", img) > 0 for img in images
    )  # the copied PNGs load from file://
    page.shot("header")
    page.open("/run/0/tables", "table.results")
    assert len(page.all("table.results")) == 8
    page.shot("tables")
    page.open("/run/2", "#answer-free-banner")
    page.shot("header-answer-free")
    assert page.errors() == []


def test_the_scorecard_renders_and_a_cell_opens_its_items(page: Page) -> None:
    card = page.open("/run/0/scorecard", "#scorecard")
    rows = card.find_elements("css selector", "tbody tr")
    assert [r.find_element("css selector", "td").text for r in rows] == [
        "Native",
        "CSS",
        "QASC",
        "PLACE",
    ]
    page.shot("scorecard")
    cell = next(
        a
        for a in page.all("#scorecard td.cell a")
        if "/aoep/CSS/exposure" in a.get_attribute("href")
    )
    assert cell.text == "1/14"
    cell.click()
    page.wait("table.aoep-items")
    assert "1/14 passed" in page.wait("#cell-count").text
    items = page.all("table.aoep-items tbody tr")
    assert len(items) == 14
    page.shot("scorecard-cell")
    items[0].find_element("css selector", "a").click()
    page.wait("#worlds")
    page.shot("scorecard-item")
    assert page.errors() == []


def test_a_filter_narrows_the_item_table_and_a_header_sorts_it(page: Page) -> None:
    from selenium.webdriver.support.ui import Select

    page.open("/run/0/items", "#items")
    total = page.wait("#item-count").text
    assert total.startswith("144 of 144 rows")
    Select(page.wait("#f-kind")).select_by_value("query")
    Select(page.wait("#f-cond")).select_by_value("PLACE")
    assert page.wait("#item-count").text == "8 of 144 rows"
    Select(page.wait("#f-status")).select_by_value("fail")
    count = page.wait("#item-count").text
    failing = page.all("#items tbody tr")
    assert count == f"{len(failing)} of 144 rows" and len(failing) < 8
    assert all(r.get_attribute("data-status") == "fail" for r in failing)
    Select(page.wait("#f-dist")).select_by_value("none")
    assert page.wait("#item-count").text == count  # the smoke run has no distractors
    page.shot("items-filtered")
    Select(page.wait("#f-status")).select_by_value("")
    page.wait("#items th[data-key='id']").click()
    ids = [r.find_elements("css selector", "td")[1].text for r in page.all("#items tbody tr")]
    assert ids == sorted(ids) and len(ids) == 8
    page.wait("#items th[data-key='id']").click()
    ids = [r.find_elements("css selector", "td")[1].text for r in page.all("#items tbody tr")]
    assert ids == sorted(ids, reverse=True)
    page.shot("items-sorted")
    page.open("/run/2/items", "#items")
    header = page.wait("#items th[data-key='ans']").text
    assert "answer-free run" in header
    page.shot("items-answer-free")
    assert page.errors() == []


def test_an_item_page_shows_both_worlds(page: Page) -> None:
    from selenium.webdriver.support.ui import Select

    page.open("/run/0/items", "#items")
    Select(page.wait("#f-kind")).select_by_value("query")
    Select(page.wait("#f-cond")).select_by_value("CSS")  # the table keeps its filters
    page.wait("#f-text").send_keys("s-correction")
    assert page.wait("#item-count").text == "1 of 144 rows"
    link = next(
        a
        for a in page.all("#items tbody a")
        if "query%7Cs-correction%7CCSS" in a.get_attribute("href")
    )
    link.click()
    worlds = page.wait("#worlds").find_elements("css selector", "section.world")
    assert [w.find_element("css selector", "h3").text for w in worlds] == [
        "World a (the trajectory)",
        "World b (the causal pair)",
    ]
    assert all(w.find_elements("css selector", ".exposed") for w in worlds)
    assert page.all(".exposed.ineligible")  # what CSS's native read showed that fails E
    text = page.driver.find_element("css selector", "main").text
    assert "Why: ineligible: " in text and "raw answer" in text
    page.shot("item-query")
    checkpoint = page.open(
        "/run/0/item/" + "checkpoint%7Cc1-015%2Fpre-query%2Fs-correction%7CNative", "#worlds"
    )
    assert len(checkpoint.find_elements("css selector", "section.world")) == 2
    assert page.all("table.diff tr.missing")
    page.shot("item-checkpoint")
    page.open("/run/2/item/" + "forget%7Cc2-022%231%7CAppend%2FNative", "table.residue")
    assert page.all("table.residue mark")  # the forgotten value in the text that holds it
    page.shot("item-forget")
    page.open("/run/2/item/" + "query%7Cq01%7CPLACE", "#worlds")
    assert "answer-free run: no answer" in page.driver.find_element("css selector", "main").text
    page.shot("item-answer-free")
    assert page.errors() == []


def test_the_comparison_of_two_runs_renders(page: Page) -> None:
    page.open("/compare", "table.compare")
    text = page.driver.find_element("css selector", "main").text
    assert "Not paired" in text  # the population job is on another trajectory
    rows = page.all("table.compare tbody tr")
    joint = next(r for r in rows if r.text.startswith("PLACE JointSuccess"))
    assert "-0.125 [" in joint.text and "s-correction" in joint.text
    page.shot("compare")
    joint.find_element("css selector", "a").click()
    across = page.wait("#across")
    assert len(across.find_elements("css selector", "tbody tr")) == 2
    page.shot("across")
    assert page.errors() == []
