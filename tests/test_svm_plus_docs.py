"""docs/svm_plus.md's worked examples run as written, one after the other, on the study's data mirror, and their
claims hold; its `wsvm-span select --privileged` command line runs on the files they write."""
import json
import pickle
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LOCAL_MIRROR, require_mirror

PAGE = Path(__file__).resolve().parents[1] / "docs" / "svm_plus.md"


def test_the_worked_example_runs_and_its_claim_holds(tmp_path, monkeypatch):
    require_mirror()
    monkeypatch.setenv("WSVM_DATA_MIRROR", str(LOCAL_MIRROR))
    monkeypatch.setenv("WSVM_DATA_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # the selection example writes its data files here
    page = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 3
    namespace = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)  # their asserts are the page's claims
    assert round(namespace["error_plus"], 3) == 0.223 and round(namespace["error_svc"], 3) == 0.280
    assert round(namespace["error_rule"], 3) == 0.221
    assert namespace["by_rule"].best_params_ == {"C": 0.25, "gamma_plus": 0.25, "priv_gamma": 16.0}
    assert round(1.0 - namespace["by_rule"].best_score_, 3) == 0.313
    searches = namespace["searches"]
    assert searches["loo_rule"].best_params_ == {"C": 0.25, "gamma_plus": 0.25, "priv_gamma": 16.0}
    assert searches["cv_error"].best_params_ == {"C": 0.25, "gamma_plus": 0.25, "priv_gamma": 1.0}
    assert round(1.0 - searches["cv_error"].best_score_, 3) == 0.323
    printed = re.search(r"```text\n(.*?)```", page, flags=re.S).group(1)
    for criterion, search in searches.items():
        test_error = 1.0 - search.score(namespace["split"].X_test, namespace["split"].y_test)
        assert (f"{criterion}: {search.best_params_}, {criterion} = {1.0 - search.best_score_:.3f}, "
                f"test error {test_error:.3f}") in printed

    # the page's command line, on the files its example wrote
    (command,) = re.findall(r"```bash\n(.*?)```", page, flags=re.S)
    argv = shlex.split(command)
    assert argv[0] == "wsvm-span"
    done = subprocess.run([sys.executable, "-m", "wsvm_span", *argv[1:]], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 8 + 2 and lines[-1].startswith("Accuracy = ")
    C, gamma, gamma_plus, priv_gamma, rate = (float(v) for v in lines[-2].split())
    saved = json.loads((tmp_path / "svm_plus.pkl.json").read_text())
    assert saved["params"] == {"C": C, "gamma": gamma, "gamma_plus": gamma_plus, "priv_gamma": priv_gamma}
    assert saved["loo_rule"] == pytest.approx(1.0 - rate / 100.0, abs=1e-6)
    model = pickle.loads((tmp_path / "svm_plus.pkl").read_bytes())
    assert model.get_params()["priv_gamma"] == priv_gamma
