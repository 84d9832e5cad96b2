"""``python -m schedlab`` runs the ``schedlab`` command line."""

from schedlab.benchmarks.cli import main

if __name__ == "__main__":
    main()
