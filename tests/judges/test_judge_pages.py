"""The machine-judge pages: start from the dataset page (eager and queued), the progress JSON,
refusals as messages, the systems page for a triage round, triage batches from the page, the
workers page's machine QC column; leads only."""

import re

import pytest
from django.urls import reverse

from hits.models import HIT, Batch, JudgeRun, MachineJudgment
from hits.services.simulate import simulate_crowd
from scoring.machine import qc as machine_qc
from scoring.machine.runs import run_judge_run, start_judge_run

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch, scored

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def demo():
    return demo_dataset()


@pytest.fixture
def lead_client(client, lead):
    client.login(username=lead.username, password=PASSWORD)
    return client


def test_start_in_process_then_progress_json(lead_client, demo, eager_celery, settings):
    settings.LONG_TASKS_IN_BACKGROUND = False  # in the request (the background thread: below)
    response = lead_client.post(
        reverse("judge_start", args=[demo.pk]), {"judge": "lexical", "next": f"/datasets/{demo.pk}/"}
    )
    assert response.status_code == 302 and response["Location"] == f"/datasets/{demo.pk}/"
    run = JudgeRun.objects.get()
    assert run.status == "done" and run.created_by.username == "lena-lead"
    data = lead_client.get(reverse("judge_runs_json", args=[demo.pk])).json()
    row = data["runs"][0]
    assert (row["id"], row["status"], row["progress"], row["pairs_done"]) == (run.pk, "done", 1.0, run.pairs_total)
    assert row["accuracy"] == run.figures["classification"]["expert"]["accuracy"]
    assert {j["name"]: j["available"] for j in data["judges"]}["lexical"] is True
    page = lead_client.get(reverse("dataset_detail", args=[demo.pk])).content.decode()
    assert "finished: " in page and 'id="judge-form"' in page


@pytest.mark.django_db(transaction=True)
def test_in_process_a_judge_run_goes_to_a_background_thread_and_the_page_polls_it(
    lead_client, demo, eager_celery, settings, monkeypatch
):
    """In the embedded mode (run.sh) a judge run from the page answers at once and runs on a
    background thread (a learned judge with its cross-encoder trains for many minutes: the
    request used to hold the page that long); the progress JSON follows it to done."""
    import threading
    import time

    from scoring.machine import runs

    settings.LONG_TASKS_IN_BACKGROUND = True
    release, real, where = threading.Event(), runs.run_judge_run, {}

    def held(run_id):
        where["thread"] = threading.current_thread().name
        JudgeRun.objects.filter(pk=run_id).update(status="running", progress=0.3)
        release.wait(300)
        return real(run_id)

    monkeypatch.setattr(runs, "run_judge_run", held)
    response = lead_client.post(reverse("judge_start", args=[demo.pk]), {"judge": "lexical"}, follow=True)
    assert "started; its progress shows below" in response.content.decode()
    # The run is held until `release`: had the request run it, it would be done by now.
    run = JudgeRun.objects.get()
    assert run.in_background and run.status != "done" and not release.is_set()
    for _ in range(3000):
        if "thread" in where and JudgeRun.objects.get(pk=run.pk).progress:
            break
        time.sleep(0.05)
    row = lead_client.get(reverse("judge_runs_json", args=[demo.pk])).json()["runs"][0]
    assert where["thread"].startswith("task-") and (row["status"], row["progress"]) == ("running", 0.3)
    release.set()
    for _ in range(3000):  # up to 5 minutes on a busy machine; done in a second here
        row = lead_client.get(reverse("judge_runs_json", args=[demo.pk])).json()["runs"][0]
        if row["status"] != "running":
            break
        time.sleep(0.1)
    assert (row["status"], row["progress"], row["pairs_done"]) == ("done", 1.0, row["pairs"])


