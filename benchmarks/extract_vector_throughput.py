"""Write the Atlas A2/A3 vector throughput table of the Ascend C docs as fusekit timing data.

Source: asc-devkit ``docs/zh/api/附录/Vector指令理论性能汇总.md``, the section for Atlas A2/A3
(tables 6-18): per instruction (Ascend C name) and input dtype, the hardware parallelism in
elements per cycle. Rows without a figure (software-emulated, "-") are left out; a fusekit
instruction missing from the table costs one 256 B repeat per cycle (``fusekit.timing.params``).

    python benchmarks/extract_vector_throughput.py [--mirror GIT_DIR]
"""

import argparse
import json
import re
import subprocess
from fractions import Fraction
from pathlib import Path

PAGE = "docs/zh/api/附录/Vector指令理论性能汇总.md"
OUT = Path(__file__).resolve().parents[1] / "src" / "fusekit" / "timing" / "socs" / "vector_throughput_2201.json"


def parse(text: str) -> dict:
    section = text.split("<!-- npu=\"A3,910b\" id6 -->", 1)[1]
    table: dict = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.match(r"^[A-Z]", cells[0]) or cells[0] == "接口":
            continue
        figure = cells[-1]
        if not re.fullmatch(r"\d+(/\d+)?", figure):
            continue
        name = re.sub(r"（.*?）|\(.*?\)", "", cells[0]).strip()
        for dtype in re.split(r"[/、]", cells[1]):
            table.setdefault(name, {}).setdefault(dtype.strip(), float(Fraction(figure)))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default="/work/.mirror/mirror-cann+asc-devkit/repo")
    args = parser.parse_args()
    text = subprocess.run(["git", f"--git-dir={args.mirror}", "show", f"HEAD:{PAGE}"], check=True,
                          capture_output=True, text=True).stdout
    data = {"source": f"AD {PAGE}, Atlas A2/A3 section (tables 6-18), hardware parallelism in elements per cycle",
            "elements_per_cycle": parse(text)}
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({sum(map(len, data['elements_per_cycle'].values()))} rows)")


if __name__ == "__main__":
    main()
