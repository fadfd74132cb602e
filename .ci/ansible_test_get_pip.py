"""Stands in for ansible-test's pip bootstrap script, whose host (ci-files.testing.ansible.com) this
workplace cannot reach. .ci/ansible_sanity.sh copies it to where ansible-test caches that script,
with pip's wheel from PyPI in `machined-pip-wheels` beside it. ansible-test runs it as __main__ in a
fresh venv without pip (and with a cleared environment), with pip's options and the packages to
install as arguments; a wheel is importable as it is, so pip installs itself from it."""
import glob
import os
import sys

WHEELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "machined-pip-wheels")
found = sorted(glob.glob(os.path.join(WHEELS, "pip-*.whl")))
if not found:
    sys.exit("no pip wheel in " + WHEELS + " (.ci/ansible_sanity.sh fetches it)")
sys.path.insert(0, found[-1])

from pip._internal.cli.main import main  # noqa: E402

# --no-setuptools and --no-wheel are the bootstrap script's own options (pip has neither): this
# installs only what is named, so they need nothing more.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(main(["install", "--upgrade", "--force-reinstall", "--no-index", "--find-links", WHEELS,
               *args]))