def test_a_background_judge_run_whose_server_stopped_reads_stopped(lead_client, demo, eager_celery, settings):
    """The embedded server stopped mid-run: the stored run says running forever. The page and the
    API say it stopped (no endless polling); a run of `judge_dataset` (its own process) never does."""
    settings.LONG_TASKS_IN_BACKGROUND = True
    left = start_judge_run(demo, "lexical")
    JudgeRun.objects.filter(pk=left.pk).update(status="running", progress=0.25, in_background=True)
    command = start_judge_run(demo, "lexical")  # judge_dataset runs it in its own process
    JudgeRun.objects.filter(pk=command.pk).update(status="running", progress=0.5)
    rows = {r["id"]: r for r in lead_client.get(reverse("judge_runs_json", args=[demo.pk])).json()["runs"]}
    assert rows[left.pk]["status"] == "stopped" and rows[left.pk]["status_display"].startswith("Stopped at 25%")
    assert rows[command.pk]["status"] == "running"
    assert lead_client.get(f"/api/judge-runs/{left.pk}/").json()["status"] == "stopped"


def test_start_with_a_broker_is_queued(lead_client, demo, django_capture_on_commit_callbacks):
    from unittest import mock

    with mock.patch("scoring.tasks.run_judge.delay") as delay, django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(reverse("judge_start", args=[demo.pk]), {"judge": "lexical"})
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and run.status == "queued"
    delay.assert_called_once_with(run.pk)
    assert lead_client.get(reverse("judge_runs_json", args=[demo.pk])).json()["runs"][0]["status"] == "queued"


def test_refusals_are_messages_and_write_nothing(lead_client, demo):
    response = lead_client.post(
        reverse("judge_start", args=[demo.pk]), {"judge": "nli", "model_dir": "/nowhere"}, follow=True
    )
    assert "is not a model directory" in response.content.decode()
    response = lead_client.post(reverse("judge_start", args=[demo.pk]), {"judge": "oracle"}, follow=True)
    assert "Unknown judge" in response.content.decode()
    response = lead_client.post(
        reverse("judge_start", args=[demo.pk]), {"judge": "lexical", "round": "999999"}, follow=True
    )
    assert "No such round" in response.content.decode()
    assert not JudgeRun.objects.exists() and not Batch.objects.filter(kind="machine").exists()


@pytest.mark.parametrize("role", ["author", "worker"])
def test_only_leads(client, demo, make_user, role):
    user = make_user(f"someone-{role}", role)
    client.login(username=user.username, password=PASSWORD)
    assert client.get(reverse("judge_runs_json", args=[demo.pk])).status_code == 403
    assert client.post(reverse("judge_start", args=[demo.pk]), {"judge": "lexical"}).status_code == 403
    assert not JudgeRun.objects.exists()


def test_triage_batch_from_the_systems_page(lead_client, demo, eager_celery):
    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    scored(demo)
    systems = lead_client.get(reverse("dashboard_systems", args=[demo.pk])).content.decode()
    assert "Machine: lexical v1" in systems and 'id="triage-table"' in systems
    # The held-out figures the run stored (issue 43), read, not computed: saving with its interval, no tau
    # with the demo's few systems.
    held = run.figures["triage_crossfit"]["held_out"]
    assert 'id="triage-crossfit"' in systems and held["system_kendall"] is None
    assert f"{held['agreement'][0]:.4f} [{held['agreement'][1]:.4f}, {held['agreement'][2]:.4f}]" in systems
    assert f"not shown: {held['systems']} systems, fewer than 20" in systems
    # On the 10 demo documents its system-level tau's CI reaches 0: not for ranking, refused unless overridden.
    assert run.figures["ranking"]["for_ranking"] is False and 'name="override"' in systems
    refused = lead_client.post(
        reverse("judge_triage_batch", args=[demo.pk, run.pk]), {"confidence": "0.7", "assignments": "2"}, follow=True
    )
    assert "not for ranking" in refused.content.decode() and not Batch.objects.filter(triage_run=run).exists()
    response = lead_client.post(
        reverse("judge_triage_batch", args=[demo.pk, run.pk]),
        {"confidence": "0.7", "assignments": "2", "override": "1"},
    )
    batch = Batch.objects.get(triage_run=run)
    assert response.status_code == 302 and response["Location"] == reverse("batch_detail", args=[batch.pk])
    assert lead_client.get(response["Location"]).status_code == 200
    hit = HIT.objects.filter(batch=batch).first()
    preview = lead_client.get(reverse("hit_preview", args=[hit.pk])).content.decode()
    assert preview.count('class="acu-row"') == hit.acu_count == len(hit.acu_ids)
    assert (
        hit.acu_count < hit.summary.document.reference.acus.count()
        or MachineJudgment.objects.filter(
            run=run, summary=hit.summary, probability__gt=0.3, probability__lt=0.7
        ).count()
        == hit.acu_count
    )
    # A refusal goes back with a message.
    response = lead_client.post(reverse("judge_triage_batch", args=[demo.pk, run.pk]), {"confidence": "2"}, follow=True)
    assert "Confidence c: Ensure this value is less than or equal to 0.999." in response.content.decode()


