"""Runs the Python module's tests with pytest; exits 77 (ctest's "skipped")
with the reason when pytest or NumPy is missing."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e.name} is missing (apt-get install python3-pytest python3-numpy)")
    sys.exit(77)

sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", os.path.dirname(__file__)]))
