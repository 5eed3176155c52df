"""A small dataset whose references still need ACUs (made from the demo file)."""

import json

from annotation.models import Dataset
from hits.services.dataset_import import import_dataset

from .conftest import DEMO_ROSE


def unauthored_dataset(tmp_path, name="to-write", documents=4) -> Dataset:
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()[:documents]
    out = tmp_path / f"{name}.jsonl"
    with open(out, "w", encoding="utf-8") as fh:
        for line in lines:
            record = json.loads(line)
            record["reference_acus"] = []
            record.pop("annotations", None)
            fh.write(json.dumps(record) + "\n")
    import_dataset(out, name=name, fmt="rose")
    return Dataset.objects.get(name=name)


def unlabelled_dataset(tmp_path, name="no-labels", documents=3, systems=None) -> Dataset:
    """Demo documents with their ACUs (approved, as imported) but no labels at all: a new study's
    dataset once its ACUs are written. `systems`: keep only the first N systems."""
    lines = DEMO_ROSE.read_text(encoding="utf-8").splitlines()[:documents]
    out = tmp_path / f"{name}.jsonl"
    with open(out, "w", encoding="utf-8") as fh:
        for line in lines:
            record = json.loads(line)
            record.pop("annotations", None)
            if systems is not None:
                keep = sorted(record["system_outputs"])[:systems]
                record["system_outputs"] = {k: record["system_outputs"][k] for k in keep}
            fh.write(json.dumps(record) + "\n")
    import_dataset(out, name=name, fmt="rose")
    return Dataset.objects.get(name=name)
