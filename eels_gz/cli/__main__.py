"""``python -m eels_gz.cli``: the eels-gz command line."""

from eels_gz.cli import main

main()
