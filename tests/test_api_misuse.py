"""The Python API refuses malformed arguments with a message that says what the model has."""
import numpy as np
import pytest

from model import attribute, bundled_checkpoints, load_checkpoint
from model.inference.bundle import InputError


@pytest.fixture(scope="module")
def reverse():
    return load_checkpoint(bundled_checkpoints()["reverse"])


@pytest.mark.parametrize("head", [(9, 9), (-3, 0), (0, 4), (0,), "L1H1", (0.5, 1)])
def test_a_head_the_model_does_not_have_is_refused(reverse, head):
    with pytest.raises(InputError, match="head"):
        attribute(reverse, "abc", None, 0, methods=["attention_head"], head=head)


@pytest.mark.parametrize("position", [2.5, "1", True])
def test_a_position_that_is_not_an_integer_is_refused(reverse, position):
    with pytest.raises(InputError, match="position must be an integer"):
        attribute(reverse, "abc", None, position, methods=["attention"])


def test_numpy_integers_and_negative_indices_are_accepted(reverse):
    a = attribute(reverse, "abc", None, np.int64(0), methods=["attention_head"], head=(np.int64(-1), -1))
    b = attribute(reverse, "abc", None, 0, methods=["attention_head"], head=(1, 3))
    np.testing.assert_allclose(a["attention_head"], b["attention_head"])