def test_the_systems_page_triage_form_reads_its_values_as_the_batch_form_does(lead_client, demo, eager_celery):
    """The confidence and the assignments of the systems page's triage batch are read by the batch
    form's and the API's field specs (hits.batch_fields): the same limits and messages, never a
    Python error; 0.9999, refused by the batch form and the API, is refused here too (review, issue 43)."""
    from hits.batch_fields import FIELDS

    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    url = reverse("judge_triage_batch", args=[demo.pk, run.pk])
    confidence, assignments = FIELDS["triage_confidence"].messages(), FIELDS["assignments"].messages()
    for posted, said in (
        ({"confidence": "abc"}, f"Confidence c: {confidence['invalid']}"),
        ({"confidence": "0.9999"}, f"Confidence c: {confidence['max_value']}"),
        ({"confidence": "0.5"}, f"Confidence c: {confidence['min_value']}"),
        ({"confidence": "0.7", "assignments": "x"}, f"Assignments per HIT: {assignments['invalid']}"),
        ({"confidence": "0.7", "assignments": "10"}, f"Assignments per HIT: {assignments['max_value']}"),
    ):
        page = lead_client.post(url, {**posted, "override": "1"}, follow=True).content.decode()
        assert said in page, posted
        assert "could not convert" not in page and "invalid literal" not in page
    assert not Batch.objects.filter(triage_run=run).exists()
    # Within the limits it is made; the assignments left out: the batch's default.
    lead_client.post(url, {"confidence": "0.999", "override": "1"})
    batch = Batch.objects.get(triage_run=run)
    assert (batch.triage_confidence, batch.assignments_per_hit) == (0.999, FIELDS["assignments"].default)


def test_the_triage_form_leaves_the_confidence_empty_when_the_run_suggests_none(lead_client, demo, eager_celery):
    """A run that suggests no triage (no c keeps the agreement) recommends no c: the form's
    confidence is empty with a placeholder saying so, and an empty confidence is refused with a
    message saying what to give (review, issue 43)."""
    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    scored(demo)
    none = {**run.figures["triage_suggestion"], "c": None, "decided_share": 0.0}
    JudgeRun.objects.filter(pk=run.pk).update(figures={**run.figures, "triage_suggestion": none})
    page = lead_client.get(reverse("dashboard_systems", args=[demo.pk])).content.decode()
    assert "no c keeps the agreement, so the judge should decide nothing" in page
    field = re.search(r'<input name="confidence"[^>]*>', page).group(0)
    assert "value=" not in field and 'placeholder="none suggested"' in field
    url = reverse("judge_triage_batch", args=[demo.pk, run.pk])
    refused = lead_client.post(url, {"confidence": "", "override": "1"}, follow=True).content.decode()
    assert "Confidence c: Give the confidence at which the judge run decides, between 0.51 and 0.999" in refused
    assert not Batch.objects.filter(triage_run=run).exists()


