"""Fuzzing the importers (issue 15, item 4): thousands of generated bad inputs through the
command line (both formats) and the upload API give a clear refusal every time: no traceback,
no server error, no partial write. Each test prints how many inputs it tried and refused."""

import io
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token

from annotation.models import Dataset
from hits.services.dataset_import import delete_dataset

from .conftest import DEMO_ROSE, REALSUMM
from .test_import_errors import row_counts

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:Duplicate name"), pytest.mark.slow]
FUZZ = hsettings(
    max_examples=800,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
KEYS = ["example_id", "source", "reference", "reference_acus", "system_outputs", "annotations", "count_id"]
RECORDS = [json.loads(line) for line in DEMO_ROSE.read_text(encoding="utf-8").splitlines()[:2]]

nasty_text = st.one_of(
    st.text(max_size=40),
    st.just("\x00"),
    st.just("a\x00b"),
    st.just("\ud800"),
    st.just("x\udfffy"),
    st.text(min_size=201, max_size=260),
    st.just(""),
    st.just("   "),
    st.just("\u2028"),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | nasty_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(nasty_text, inner, max_size=3),
    max_leaves=8,
)
mutation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), json_values),
    st.tuples(st.just("drop"), st.sampled_from(KEYS)),
    st.tuples(st.just("system"), nasty_text),
    st.tuples(st.just("annotator"), nasty_text),
    st.tuples(st.just("acu"), nasty_text),
    st.tuples(st.just("labels"), json_values),
    st.tuples(st.just("raw"), st.binary(max_size=120)),
    st.tuples(st.just("deep"), st.integers(17, 3000)),
    st.tuples(st.just("bigint"), st.integers(31, 6000)),
    st.tuples(st.just("duplicate"), st.just(None)),
)


def _mutated_jsonl(mutations) -> bytes:
    records = [json.loads(json.dumps(r)) for r in RECORDS]
    raw_lines: list[bytes] = []
    for i, (kind, *args) in enumerate(mutations):
        r = records[i % len(records)]
        outputs = r["system_outputs"] if isinstance(r.get("system_outputs"), dict) else {}
        units = r["reference_acus"] if isinstance(r.get("reference_acus"), list) else []
        system = next(iter(outputs), "abs_bart_out")
        if kind == "set":
            r[args[0]] = args[1]
        elif kind == "drop":
            r.pop(args[0], None)
        elif kind == "system":
            r["system_outputs"] = {**outputs, args[0]: "a summary"}
        elif kind == "annotator":
            r["annotations"] = {system: {"annotator_labels": {args[0]: [1] * len(units)}}}
        elif kind == "acu":
            r["reference_acus"] = [*units[:-1], args[0]]
        elif kind == "labels":
            r["annotations"] = {system: {"acu_labels": args[0]}}
        elif kind == "raw":
            raw_lines.append(args[0].replace(b"\n", b" "))
        elif kind == "deep":
            r["count_id"] = json.loads("[" * 10 + "]" * 10)
            raw_lines.append(b'{"example_id": "deep", "x": ' + b"[" * args[0] + b"]" * args[0] + b"}")
        elif kind == "bigint":
            raw_lines.append(
                json.dumps({**r, "example_id": "big"}).encode()[:-1] + b', "count_id": ' + b"9" * args[0] + b"}"
            )
        elif kind == "duplicate":
            records.append(json.loads(json.dumps(r)))
    lines = [json.dumps(r).encode() for r in records] + raw_lines
    return b"\n".join(lines) + b"\n"


def _outcome(run) -> str:
    """'refused' (a clear message), or 'imported' (the mutation left a valid dataset, removed again)."""
    before = row_counts()
    try:
        run()
    except CommandError as exc:
        assert "Traceback" not in str(exc) and str(exc).startswith("Nothing was imported.")
        assert row_counts() == before, "a refused import wrote rows"
        return "refused"
    dataset = Dataset.objects.get(name="fuzz")
    delete_dataset(dataset)
    return "imported"


COUNTS: dict[str, dict[str, int]] = {}


def _count(test: str, outcome: str) -> None:
    COUNTS.setdefault(test, {"refused": 0, "imported": 0})[outcome] += 1


@FUZZ
@given(mutations=st.lists(mutation, min_size=1, max_size=3))
def test_rose_command_line(tmp_path_factory, mutations):
    path = tmp_path_factory.mktemp("rose") / "fuzz.jsonl"
    path.write_bytes(_mutated_jsonl(mutations))
    _count(
        "rose",
        _outcome(
            lambda: call_command(
                "import_dataset", str(path), "--name", "fuzz", "--format", "rose", stdout=io.StringIO()
            )
        ),
    )


