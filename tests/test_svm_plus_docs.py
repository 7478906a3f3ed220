"""docs/svm_plus.md's worked examples run as written, one after the other, on the study's data mirror, and their
claims hold."""
import re
from pathlib import Path

from conftest import LOCAL_MIRROR, require_mirror

PAGE = Path(__file__).resolve().parents[1] / "docs" / "svm_plus.md"


def test_the_worked_example_runs_and_its_claim_holds(tmp_path, monkeypatch):
    require_mirror()
    monkeypatch.setenv("WSVM_DATA_MIRROR", str(LOCAL_MIRROR))
    monkeypatch.setenv("WSVM_DATA_DIR", str(tmp_path))
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 2
    namespace = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)  # their asserts are the page's claims
    assert round(namespace["error_plus"], 3) == 0.223 and round(namespace["error_svc"], 3) == 0.280
    assert round(namespace["error_rule"], 3) == 0.221
    assert namespace["by_rule"].best_params_ == {"C": 0.25, "gamma_plus": 0.25, "priv_gamma": 16.0}
    assert round(1.0 - namespace["by_rule"].best_score_, 3) == 0.313
