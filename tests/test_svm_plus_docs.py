"""docs/svm_plus.md's worked example runs as written, on the study's data mirror, and its claim holds."""
import re
from pathlib import Path

from conftest import LOCAL_MIRROR, require_mirror

PAGE = Path(__file__).resolve().parents[1] / "docs" / "svm_plus.md"


def test_the_worked_example_runs_and_its_claim_holds(tmp_path, monkeypatch):
    require_mirror()
    monkeypatch.setenv("WSVM_DATA_MIRROR", str(LOCAL_MIRROR))
    monkeypatch.setenv("WSVM_DATA_DIR", str(tmp_path))
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1
    namespace = {}
    exec(compile(blocks[0], str(PAGE), "exec"), namespace)  # its assert is the page's claim
    assert round(namespace["error_plus"], 3) == 0.223 and round(namespace["error_svc"], 3) == 0.280
