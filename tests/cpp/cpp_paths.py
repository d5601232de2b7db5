"""Where the C++ front end's test inputs are: sources/ (kernels, a program), projects/ and the repo's examples/."""

from pathlib import Path

SOURCES = Path(__file__).with_name("sources")
PROJECTS = Path(__file__).with_name("projects")
EXAMPLES = Path(__file__).parents[2] / "examples"