def test_the_api_run_carries_the_cross_fitted_triage_the_systems_page_shows(lead_client, demo, eager_celery):
    """GET /api/judge-runs/{id}/ gives the held-out figures stored with the run (issue 43): each
    fold's c with the documents it was chosen on and applied to, the saving with its interval, no
    tau with the demo's few systems; the response matches the OpenAPI schema's description."""
    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    stored = run.figures["triage_crossfit"]
    body = lead_client.get(f"/api/judge-runs/{run.pk}/").json()
    cross = body["triage_crossfit"]
    assert cross == stored and cross["folds"] and cross["held_out"]["system_kendall"] is None
    for fold in cross["folds"]:
        assert not set(fold["chosen_on"]) & set(fold["applied_to"]), fold  # never chosen where reported
    value, low, high = cross["held_out"]["saved_share"]
    applied = [d for fold in cross["folds"] for d in fold["applied_to"]]
    assert low <= value <= high and len(applied) == len(set(applied)) == cross["held_out"]["documents"] >= 2
    # The systems page shows the same figures.
    scored(demo)
    systems = lead_client.get(reverse("dashboard_systems", args=[demo.pk])).content.decode()
    agreement = cross["held_out"]["agreement"]
    assert f"{agreement[0]:.4f} [{agreement[1]:.4f}, {agreement[2]:.4f}]" in systems
    # The schema describes the object, not a free dict.
    schema = lead_client.get("/api/schema/?format=json").json()["components"]["schemas"]
    described = schema["TriageCrossfit"]["properties"]
    assert set(described) == set(cross) and "$ref" in str(described["held_out"])
    assert set(schema["CrossfitHeldOut"]["properties"]) == set(cross["held_out"])
    assert set(schema["CrossfitFold"]["properties"]) == set(cross["folds"][0])
    # The confidence the run suggests for new documents: in the API as stored, described by the schema,
    # on the systems page and as the standalone triage's default c.
    suggestion = body["triage_suggestion"]
    assert suggestion == run.figures["triage_suggestion"] and suggestion["chosen_on"] == "the labelled documents"
    assert set(schema["TriageSuggestion"]["properties"]) == set(suggestion)
    assert 'id="triage-suggestion"' in systems
    if suggestion["c"] is None:
        assert "no c keeps the agreement" in systems and 'name="confidence" placeholder="none suggested"' in systems
    else:
        assert f"c = {suggestion['c']}," in systems and f'name="confidence" value="{suggestion["c"]}"' in systems
    # A run stored before the cross-fitted figures (or without labels for them) reads null.
    JudgeRun.objects.filter(pk=run.pk).update(
        figures={k: v for k, v in run.figures.items() if k not in ("triage_crossfit", "triage_suggestion")}
    )
    before = lead_client.get(f"/api/judge-runs/{run.pk}/").json()
    assert before["triage_crossfit"] is None and before["triage_suggestion"] is None


def test_systems_page_of_a_triage_round_says_what_the_machine_decided(lead_client, demo, eager_celery):
    from hits.services.batches import publish_batch
    from hits.services.triage import create_triage_batch

    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    batch = publish_batch(create_triage_batch(run, confidence=0.7, assignments=2, allow_not_for_ranking=True))
    simulate_crowd(batch, workers=2, accuracy=0.9, seed=1)
    scored(demo, batch)
    page = lead_client.get(reverse("dashboard_systems", args=[demo.pk]) + f"?round={batch.pk}").content.decode()
    assert 'id="machine-decided"' in page and f"judge run {run.pk}, c = 0.7" in page
    assert "the crowd's majority decides the rest" in page  # fixed places; a pairs round: its posterior
    # an adaptive triage round: its posterior too (scoring.runs.pairs.posterior_labelled), as its scores read it
    adaptive = publish_batch(
        create_triage_batch(
            run, confidence=0.7, assignments=2, allow_not_for_ranking=True, name="adaptive", allocation="adaptive"
        )
    )
    simulate_crowd(adaptive, workers=3, accuracy=0.9, seed=1)
    scored(demo, adaptive)
    page = lead_client.get(reverse("dashboard_systems", args=[demo.pk]) + f"?round={adaptive.pk}").content.decode()
    assert 'id="machine-decided"' in page and "the crowd's posterior decides the rest" in page


