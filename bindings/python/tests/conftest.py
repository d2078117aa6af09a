import pathlib

import pytest

import kiln

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = REPO_ROOT / "tests" / "conformance" / "corpus"
HEADER = REPO_ROOT / "capi" / "include" / "kiln" / "kiln.h"


@pytest.fixture(scope="module")
def client():
    with kiln.Client() as c:
        yield c
