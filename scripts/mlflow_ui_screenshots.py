"""Screenshots of the MLflow UI as a user meets it, taken in a real browser (Debian's chromium, headless,
through chromedriver): the models of one data set side by side in the runs table, with their
hyperparameters and estimators as columns, and the chart view plotting span-rule and 5-fold CV against
the test error.

What a user does, the script does: open the experiment in the "Model training" view (MLflow 3 opens in
its GenAI view otherwise), filter the grid models of one data set, expand the data set's parent run,
pick the columns, switch to the chart view and add two scatter charts. For each view it saves the
screenshot (PNG) and the text the page shows (TXT), which tests/test_mlflow_ui.py inspects.

    .venv/bin/python scripts/mlflow_ui_screenshots.py --experiment wsvm-span/exp1 --dataset breast_cancer \\
        --out results/ui [--uri http://127.0.0.1:5000]

Needs chromium and chromium-driver (apt) and selenium (requirements.lock).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.parse
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1920, 1200)
# the UI loads runs asynchronously: how long to wait for an element, and for charts to settle
WAIT_S = 60
SETTLE_S = 3
PARAMS = ["log2_C_plus", "log2_C_minus", "A", "B", "log2_C"]
METRICS = ["test_error", "span_rule", "span_bound", "cv_error", "loo_error"]
HIDDEN_ATTRIBUTES = ["Dataset", "Source", "Models"]
SCATTERS = [("test_error", "span_rule"), ("test_error", "cv_error")]


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WINDOW[0]},{WINDOW[1]}", "--force-device-scale-factor=1", "--lang=en-US"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


class Page:
    def __init__(self, driver):
        from selenium.webdriver.support.ui import WebDriverWait

        self.d = driver
        self.wait = WebDriverWait(driver, WAIT_S)

    def find(self, css: str, text: str | None = None):
        """The first visible element matching css (and containing text), waiting for it to appear."""
        from selenium.webdriver.common.by import By

        def pick(d):
            for el in d.find_elements(By.CSS_SELECTOR, css):
                if el.is_displayed() and (text is None or text in el.text):
                    return el
            return False

        return self.wait.until(pick, message=f"no visible {css!r}" + (f" with text {text!r}" if text else ""))

    def click(self, css: str, text: str | None = None):
        el = self.find(css, text)
        self.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
        el.click()
        return el

    def close_assistant(self):
        """The assistant panel takes a third of the window; a user closes it once."""
        from selenium.webdriver.common.by import By

        for el in self.d.find_elements(By.CSS_SELECTOR, "button[aria-label=Close]"):
            if el.is_displayed():
                el.click()
                time.sleep(1)
                return

    def save(self, out: Path, name: str, regions: dict[str, str]) -> dict:
        """Screenshot, page text and where some elements are: ``regions`` maps a name to a CSS selector;
        the JSON gets the bounding box (screenshot pixels) of the visible elements of each."""
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.d).move_to_element(self.d.find_element("tag name", "h2")).perform()  # no tooltips
        time.sleep(SETTLE_S)
        png, txt, boxes = out / f"{name}.png", out / f"{name}.txt", out / f"{name}.json"
        self.d.save_screenshot(str(png))
        txt.write_text(self.d.find_element("tag name", "body").text, encoding="utf-8")
        rects = {key: self.d.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.getBoundingClientRect())"
            ".filter(r => r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < window.innerHeight)"
            ".map(r => [Math.floor(r.left), Math.floor(r.top), Math.ceil(r.right), Math.ceil(r.bottom)])", css)
            for key, css in regions.items()}
        boxes.write_text(json.dumps({"url": self.d.current_url, "regions": rects}, indent=1), encoding="utf-8")
        return {"png": str(png), "txt": str(txt), "json": str(boxes)}


def runs_table(page: Page, uri: str, experiment_id: str, dataset: str, out: Path) -> dict:
    search = f"tags.`wsvm.kind` = 'model' and tags.dataset = '{dataset}'"
    query = urllib.parse.urlencode({"workflowType": "machine_learning", "searchFilter": search},
                                   quote_via=urllib.parse.quote)
    page.d.get(f"{uri}/#/experiments/{experiment_id}/runs?{query}")
    page.find("a", dataset)  # the data set's parent run is listed
    page.close_assistant()
    # expand the parent run(s) of the data set: their children are the grid models
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    for button in page.d.find_elements(By.CSS_SELECTOR, "button[data-component-id*=runnamecellrenderer]"):
        button.click()
    page.find("a", f"{dataset} m")  # a model run (named "<dataset> m<index>") is shown
    # columns: the hyperparameters and the estimators, instead of dataset, source and models
    page.click("[data-testid=column-selection-dropdown]", "Columns")
    wanted = {**{n: False for n in HIDDEN_ATTRIBUTES}, **{n: True for n in [*PARAMS, *METRICS]}}
    for name, shown in wanted.items():
        search_box = page.find("input[placeholder='Search columns']")  # the menu re-renders on every toggle
        search_box.send_keys(Keys.CONTROL, "a")
        search_box.send_keys(name)
        time.sleep(1)
        menu = page.find("[data-radix-popper-content-wrapper]")
        # a tree node per column; the search also lists e.g. grid.<name> and t_<name>: match the whole title
        for node in menu.find_elements(By.CSS_SELECTOR, ".du-bois-light-tree-treenode"):
            title = node.find_elements(By.CSS_SELECTOR, ".du-bois-light-tree-title")
            if title and title[0].text.strip() == name:
                box = node.find_element(By.CSS_SELECTOR, ".du-bois-light-tree-checkbox")
                if ("du-bois-light-tree-checkbox-checked" in box.get_attribute("class").split()) != shown:
                    box.click()
                    time.sleep(1)
                break
    page.find("input[placeholder='Search columns']").send_keys(Keys.ESCAPE)  # close the column menu
    return page.save(out, "runs_table", {"headers": ".ag-header-cell", "run_names": ".ag-cell a[href*='/runs/']"})


def chart_view(page: Page, out: Path) -> dict:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    # the view switch (table | chart | artifacts); the chart view keeps the table's filter and rows
    switch = page.d.find_element(By.CSS_SELECTOR, "input[name=runs-view-mode][value=CHART]")
    switch.find_element(By.XPATH, "./ancestor::label").click()
    page.find("[data-testid=experiment-view-compare-runs-add-chart]")
    for x, y in SCATTERS:
        page.click("[data-testid=experiment-view-compare-runs-add-chart]")
        page.click("[data-testid=experiment-view-compare-runs-chart-type-scatter]")
        dialog = page.find("[role=dialog]")
        selects = [el for el in dialog.find_elements(By.CSS_SELECTOR, "input[id^=dubois-select]") if el.is_enabled()]
        for box, value in zip(selects[:2], (x, y)):
            box.find_element(By.XPATH, "./ancestor::div[contains(@class, 'select-selector')]").click()
            box.send_keys(value)
            time.sleep(0.5)
            box.send_keys(Keys.ENTER)
            time.sleep(0.5)
        page.click("[data-testid=experiment-view-compare-runs-chart-modal-confirm]")
        time.sleep(1)
    # MLflow adds a bar chart per metric on its own: show only the charts of the test error
    search = page.find("input[placeholder='Search metric charts']")
    search.send_keys("test_error")
    return page.save(out, "charts", {"chart_titles": "h4[title]"})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--uri", default="http://127.0.0.1:5000", help="the MLflow tracking server")
    p.add_argument("--experiment", required=True, help="MLflow experiment name, e.g. wsvm-span/exp1")
    p.add_argument("--dataset", required=True, help="data set whose models are compared")
    p.add_argument("--out", type=Path, required=True, help="folder for the PNG and TXT files")
    args = p.parse_args(argv)
    from mlflow.tracking import MlflowClient

    exp = MlflowClient(args.uri).get_experiment_by_name(args.experiment)
    if exp is None:
        raise SystemExit(f"no experiment {args.experiment!r} at {args.uri}")
    args.out.mkdir(parents=True, exist_ok=True)
    driver = browser()
    try:
        page = Page(driver)
        shots = {"runs_table": runs_table(page, args.uri, exp.experiment_id, args.dataset, args.out),
                 "charts": chart_view(page, args.out)}
    except Exception:
        driver.save_screenshot(str(args.out / "failure.png"))
        raise
    finally:
        driver.quit()
    print(json.dumps(shots, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
