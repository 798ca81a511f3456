"""Tests of notebook 16's exercise checks (helpers.checks.nb16): NumPy only, so they run without the torch extra.

Table-driven, as tests/test_checks_nb12.py: each row calls one check with one answer and states what it must
print, "✅ ... correct" for the right answer and "❌" with the specific explanation for each typical slip.
Right answers are built here from the exercise text with plain NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from check_table import assert_one_answer

from helpers.checks import nb16

Q, K, V, KEEP = nb16.EX_W_Q, nb16.EX_W_K, nb16.EX_W_V, nb16.EX_KEEP
IN_PROJ = np.vstack([Q.T, K.T, V.T])  # (12, 4) three nn.Linear weights, (out, in) each
C_ATTN = np.hstack([Q, K, V])  # (4, 12) GPT-2's Conv1D, (in, out)
ADD = np.array([[0, -np.inf, -np.inf, -np.inf], [0, 0, -np.inf, -np.inf], [0, 0, 0, -np.inf],
                [0, 0, 0, -np.inf]])  # causal, key 4 padding


class _Tensor:
    """What the checks read of a PyTorch tensor: detach().cpu().numpy()."""

    def __init__(self, a):
        self.a = a

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def test_the_examples_are_what_the_docstring_says():
    assert Q[0, 0] == 11 and Q[3, 1] == 42 and K[1, 2] == 123 and V[2, 3] == 234
    assert KEEP.tolist() == [[True, False, False, False], [True, True, False, False], [True, True, True, False],
                             [True, True, True, False]]


CASES = [
    ("in_proj right", nb16.check_in_proj_weight, IN_PROJ, "✅", ("correct",)),
    ("in_proj right as c_attn transposed", nb16.check_in_proj_weight, C_ATTN.T, "✅", ("correct",)),
    ("in_proj right as a tensor", nb16.check_in_proj_weight, _Tensor(IN_PROJ), "✅", ("correct",)),
    ("in_proj none", nb16.check_in_proj_weight, None, "❌", ("Not answered",)),
    ("in_proj not transposed", nb16.check_in_proj_weight, np.vstack([Q, K, V]), "❌", ("not transposed", "(out, in)")),
    ("in_proj c_attn layout", nb16.check_in_proj_weight, C_ATTN, "❌", ("GPT-2's c_attn layout",)),
    ("in_proj k first", nb16.check_in_proj_weight, np.vstack([K.T, Q.T, V.T]), "❌", ("wrong order",)),
    ("in_proj v first", nb16.check_in_proj_weight, np.vstack([V.T, K.T, Q.T]), "❌", ("wrong order",)),
    ("in_proj text", nb16.check_in_proj_weight, "W_q.T", "❌", ("expected an array",)),
    ("mask right", nb16.check_additive_mask, ADD, "✅", ("correct",)),
    ("mask right as a tensor", nb16.check_additive_mask, _Tensor(ADD), "✅", ("correct",)),
    ("mask inverted", nb16.check_additive_mask, np.where(KEEP, -np.inf, 0.0), "❌", ("ALLOWED",)),
    ("mask ones and zeros", nb16.check_additive_mask, KEEP.astype(float), "❌", ("as 1 and 0",)),
    ("mask as booleans", nb16.check_additive_mask, KEEP, "❌", ("as 1 and 0",)),
    ("mask mha convention", nb16.check_additive_mask, ~KEEP, "❌", ("nn.MultiheadAttention's boolean",)),
    ("mask minus 1e9", nb16.check_additive_mask, np.where(KEEP, 0.0, -1e9), "❌", ("almost", "-np.inf")),
    ("mask transposed", nb16.check_additive_mask, ADD.T, "❌", ("transpose",)),
    ("mask none", nb16.check_additive_mask, None, "❌", ("Not answered",)),
    ("c_attn right", nb16.check_c_attn_weight, C_ATTN, "✅", ("correct",)),
    ("c_attn in_proj layout", nb16.check_c_attn_weight, IN_PROJ, "❌", ("in_proj_weight", "(in, out)")),
    ("c_attn blocks transposed", nb16.check_c_attn_weight, np.hstack([Q.T, K.T, V.T]), "❌",
     ("each block is transposed",)),
    ("c_attn stacked", nb16.check_c_attn_weight, np.vstack([Q, K, V]), "❌", ("on top of each other",)),
    ("c_attn k first", nb16.check_c_attn_weight, np.hstack([K, Q, V]), "❌", ("wrong order",)),
    ("c_attn wrong numbers", nb16.check_c_attn_weight, C_ATTN + 1, "❌", ("largest difference",)),
]


@pytest.mark.parametrize(("case", "check", "answer", "mark", "phrases"), CASES, ids=[c[0] for c in CASES])
def test_each_check_says_what_is_right_or_wrong(case, check, answer, mark, phrases, capsys):
    assert_one_answer(case, check, answer, mark, phrases, capsys)
