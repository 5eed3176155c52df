"""The file names of a dataset's downloads, one scheme for the pages and the API."""


def download_name(dataset, batch, what: str) -> str:
    """ "<dataset>[-round<id>]-judgments.csv" (or "-scores.csv"), and the RoSE JSONL
    "<dataset>[-round<id>].rose.jsonl": the names the dashboard's and the dataset page's downloads
    give, which the API's give too."""
    scope = f"-round{batch.pk}" if batch is not None else ""
    return f"{dataset.name}{scope}{'.' if what == 'rose.jsonl' else '-'}{what}"
