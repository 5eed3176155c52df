"""`compute_scores` without --json: an undefined alpha is said to be undefined, never printed as
"None", "nan" or 0 (REALSumm's imported labels have one annotator per summary: no pairable unit)."""

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_undefined_alpha_is_named_as_such_in_the_text_output(realsumm, capsys):
    call_command("compute_scores", "realsumm", "--resamples", "200")
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("alpha: ACU level undefined, summary level undefined (")
    assert "None" not in last and "nan" not in last.lower()


def test_defined_alphas_are_printed_as_the_json_holds_them(capsys):
    import json

    from hits.services.simulate import simulate_crowd

    from .crowd_data import demo_dataset, published_batch

    dataset = demo_dataset()
    batch = published_batch(dataset)
    simulate_crowd(batch, workers=3, accuracy=0.85, seed=2)
    call_command("compute_scores", "demo", "--round", str(batch.pk), "--resamples", "200", "--json")
    alpha = json.loads(capsys.readouterr().out)["alpha"]
    call_command("compute_scores", "demo", "--round", str(batch.pk), "--resamples", "200")
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(
        f"alpha: ACU level {alpha['acu_level']:.4f}, summary level {alpha['summary_level']:.4f}; run "
    )
