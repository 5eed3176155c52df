"""The rating protocols flow as a lab that publishes its numbers meets it (RoSE §5): figures that
are undefined read as undefined, power says why it is missing, tied systems share a rank, a round
filled by rating batches is never replaced by an import, and ratings leave the ACU scores (and the
stored power of other rounds) as they are."""

import io
import json
import re

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import ProtocolRating, RatingRound, Summary
from hits import versions
from hits.models import Assignment, Batch
from hits.ratings.page import example_summaries
from hits.services import handout
from hits.services.submission import submit_assignment
from hits.views.worker import inhouse_worker
from scoring.models import ScoringRun
from scoring.protocols import cached
from scoring.runs.services import compute_scores
from scoring.stats.protocols import ranking

from .crowd_data import BATCH_FORM, demo_dataset, published_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def collected_round(dataset, name: str, systems=None, raters=("r1", "r2", "r3")) -> RatingRound:
    """A round of Prior and Ref-free ratings by named raters of every summary (of `systems`), each
    rater following the summary's length with an offset of their own."""
    round_ = RatingRound.objects.create(dataset=dataset, name=name, kind=RatingRound.Kind.CROWD)
    summaries = Summary.objects.filter(document__dataset=dataset)
    if systems:
        summaries = summaries.filter(system__name__in=systems)
    rows = []
    for summary in summaries:
        for k, rater in enumerate(raters):
            for protocol in ("prior", "ref_free"):
                score = min(5, max(1, 1 + summary.word_count // 20 + (k + len(protocol) + summary.pk) % 3 - 1))
                rows.append(ProtocolRating(round=round_, summary=summary, protocol=protocol, rater=rater, score=score))
    ProtocolRating.objects.bulk_create(rows)
    return round_


def protocols_page(client, dataset, round_) -> str:
    response = client.get(reverse("dashboard_protocols", args=[dataset.pk]), {"rating_round": round_.pk})
    assert response.status_code == 200
    return response.content.decode()


def test_one_system_round_reads_dash_for_undefined_correlations_and_says_why_it_has_no_power(client, lead):
    dataset = demo_dataset()
    system = dataset.systems.order_by("name").first().name
    round_ = collected_round(dataset, "one", systems=[system])
    client.force_login(lead)
    page = protocols_page(client, dataset, round_)
    # a correlation across one system is undefined: "–", not an empty value and interval "[, ]"
    assert "[, ]" not in page
    assert "1 systems" in page  # "10 documents × 1 systems"
    response = client.post(reverse("protocols_power", args=[dataset.pk]), {"rating_round": round_.pk})
    assert response.status_code == 302
    page = protocols_page(client, dataset, round_)
    notices = [line for line in page.splitlines() if "power-too-few" in line]
    assert notices and all("1 system rated" in line for line in notices), notices
    assert "fewer than the 10 a power analysis needs" not in page  # 10 documents were rated: not the reason
    assert 'id="protocol-power-table"' not in page  # no protocol has power: no table of headings alone
    out = io.StringIO()
    call_command("protocol_report", dataset.name, "--rating-round", str(round_.pk), "--power", stdout=out)
    assert "power Prior: none, 1 system rated (no pair of systems to tell apart)" in out.getvalue()


def test_a_round_of_one_document_shows_no_empty_intervals(client, lead):
    dataset = demo_dataset()
    round_ = collected_round(dataset, "few")
    ProtocolRating.objects.filter(round=round_).exclude(
        summary__document=dataset.documents.order_by("position").first()
    ).delete()
    client.force_login(lead)
    page = protocols_page(client, dataset, round_)
    assert "1 documents × 4 systems" in page and 'id="protocol-small-sample"' in page
    assert "[, ]" not in page


def test_tied_means_share_a_rank_listed_by_name():
    # 3.6533... three ways as sums of thirds round it (RoSE's Ref-free: ctrlsum, brio-ext, matchsum)
    thirds = ([11, 12, 10, 13], [12, 11, 13, 10], [13, 10, 12, 11])  # each system's sum: 46 thirds
    scores = [[row[i] / 3 for row in thirds] for i in range(4)]  # 4 documents x 3 systems
    rows = ranking(scores, ["c", "b", "a"], n_resamples=50, rng=0)
    assert [(r["rank"], r["system"], r["tied"]) for r in rows] == [(1, "c", True), (1, "b", True), (1, "a", True)]
    rows = ranking([[3.0, 2.0, 2.0, 1.0]] * 3, ["w", "y", "x", "z"], n_resamples=50, rng=0)
    assert [(r["rank"], r["system"], r["tied"]) for r in rows] == [
        (1, "w", False),
        (2, "y", True),
        (2, "x", True),
        (4, "z", False),
    ]


def test_replacing_a_round_that_rating_batches_fill_is_refused_with_a_message(client, lead, tmp_path):
    dataset = demo_dataset()
    client.force_login(lead)
    form = {
        **BATCH_FORM,
        "gold_share": 0,
        "allocation": "fixed",
        "name": "Prior study",
        "protocol": "prior",
        "rating_round": "study",
    }
    assert client.post(reverse("batch_new", args=[dataset.pk]), form).status_code == 302
    batch = Batch.objects.get(name="Prior study")
    path = tmp_path / "ratings.json"
    imported = collected_round(dataset, "imported")
    call_command("export_ratings", dataset.name, "--rating-round", str(imported.pk), "--output", str(path))

    with path.open("rb") as upload:
        response = client.post(
            reverse("protocols_import", args=[dataset.pk]), {"file": upload, "name": "study", "replace": "on"}
        )
    assert response.status_code == 302
    page = client.get(response.url).content.decode()
    assert "Nothing was imported" in page and "filled by rating batches" in page
    with pytest.raises(CommandError, match="filled by rating batches"):
        call_command("import_ratings", dataset.name, str(path), "--round-name", "study", "--replace")
    batch.refresh_from_db()
    assert batch.rating_round.name == "study" and batch.rating_round.kind == RatingRound.Kind.CROWD
    # a round no batch fills is replaced as before
    call_command(
        "import_ratings", dataset.name, str(path), "--round-name", "imported", "--replace", stdout=io.StringIO()
    )


def test_a_rating_submission_leaves_the_acu_scores_and_another_rounds_stored_power(
    client, lead, make_user, django_capture_on_commit_callbacks, eager_celery
):
    dataset = demo_dataset()
    run = compute_scores(dataset, n_resamples=100)
    studied = collected_round(dataset, "studied")
    cache.clear()
    stored = cached.power(studied, compute=True, store=True)
    assert stored and stored["prior"]["mean"]
    version = versions.current(dataset.pk)
    runs = ScoringRun.objects.filter(kind=ScoringRun.Kind.SCORES).count()

    client.force_login(lead)
    form = {
        **BATCH_FORM,
        "gold_share": 0,
        "allocation": "fixed",
        "name": "Ref-free study",
        "protocol": "ref_free",
        "rating_round": "next",
    }
    assert client.post(reverse("batch_new", args=[dataset.pk]), form).status_code == 302
    batch = Batch.objects.get(name="Ref-free study")
    assert client.post(reverse("batch_action", args=[batch.pk, "publish"])).status_code == 302
    client.force_login(make_user("rita-rater", "worker"))
    response = client.post(reverse("work_next"))
    token = response.url.rstrip("/").split("/")[-1]
    assignment = Assignment.objects.get(worker__external_id="rita-rater")
    answers = {str(s.pk): 3 for s in example_summaries(batch, assignment.hit.summary.document_id)}
    with django_capture_on_commit_callbacks(execute=True):
        stored_answers = client.post(
            reverse("task_submit", args=[token]), json.dumps({"answers": answers}), content_type="application/json"
        )
    assert stored_answers.status_code == 200 and stored_answers.json()["ok"]
    assert ProtocolRating.objects.filter(round__name="next").count() == len(answers)  # the round follows

    # ratings are no ACU judgments: the ACU scores run stays current, nothing is recomputed
    assert versions.current(dataset.pk) == version
    assert ScoringRun.objects.filter(kind=ScoringRun.Kind.SCORES).count() == runs
    assert ScoringRun.objects.filter(kind=ScoringRun.Kind.SCORES, dataset=dataset).first().pk == run.pk
    # and the other round's power, stored on a lead's click, is still read (cache gone)
    cache.clear()
    assert cached.power(studied) == stored


def test_a_protocol_with_one_rater_per_summary_says_why_it_has_no_alpha(client, lead):
    dataset = demo_dataset()
    round_ = collected_round(dataset, "single", raters=("r1",))
    client.force_login(lead)
    page = protocols_page(client, dataset, round_)
    rows = re.findall(r"<tr><td>(Prior|Ref-free)</td><td class=\"num\">([^<]*)</td>", page)
    assert rows == [("Prior", "–"), ("Ref-free", "–")]
    assert "while no summary has ratings from two raters" in page  # not only "a round of means"


def test_a_worker_rates_an_example_under_prior_before_seeing_its_article(worker):
    dataset = demo_dataset()
    # the order docs/protocols.md and the browser walk use: the Ref-free batch first, then Prior
    free = published_batch(dataset, protocol="ref_free", rating_round="study")
    prior = published_batch(dataset, protocol="prior", rating_round="study")
    assert (free.priority, prior.priority) == (0, 1)
    me = inhouse_worker(worker)
    seen: list[tuple[str, int]] = []
    while True:
        try:
            assignment = handout.next_assignment(me)
        except handout.NoWork:
            break
        hit = assignment.hit
        answers = {str(s.pk): 3 for s in example_summaries(hit.batch, hit.summary.document_id)}
        submit_assignment(assignment_id=assignment.pk, worker_id=me.pk, answers=answers)
        seen.append((hit.batch.protocol, hit.summary.document_id))
    assert len(seen) == 20
    for protocol, document in seen:
        if protocol == "prior":  # no Ref-free page of this example before it
            assert ("ref_free", document) not in seen[: seen.index((protocol, document))], seen


def test_a_reopened_prior_place_never_goes_to_a_worker_who_has_seen_the_example(worker, make_user):
    """Priority orders the pages; a Prior place that reopens later (a worker gave it back, an
    expiry, an extra place) must still skip a rater who held a page with the example's article or
    reference, submitted or not, in any batch of any protocol but Prior (docs/protocols.md)."""
    from hits.release import release

    dataset = demo_dataset()
    free = published_batch(dataset, protocol="ref_free", rating_round="study")
    acu = published_batch(dataset)
    me = inhouse_worker(worker)
    done = handout.next_assignment(me, free)
    answers = {str(s.pk): 3 for s in example_summaries(free, done.hit.summary.document_id)}
    submit_assignment(assignment_id=done.pk, worker_id=me.pk, answers=answers)
    given_up = handout.next_assignment(me, acu)  # an ACU page shows the reference's facts
    while given_up.hit.summary.document_id == done.hit.summary.document_id:
        release(Assignment.objects.filter(pk=given_up.pk))
        given_up = handout.next_assignment(me, acu)
    release(Assignment.objects.filter(pk=given_up.pk))  # held, never submitted
    seen = {done.hit.summary.document_id, given_up.hit.summary.document_id}

    prior = published_batch(dataset, protocol="prior", rating_round="study")
    rated = []
    while True:
        try:
            assignment = handout.next_assignment(me, prior)
        except handout.NoWork:
            break
        document = assignment.hit.summary.document_id
        answers = {str(s.pk): 3 for s in example_summaries(prior, document)}
        submit_assignment(assignment_id=assignment.pk, worker_id=me.pk, answers=answers)
        rated.append(document)
    examples = set(prior.hits.values_list("summary__document_id", flat=True))
    assert seen <= examples
    assert sorted(rated) == sorted(examples - seen)
    # a rater who has seen nothing still gets the examples this one was kept from
    fresh = inhouse_worker(make_user("fresh-rater", "worker"))
    kept = []
    while True:
        try:
            assignment = handout.next_assignment(fresh, prior)
        except handout.NoWork:
            break
        kept.append(assignment.hit.summary.document_id)
        release(Assignment.objects.filter(pk=assignment.pk))
        if len(kept) > len(examples):
            break
    assert seen <= set(kept)