@pytest.fixture(scope="module")
def small_pyramid(tmp_path_factory):
    """Three documents of REALSumm with two systems."""
    root = tmp_path_factory.mktemp("pyr") / "realsumm"
    root.mkdir()
    for name in ("ids.txt", "documents.txt", "references.txt", "SCUs.txt"):
        (root / name).write_bytes(b"\n".join((REALSUMM / name).read_bytes().split(b"\n")[:3]) + b"\n")
    for folder, ext in (("summaries", "summary"), ("labels", "label")):
        (root / folder).mkdir()
        for system in ("abs_bart_out", "abs_bottom_up_out"):
            src = (REALSUMM / folder / f"{system}.{ext}").read_bytes().split(b"\n")[:3]
            (root / folder / f"{system}.{ext}").write_bytes(b"\n".join(src) + b"\n")
    return root


PYRAMID_FILES = [
    "ids.txt",
    "documents.txt",
    "references.txt",
    "SCUs.txt",
    "summaries/abs_bart_out.summary",
    "labels/abs_bart_out.label",
    "summaries/<new>.summary",
    "labels/<new>.label",
]
line_payload = st.one_of(
    st.binary(max_size=80),
    nasty_text.map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.just(b"\x00"),
    st.just(b"d" * 250),
    st.just(b"<t> x </t>"),
    st.just(b"1\t0\t2"),
    st.just(b"\t\t"),
)


@FUZZ
@given(
    changes=st.lists(
        st.tuples(
            st.sampled_from(PYRAMID_FILES),
            st.integers(0, 4),
            line_payload,
            st.sampled_from(["replace", "insert", "truncate"]),
            nasty_text,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_pyramid_command_line(small_pyramid, changes):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "realsumm"
        shutil.copytree(small_pyramid, root)
        for name, index, payload, how, new_system in changes:
            if "<new>" in name:
                system = "".join(c for c in new_system if c not in "/\x00")[:200] or "s"
                name = name.replace("<new>", system)
            path = root / name
            try:
                lines = path.read_bytes().split(b"\n") if path.exists() else []
                if how == "replace" and index < len(lines):
                    lines[index] = payload
                elif how == "insert":
                    lines.insert(index, payload)
                else:
                    lines = lines[:index]
                path.write_bytes(b"\n".join(lines))
            except (OSError, UnicodeEncodeError, ValueError):
                continue  # a name the file system itself refuses: not an import case
        _count(
            "pyramid",
            _outcome(
                lambda: call_command(
                    "import_dataset", str(root), "--name", "fuzz", "--format", "pyramid", stdout=io.StringIO()
                )
            ),
        )


def _zip(members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name or "x", data)
    return buffer.getvalue()


upload_content = st.one_of(
    st.lists(mutation, min_size=1, max_size=3).map(_mutated_jsonl),
    st.binary(max_size=300),
    st.lists(
        st.tuples(
            st.sampled_from(["ids.txt", "p/ids.txt", "p/documents.txt", "../evil", "p/SCUs.txt", ""]),
            st.binary(max_size=50),
        ),
        max_size=4,
    ).map(_zip),
)


@pytest.fixture
def token(lead):
    return Token.objects.get_or_create(user=lead)[0].key


@hsettings(
    max_examples=600,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    content=upload_content, name=nasty_text, filename=nasty_text, fmt=st.sampled_from(["rose", "pyramid", "other", ""])
)
def test_upload_api(client, token, content, name, filename, fmt):
    from django.core.files.uploadedfile import SimpleUploadedFile

    before = row_counts()
    upload = SimpleUploadedFile(
        (filename or "f").encode("utf-8", "replace").decode("utf-8", "replace") + ".jsonl", content
    )
    response = client.post(
        "/api/datasets/import/",
        {"name": name.encode("utf-8", "replace").decode("utf-8", "replace"), "format": fmt, "file": upload},
        HTTP_AUTHORIZATION=f"Token {token}",
    )
    assert response.status_code < 500, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    if response.status_code == 201 or response.status_code == 200:
        delete_dataset(Dataset.objects.get(pk=response.json()["dataset"]["id"]))
        _count("upload", "imported")
    else:
        assert row_counts() == before, "a refused upload wrote rows"
        assert response.json()
        _count("upload", "refused")


def test_zz_fuzz_counts():
    """Runs last in this module: the figures for the closing note."""
    total = sum(sum(c.values()) for c in COUNTS.values())
    print(f"\nimport fuzz: {COUNTS}; {total} generated inputs, 0 tracebacks, 0 server errors, 0 partial writes")
    if len(COUNTS) == 3:
        assert total >= 2000
