"""Ctrl-C of `judge_dataset` for every judge a run may use: the run is marked failed with
"Interrupted (Ctrl-C).", nothing of a judge that keeps no answers is stored (no judgments, no
model files), the command says so in one line (a CommandError, no stack trace) and the same
command then starts a clean new run; an llm run resumes. A Ctrl-C before a run started changes
nothing, and one just after a run stored itself does not fail that run. A second Ctrl-C while the
first is being recorded still leaves the run failed (and done if it had stored itself)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from hits.models import JudgeRun, MachineJudgment
from scoring.machine import runs
from scoring.machine.judges import learned, lexical, llm
from scoring.machine.judges.learned_models import run_folder

from .learned_data import tiny_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def judge(name, *args):
    out, err = StringIO(), StringIO()
    call_command("judge_dataset", "tiny", "--judge", name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def interrupted(name, *args) -> str:
    with pytest.raises(CommandError) as raised:
        judge(name, *args)
    return str(raised.value)


@pytest.fixture
def tiny(tmp_path, settings):
    settings.JUDGE_MODELS_DIR = str(tmp_path / "models")
    return tiny_dataset(tmp_path, "tiny", seed=3, documents=6)


def stopped_after_writing(self, work):
    """A judge's predict stopped by Ctrl-C after writing what a judge may have written by then
    (the learned judge's cross-encoder folds)."""
    run_folder(work.run_id).mkdir(parents=True)
    (run_folder(work.run_id) / "fold-0.bin").write_bytes(b"half")
    raise KeyboardInterrupt


class CtrlCAfterStoring:
    """runs.logger: a Ctrl-C just after the run stored itself (as it logs that it is done)."""

    def __getattr__(self, level):
        return getattr(runs.logging.getLogger(runs.__name__), level)

    def info(self, message, *args):
        if message.startswith("Judge run %s done"):
            raise KeyboardInterrupt


# The nli judge fails the same way (one run_judge_run for every judge); its tiny-model run costs a
# minute of CPU for nothing more, so the two cheap judges stand for the judges that keep nothing.
@pytest.mark.parametrize("name,judge_class", [("lexical", lexical.LexicalJudge), ("learned", learned.LearnedJudge)])
def test_ctrl_c_fails_the_run_keeps_nothing_and_the_same_command_starts_afresh(tiny, monkeypatch, name, judge_class):
    real = judge_class.predict
    monkeypatch.setattr(judge_class, "predict", stopped_after_writing)
    message = interrupted(name)
    run = JudgeRun.objects.get()
    assert message == (
        f"Interrupted: {name} judge run {run.pk} stopped and is marked failed; it stored no judgments (this judge "
        "keeps nothing to resume from): run the same command again to start a new run."
    )
    assert (run.status, run.error) == ("failed", "Interrupted (Ctrl-C).") and run.finished_at is not None
    assert not MachineJudgment.objects.exists() and not run_folder(run.pk).exists()
    assert run.figures == {} and run.fitted == {} and run.llm_usage == {}

    monkeypatch.setattr(judge_class, "predict", real)
    out, err = judge(name)
    again = JudgeRun.objects.exclude(pk=run.pk).get()
    assert out.startswith(f"judge run {again.pk} ") and "Resuming" not in out + err
    assert (again.status, again.version) == ("done", 2)
    assert MachineJudgment.objects.filter(run=again).count() == again.pairs_total == 120
    assert JudgeRun.objects.get(pk=run.pk).status == "failed"  # left as it was, listed with its message


def test_ctrl_c_of_an_llm_run_before_it_asked_anything_says_it_resumes(tiny, endpoint, monkeypatch):
    """The message said "nothing of it is kept" and "a new run starts": the same command resumes it."""
    real = llm.LLMJudge.predict

    def stopped(self, work):
        raise KeyboardInterrupt

    monkeypatch.setattr(llm.LLMJudge, "predict", stopped)
    run_message = interrupted("llm")
    run = JudgeRun.objects.get()
    assert run_message == (
        f"Interrupted: judge run {run.pk} stopped before asking anything; run the same command again to resume it."
    )
    assert run.status == "failed" and not endpoint.answered
    monkeypatch.setattr(llm.LLMJudge, "predict", real)
    out, _ = judge("llm")
    assert out.startswith(f"Resuming run {run.pk}: 0 of 24 summaries already answered\n")
    assert JudgeRun.objects.get().status == "done"


def test_ctrl_c_before_the_run_starts_changes_nothing(tiny, monkeypatch):
    def stopped(self):
        raise KeyboardInterrupt  # e.g. while a judge's packages load

    monkeypatch.setattr(lexical.LexicalJudge, "require", stopped, raising=False)
    assert interrupted("lexical") == "Interrupted before the judge run started: nothing was changed."
    assert not JudgeRun.objects.exists()


def test_ctrl_c_while_a_failed_llm_run_is_being_taken_up_leaves_it_as_it_was(tiny, endpoint, monkeypatch):
    endpoint.fail_after = 6
    interrupted("llm")
    failed = JudgeRun.objects.get()
    endpoint.fail_after = None

    def stopped(*args):
        raise KeyboardInterrupt  # counting what the run has answered (every summary's question)

    monkeypatch.setattr(runs, "answered", stopped)
    assert interrupted("llm") == "Interrupted before the judge run started: nothing was changed."
    after = JudgeRun.objects.get()
    assert (after.status, after.error, after.llm_usage) == ("failed", failed.error, failed.llm_usage)


def test_ctrl_c_just_after_the_run_stored_itself_keeps_it_done(tiny, monkeypatch):
    """Ctrl-C between the run's last transaction and the command's end marked a finished run
    failed and deleted the model files it had stored."""
    real = lexical.LexicalJudge.predict

    def with_files(self, work):
        run_folder(work.run_id).mkdir(parents=True)
        (run_folder(work.run_id) / "model.bin").write_bytes(b"kept")
        return real(self, work)

    monkeypatch.setattr(lexical.LexicalJudge, "predict", with_files)
    monkeypatch.setattr(runs, "logger", CtrlCAfterStoring())
    out, _ = judge("lexical")
    run = JudgeRun.objects.get()
    assert out.startswith(f"judge run {run.pk} (round") and ", done\n" in out
    assert (run.status, run.error) == ("done", "")
    assert MachineJudgment.objects.filter(run=run).count() == 120
    assert (run_folder(run.pk) / "model.bin").read_bytes() == b"kept"


class SecondCtrlC:
    """Django's execute wrapper: a second Ctrl-C just as the run's failure is written (its UPDATE
    to "failed"), once; the UPDATE is not sent."""

    def __init__(self):
        self.pressed = False

    def __call__(self, execute, sql, params, many, context):
        if not self.pressed and sql.startswith('UPDATE "hits_judgerun"') and "failed" in (params or ()):
            self.pressed = True
            raise KeyboardInterrupt
        return execute(sql, params, many, context)


def test_a_second_ctrl_c_while_the_interruption_is_written_still_fails_the_run(tiny, monkeypatch):
    """The second Ctrl-C left the run marked running (the command still said it was marked failed)."""
    monkeypatch.setattr(lexical.LexicalJudge, "predict", stopped_after_writing)
    second = SecondCtrlC()
    with connection.execute_wrapper(second):
        message = interrupted("lexical")
    run = JudgeRun.objects.get()
    assert second.pressed
    assert message.startswith(f"Interrupted: lexical judge run {run.pk} stopped and is marked failed;")
    assert (run.status, run.error) == ("failed", "Interrupted (Ctrl-C).") and run.finished_at is not None
    assert not run_folder(run.pk).exists()


def test_a_second_ctrl_c_while_the_files_are_removed_still_removes_them(tiny, monkeypatch):
    """The run was marked failed but a half-written model folder stayed."""
    real = runs.shutil.rmtree

    def second_ctrl_c(path, **kwargs):
        monkeypatch.setattr(runs.shutil, "rmtree", real)
        raise KeyboardInterrupt

    monkeypatch.setattr(lexical.LexicalJudge, "predict", stopped_after_writing)
    monkeypatch.setattr(runs.shutil, "rmtree", second_ctrl_c)
    message = interrupted("lexical")
    run = JudgeRun.objects.get()
    assert message.startswith(f"Interrupted: lexical judge run {run.pk} stopped and is marked failed;")
    assert (run.status, run.error) == ("failed", "Interrupted (Ctrl-C).")
    assert not run_folder(run.pk).exists()


def test_a_second_ctrl_c_just_after_the_run_stored_itself_keeps_it_done(tiny, monkeypatch):
    """Two Ctrl-C between the run's last transaction and the command's end: the run stays done."""
    monkeypatch.setattr(runs, "logger", CtrlCAfterStoring())
    second = SecondCtrlC()
    with connection.execute_wrapper(second):
        out, _ = judge("lexical")
    run = JudgeRun.objects.get()
    assert second.pressed
    assert out.startswith(f"judge run {run.pk} (round") and ", done\n" in out
    assert (run.status, run.error) == ("done", "")
    assert MachineJudgment.objects.filter(run=run).count() == 120
