"""hits 0022 (pairs allocation) goes back only while no follow-up HIT needs it: refused with a
clear message and nothing of it undone otherwise."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from hits.allocation.policy import PAIRS
from hits.models import HIT

from .crowd_data import batch_of, demo_dataset

LATEST = MigrationLoader(None).graph.leaf_nodes("hits")  # back to the newest after each test
BEFORE_PAIRS = [("hits", "0021_i42c_gold_pool")]


def applied() -> set[str]:
    return {name for app, name in MigrationExecutor(connection).loader.applied_migrations if app == "hits"}


@pytest.mark.django_db(transaction=True)
def test_going_back_before_pairs_is_refused_while_follow_ups_exist_and_works_without():
    dataset = demo_dataset()
    batch = batch_of(dataset, allocation=PAIRS)
    first = batch.hits.order_by("pk").first()
    HIT.objects.create(batch=batch, summary_id=first.summary_id, follow_up=1, acu_ids=first.acu_ids, acu_count=1)
    try:
        with pytest.raises(CommandError, match=r"Cannot go back before hits 0022: 1 follow-up HITs of pairs batches"):
            call_command("migrate", "hits", "0021_i42c_gold_pool", verbosity=0)
        assert "0022_h43p_pairs_allocation" in applied()  # its reversal rolled back whole
        assert HIT.objects.filter(follow_up=1).count() == 1
        call_command("migrate", "hits", LATEST[0][1], verbosity=0)
        HIT.objects.filter(follow_up__gt=0).delete()
        call_command("migrate", "hits", "0021_i42c_gold_pool", verbosity=0)
        assert "0022_h43p_pairs_allocation" not in applied()
    finally:
        MigrationExecutor(connection).migrate(LATEST)
    assert {"0022_h43p_pairs_allocation", "0023_h43p_gold_first_priority"} <= applied()


@pytest.mark.django_db(transaction=True)
def test_hits_0025_records_the_summaries_an_existing_triage_batch_decided_wholly():
    from .test_pairs_triage import judge_run, triage_batch

    dataset = demo_dataset()
    untriaged = batch_of(dataset, allocation=PAIRS, gold_share=0.2, seed=7)
    gold = set(untriaged.hits.filter(gold_answers__isnull=False).values_list("summary_id", flat=True))
    decided = dataset.documents.first().summaries.exclude(pk__in=gold).first().pk
    run, _ = judge_run(dataset, decided)
    batch = triage_batch(dataset, run)
    assert list(batch.decided_summaries.values_list("pk", flat=True)) == [decided]
    batch.decided_summaries.clear()  # as a batch made before 0025
    try:
        call_command("migrate", "hits", "0024_h43p_triage_allow_not_for_ranking", verbosity=0)
        call_command("migrate", "hits", "0025_h43r_decided_summaries", verbosity=0)
        assert list(batch.decided_summaries.values_list("pk", flat=True)) == [decided]
    finally:
        MigrationExecutor(connection).migrate(LATEST)
