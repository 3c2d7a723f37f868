"""The worked example of docs/schedule.md runs and does what it says."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schedule.md"


def test_schedule_doc_example_runs(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(DOCS), "exec"), {"__name__": "schedule_md"})  # noqa: S102
    out = capsys.readouterr().out
    assert 'with T.sblock("C_update"):' in out
    assert "b9 = sch.decompose_reduction(block=b0, loop=l3)" in out
    assert "parallel: loop 'k' cannot be changed: block 'C_update' under it" in out
    # The printed excerpt in the doc is what the example prints.
    excerpt = re.search(
        r"The scheduled function prints as\n\n```\n(.*?)```", DOCS.read_text(), re.S
    )
    assert excerpt is not None
    for line in excerpt.group(1).splitlines():
        if line.strip() != "...":
            assert line in out
