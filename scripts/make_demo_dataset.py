"""Cut the shipped demo dataset (10 documents x 4 systems) from the REALSumm RoSE sample.

Usage: python scripts/make_demo_dataset.py ../shared/data/realsumm.rose.jsonl
"""

import json
import sys
from pathlib import Path

SYSTEMS = ["abs_bart_out", "abs_ptr_generator_out_pointer_gen_cov", "abs_t5_out_large", "ext_matchsumm_out"]
TARGET = Path(__file__).resolve().parent.parent / "annotation" / "demo" / "realsumm-demo.rose.jsonl"


def main(source: str) -> None:
    lines = Path(source).read_text(encoding="utf-8").splitlines()[:10]
    with open(TARGET, "w", encoding="utf-8") as out:
        for line in lines:
            record = json.loads(line)
            record["system_outputs"] = {s: record["system_outputs"][s] for s in SYSTEMS}
            record["annotations"] = {s: record["annotations"][s] for s in SYSTEMS if s in record.get("annotations", {})}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main(sys.argv[1])