def test_workers_page_shows_the_machine_qc_column(lead_client, demo, eager_celery):
    crowd = published_batch(demo, systems=list(demo.systems.all()))
    simulate_crowd(crowd, workers=3, accuracy=0.9, spammers=1, seed=3)
    scored(demo, crowd)
    page = lead_client.get(reverse("dashboard_workers", args=[demo.pk]) + f"?round={crowd.pk}").content.decode()
    assert "Machine QC" not in page  # no judge run yet
    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    page = lead_client.get(reverse("dashboard_workers", args=[demo.pk]) + f"?round={crowd.pk}").content.decode()
    assert "Machine QC" in page and f"judge run {run.pk}" in page and "more than 30%" in page
    flags, used = machine_qc.machine_flags(demo, crowd)
    assert used == run and flags
    for row in flags.values():
        assert f"{row['disagreements']} / {row['pairs']}" in page


def test_machine_qc_flags_are_computed_once_per_version_of_the_judgments(demo, eager_celery, monkeypatch):
    from hits.models import Assignment
    from hits.services import review

    crowd = published_batch(demo, systems=list(demo.systems.all()))
    simulate_crowd(crowd, workers=3, accuracy=0.9, spammers=1, seed=3)
    run_judge_run(start_judge_run(demo, "lexical").pk)
    computed = []
    real = machine_qc._flags
    monkeypatch.setattr(machine_qc, "_flags", lambda *a: computed.append(1) or real(*a))
    first, _ = machine_qc.machine_flags(demo, crowd)
    assert machine_qc.machine_flags(demo, crowd)[0] == first and len(computed) == 1  # the second read: cached
    done = Assignment.objects.filter(hit__batch=crowd, status="submitted").first()
    review.reject(assignment_id=done.pk, feedback="careless")  # the judgments changed: computed again
    again, _ = machine_qc.machine_flags(demo, crowd)
    assert len(computed) == 2 and again == real(demo, crowd, machine_qc.qc_run(demo))


def test_an_unreadable_model_directory_is_a_message_on_the_page_the_api_and_the_command(lead_client, demo):
    """A lead who pasted a long text as the nli judge's model directory got a 500 (the command a
    stack trace): checking for its config.json raised OSError (file name too long)."""
    from django.core.management import CommandError, call_command

    bad = "/" + "m" * 300
    response = lead_client.post(reverse("judge_start", args=[demo.pk]), {"judge": "nli", "model_dir": bad}, follow=True)
    assert response.status_code == 200 and "Cannot read the model directory" in response.content.decode()
    response = lead_client.post(
        f"/api/datasets/{demo.pk}/judge-runs/", {"judge": "nli", "model_dir": bad}, content_type="application/json"
    )
    assert response.status_code == 422 and "Cannot read the model directory" in response.json()["error"]
    with pytest.raises(CommandError, match="Cannot read the model directory"):
        call_command("judge_dataset", demo.name, "--judge", "nli", "--model-dir", bad)
    assert not JudgeRun.objects.exists()


def test_the_machine_table_puts_the_correlations_on_the_row_of_the_labels_they_are_measured_against(
    lead_client, demo, eager_celery
):
    """A run's τ with the human scores is measured against its calibration target (the expert
    labels) and shown on the run's first row, but the rows followed the keys of the stored
    classification as PostgreSQL's jsonb returns them (crowd before expert): the τ against the
    expert labels stood on the crowd row, the expert row marked target had none."""
    crowd = published_batch(demo, systems=list(demo.systems.all()))
    simulate_crowd(crowd, workers=3, accuracy=0.9, seed=3)
    scored(demo, crowd)
    run = run_judge_run(start_judge_run(demo, "lexical").pk)
    run.refresh_from_db()  # as the page reads it: from the database
    assert run.calibration["target"] == "expert" and set(run.figures["classification"]) == {"expert", "crowd"}
    page = lead_client.get(reverse("dashboard_systems", args=[demo.pk])).content.decode()
    table = page[page.index('id="machine-runs"') : page.index("</table>", page.index('id="machine-runs"'))]
    rows = re.findall(r'<tr id="machine-[^"]*">(.*?)</tr>', table, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    assert [c[2].split(" ")[0] for c in cells] == ["expert", "crowd"]  # the target first, as calibrated
    summary_tau = f"{run.figures['correlations']['summary']['kendall'][0]:.3f}"
    assert cells[0][2].startswith("expert (target") and cells[0][7].startswith(summary_tau), cells[0]
    assert cells[1][7] == "" and cells[1][8] == "", cells[1]
