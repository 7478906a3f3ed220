"""Open the views that ``wsvm-span ui`` prints in a real browser (Debian's chromium, headless, through
chromedriver) and keep what it shows: a screenshot of each (PNG) and what its page holds, read from the DOM
(JSON): the column headers and the cells of every run row of the table; the chart titles and how many points
each scatter chart draws.

    .venv/bin/python scripts/mlflow_ui_screenshots.py --table URL --charts URL --out results/ui

tests/test_mlflow_ui.py asserts on the JSON; the screenshots are kept for people. Needs chromium and
chromium-driver (apt) and selenium (requirements.lock). A tracking server that asks for a password (the
one scripts/local-cluster starts) gets the user and password of the file that WSVM_MLFLOW_CREDENTIALS
names, sent by the browser with every request (never on a command line or in an address).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from pathlib import Path

from wsvm_span.study.tracking import use_credentials_file

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (2400, 1400)
# the UI loads runs asynchronously: how long to wait for an element, and for charts to settle
WAIT_S = 90
SETTLE_S = 3

# What the page holds, read in the browser: the table's header cells (ag-grid: one per column, its col-id
# is MLflow's column key, e.g. metrics.`span_rule`) and, per row, the cells by column; the charts' titles
# and the points of each scatter plot (plotly draws one path.point per point).
TABLE_JS = """
const headers = Array.from(document.querySelectorAll('.ag-header-cell[col-id]')).map(h => ({
  id: h.getAttribute('col-id'), text: h.innerText.trim()}));
const rows = {};
for (const row of document.querySelectorAll('.ag-center-cols-container .ag-row, .ag-pinned-left-cols-container .ag-row')) {
  const index = row.getAttribute('row-index');
  rows[index] = rows[index] || {};
  for (const cell of row.querySelectorAll('.ag-cell[col-id]')) rows[index][cell.getAttribute('col-id')] = cell.innerText.trim();
}
return {headers: headers, rows: Object.values(rows)};
"""
CHARTS_JS = """
const charts = [];
for (const plot of document.querySelectorAll('.js-plotly-plot')) {
  let card = plot.parentElement, title = '';
  while (card && !title) {
    const t = card.querySelector('[title]');
    title = t ? t.getAttribute('title') : '';
    card = card.parentElement;
  }
  charts.push({title: title, points: plot.querySelectorAll('.scatterlayer path.point').length,
               bars: plot.querySelectorAll('.barlayer path').length});
}
return charts;
"""


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WINDOW[0]},{WINDOW[1]}", "--force-device-scale-factor=1", "--lang=en-US"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    if use_credentials_file():
        user, password = os.environ["MLFLOW_TRACKING_USERNAME"], os.environ["MLFLOW_TRACKING_PASSWORD"]
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        # Chromium's DevTools protocol adds the header to every request of the page, the UI's own XHRs too
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Basic {token}"}})
    return driver


def wait_for(driver, what: str, condition):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(lambda d: condition(d), message=f"waited {WAIT_S} s for {what}")


def table_view(driver, url: str, out: Path, min_rows: int) -> dict:
    driver.get(url)
    wait_for(driver, f"{min_rows} run rows", lambda d: len(d.execute_script(TABLE_JS)["rows"]) >= min_rows)
    time.sleep(SETTLE_S)
    return _save(driver, out, "runs_table", driver.execute_script(TABLE_JS))


def chart_view(driver, url: str, out: Path, min_charts: int) -> dict:
    driver.get(url)
    wait_for(driver, f"{min_charts} charts with points",
             lambda d: sum(c["points"] > 0 for c in d.execute_script(CHARTS_JS)) >= min_charts)
    time.sleep(SETTLE_S)
    return _save(driver, out, "charts", {"charts": driver.execute_script(CHARTS_JS)})


def _save(driver, out: Path, name: str, facts: dict) -> dict:
    driver.save_screenshot(str(out / f"{name}.png"))
    facts = {"url": driver.current_url, "text": driver.find_element("tag name", "body").text, **facts}
    (out / f"{name}.json").write_text(json.dumps(facts, indent=1), encoding="utf-8")
    return facts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", required=True, help="a view's table address (printed by wsvm-span ui)")
    p.add_argument("--charts", required=True, help="the same view's charts address")
    p.add_argument("--min-rows", type=int, default=1, help="wait until the table shows this many runs")
    p.add_argument("--min-charts", type=int, default=1, help="wait until this many charts draw points")
    p.add_argument("--out", type=Path, required=True, help="folder for the PNG and JSON files")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    driver = browser()
    try:
        table_view(driver, args.table, args.out, args.min_rows)
        chart_view(driver, args.charts, args.out, args.min_charts)
    except Exception:
        driver.save_screenshot(str(args.out / "failure.png"))
        (args.out / "failure.txt").write_text(driver.find_element("tag name", "body").text, encoding="utf-8")
        raise
    finally:
        driver.quit()
    print(json.dumps({name: str(args.out / f"{name}.png") for name in ("runs_table", "charts")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
