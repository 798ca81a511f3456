"""The worked examples of the five reference texts, as data.

Each text is a blog post (in Chinese) that the series grew from. This module holds,
for each, the inputs and weights it uses and the numbers it prints, exactly as
printed, so that notebooks and tests share one copy. Nothing here computes: the
notebooks and ``tests/test_examples.py`` recompute every printed number with
``helpers.attention`` and compare.

Where a text rounds or errs, the printed value is kept under a ``*_PRINTED`` or
``*_AS_PRINTED`` name; the exact value is never typed in here (a cell computes it).

Texts (``SOURCES`` maps the short names to the file names and titles):

    text 000  "Self-attention 小小实践"            formula 1 (no weights) and formula 2 (integer weights)
    text 001  "理解自注意力(self-attention)"          the three-token example, softmax approximated by [0, .5, .5]
    text 002  a notebook, Xavier-initialised weights   4 positions x 3 features -> 2; a 4-head loop
    text 003  "python 实现 Multi-Head Attention"       PyTorch; the 001 example scaled by 1/sqrt(3); shapes
    text 004  "Self Attention" (notes)                 the 001 Q, K, V unscaled; 768 split into 8 heads
"""

from __future__ import annotations

import numpy as np

SOURCES = {
    "000": ("000_1df761eb9c6fc0e8.txt", "Self-attention 小小实践 (2023-12-24)"),
    "001": ("001_52367336f82e94b9.txt", "理解自注意力(self-attention)"),
    "002": ("002_8b009b6a46147379.txt", "Feature_all / Xavier normal / Multi-Head Self-Attention notebook"),
    "003": ("003_84fcf7af0d9b6d21.txt", "python 实现 Multi-Head Attention (PyTorch)"),
    "004": ("004_3bec1e365249fd61.txt", "Self Attention (numpy notes, multi-head by reshape)"),
}

# =============================================================================== text 000
# Formula 1: Attention(X) = softmax(X Xᵀ / sqrt(dim_X)) X, with emb_dim = 3.

T000_F1_X = np.array(
    [
        [1501, 502, 503],
        [2502, 501, 503],
        [503, 501, 502],
        [503, 502, 501],
        [501, 503, 5020],
    ]
)  # (T=5, d=3)
T000_F1_DIM = 3  # the text divides by np.sqrt(emb_dim)

# X Xᵀ / sqrt(3) minus each row's maximum, as printed (8 decimals)
T000_F1_SHIFTED_SCORES = np.array(
    [
        [-867179.52697255, 0.0, -1732629.31253861, -1732629.88988887, -421723.19472849],
        [-1445685.65140109, 0.0, -2887906.62383678, -2887907.77853732, -1578157.51596611],
        [-1019043.43237911, -728635.09227619, -1309448.88573069, -1309449.46308095, 0.0],
        [-1016436.11856345, -726028.3558108, -1306841.57191502, -1306840.99456476, 0.0],
        [-12802651.57528769, -12513400.24512423, -13094514.2607187, -13097122.15188463, 0.0],
    ]
)  # (5, 5)
T000_F1_SHIFTED_DECIMALS = 8
T000_F1_WEIGHTS = np.array(
    [
        [0.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 1.0],
    ]
)  # (5, 5) printed with numpy's default precision: one-hot
T000_F1_OUTPUT = np.array(
    [
        [2502.0, 501.0, 503.0],
        [2502.0, 501.0, 503.0],
        [501.0, 503.0, 5020.0],
        [501.0, 503.0, 5020.0],
        [501.0, 503.0, 5020.0],
    ]
)  # (5, 3)
T000_F1_WEIGHTS_SUM = 5.0  # np.sum(aw): five rows that each sum to 1

# Formula 2: softmax((X wq)(X wk)ᵀ / sqrt(qkv_dim)) (X wv), with qkv_dim = 4.
T000_F2_X = np.array([[1, 2, 3], [2, 2, 4], [5, 9, 7], [6, 6, 6], [8, 1, 4]])  # (T=5, d_in=3)
T000_F2_WQ = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 1, 2, 3]])  # (3, 4)
T000_F2_WK = np.array([[9, 8, 7, 6], [5, 4, 3, 2], [1, 9, 8, 7]])  # (3, 4)
T000_F2_WV = np.array([[3, 6, 9, 7], [1, 8, 3, 6], [4, 5, 2, 2]])  # (3, 4)
T000_F2_DK = 4  # qkv_dim: the text divides the scores by np.sqrt(4) = 2
T000_F2_Q = np.array(
    [[38, 17, 23, 29], [48, 20, 28, 36], [113, 71, 92, 113], [90, 54, 72, 90], [49, 26, 39, 52]]
)  # (5, 4)
T000_F2_K = np.array(
    [[22, 43, 37, 31], [32, 60, 52, 44], [97, 139, 118, 97], [90, 126, 108, 90], [81, 104, 91, 78]]
)  # (5, 4)
T000_F2_V = np.array(
    [[17, 37, 21, 25], [24, 48, 32, 34], [52, 137, 86, 103], [48, 114, 84, 90], [41, 76, 83, 70]]
)  # (5, 4)
T000_F2_SCORES = np.array(
    [
        [1658.5, 2354.0, 5788.0, 5328.0, 4600.5],
        [2034.0, 2888.0, 7116.0, 6552.0, 5662.0],
        [6223.0, 8816.0, 21323.5, 19611.0, 16861.5],
        [4878.0, 6912.0, 16731.0, 15390.0, 13239.0],
        [2625.5, 3722.0, 9006.5, 8289.0, 7139.0],
    ]
)  # (5, 5) Q Kᵀ / 2
T000_F2_SHIFTED_SCORES = np.array(
    [
        [-4129.5, -3434.0, 0.0, -460.0, -1187.5],
        [-5082.0, -4228.0, 0.0, -564.0, -1454.0],
        [-15100.5, -12507.5, 0.0, -1712.5, -4462.0],
        [-11853.0, -9819.0, 0.0, -1341.0, -3492.0],
        [-6381.0, -5284.5, 0.0, -717.5, -1867.5],
    ]
)  # (5, 5)
# The weights as printed: 9 significant digits. The tiny entries are exp(-460),
# exp(-564) and exp(-717.5); the last is a float64 subnormal.
T000_F2_WEIGHTS = np.array(
    [
        [0.0, 0.0, 1.0, 1.67702032e-200, 0.0],
        [0.0, 0.0, 1.0, 1.14264732e-245, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 2.47576395e-312, 0.0],
    ]
)  # (5, 5)
T000_F2_WEIGHTS_SIGNIFICANT = 9
T000_F2_OUTPUT = np.array([[52.0, 137.0, 86.0, 103.0]] * 5)  # (5, 4) every row copies V[2]

# =============================================================================== text 001
# Three tokens with 4 features; W (4, 3). The same numbers reappear in 003 and 004.

T001_X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]])  # (T=3, d_in=4)
T001_WK = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]])  # (4, 3)
T001_WQ = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]])  # (4, 3)
T001_WV = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]])  # (4, 3)
T001_K = np.array([[0, 1, 1], [4, 4, 0], [2, 3, 1]])  # (3, 3)
T001_V = np.array([[1, 2, 3], [2, 8, 0], [2, 6, 3]])  # (3, 3)
T001_Q = np.array([[1, 0, 2], [2, 2, 2], [2, 1, 3]])  # (3, 3)
T001_SCORES_QUERY1 = np.array([2, 4, 4])  # q1 · k_j, unscaled
# The text approximates softmax([2, 4, 4]) by [0.0, 0.5, 0.5] (e^2 dropped next to e^4) and carries the
# approximation on:
T001_SOFTMAX_QUERY1_AS_PRINTED = np.array([0.0, 0.5, 0.5])
T001_WEIGHTED_VALUES_AS_PRINTED = np.array([[0.0, 0.0, 0.0], [1.0, 4.0, 0.0], [1.0, 3.0, 1.5]])  # (3, 3)
T001_OUTPUT1_AS_PRINTED = np.array([2.0, 7.0, 1.5])
# What the issue tracker asks the notebooks to show beside it (4 decimals). These are
# checked against the computation in the tests, never used as a source of truth.
T001_SOFTMAX_QUERY1_EXACT_4DP = np.array([0.0634, 0.4683, 0.4683])
T001_OUTPUT1_EXACT_4DP = np.array([1.9366, 6.6831, 1.5951])

# =============================================================================== text 002
# Feature_all (4 positions x 3 features) with Xavier-normal weights (3 -> 2). The text
# draws them with an unseeded np.random.normal and prints them to 8 decimals, so the
# printed weights are the data; its scores are NOT scaled and its softmax is naive.

T002_X = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]])  # (T=4, d_in=3)
T002_N_IN, T002_N_OUT = 3, 2
T002_WQ = np.array([[0.1936747, 0.78729825], [0.54926615, -0.04591318], [1.62722824, 0.39686957]])
T002_WK = np.array([[0.83663886, -0.79360409], [-0.42752367, -0.30505612], [-0.68283334, -0.00779054]])
T002_WV = np.array([[-0.51232982, -0.86301211], [0.74448008, -0.28517045], [0.27987747, 0.29156925]])
T002_DECIMALS = 8
T002_Q = np.array(
    [[1.82090294, 1.18416782], [2.17649439, 0.3509564], [0.74294086, 0.74138508], [1.62722824, 0.39686957]]
)  # (4, 2)
T002_SCORES = np.array(
    [
        [-0.66892083, -2.39231529, -0.55603902, -1.25259854],
        [0.05350227, -2.52648133, 0.50485508, -1.48891708],
        [-0.47987362, -1.05686943, -0.5105819, -0.51308058],
        [-0.06777247, -1.93096359, 0.22969898, -1.11421752],
    ]
)  # (4, 4) Query @ Key.T, unscaled
T002_WEIGHTS = np.array(
    [
        [0.35016434, 0.0624901, 0.39200884, 0.19533672],
        [0.34964135, 0.02649416, 0.54908911, 0.07477537],
        [0.28582211, 0.16051282, 0.2771784, 0.27648668],
        [0.35053151, 0.05439431, 0.47197313, 0.12310105],
    ]
)  # (4, 4)
T002_OUTPUT = np.array(
    [
        [0.12829098, -0.59284257],
        [0.09426366, -0.80828286],
        [0.23971192, -0.3999403],
        [0.11825924, -0.7059795],
    ]
)  # (4, 2)
# The multi-head part: 4 heads, d_model=3 -> d_k=d_v=2 per head, own W per head, W_o (8, 3).
# Only W_q_heads is printed; W_k_heads, W_v_heads and W_o are not, so the text's head
# outputs cannot be recomputed from what it prints: notebooks reproduce the procedure
# (seeded) and the shapes, and recompute with these W_q_heads where they are enough.
T002_MH_N_HEADS, T002_MH_D_MODEL, T002_MH_D_K = 4, 3, 2
T002_MH_WQ_HEADS = np.array(
    [
        [[0.2561395, 0.17922212], [0.34622551, -0.72346501], [-0.35703322, -0.42980255]],
        [[-0.43398198, -0.1584815], [-0.83777088, -0.64821551], [0.26073526, 0.07988022]],
        [[-0.00870527, 0.69960601], [0.42938427, -0.06887067], [0.30984964, 0.30917478]],
        [[0.50756209, -0.71378229], [0.11222289, -0.0797183], [0.02702348, -0.33147692]],
    ]
)  # (h=4, d_model=3, d_k=2)
# What the text prints of its multi-head run; kept to check what can be checked (each
# weight row sums to 1 to the printed digits), not to recompute.
T002_MH_HEAD_OUTPUTS = np.array(
    [
        [[0.46834058, 0.46934938], [0.31235121, 0.56094363], [0.28177941, 0.48250133], [0.53172276, 0.48693824]],
        [[0.0458458, -1.08443782], [0.03578854, -1.05753493], [0.01530534, -1.06665533], [0.04823435, -1.11904312]],
        [[0.92165626, -0.01353054], [0.80494898, 0.11203423], [0.87002499, 0.02854181], [0.82970115, 0.02133007]],
        [[0.90416997, -0.12297903], [1.06334586, -0.22649126], [0.94761556, -0.15466373], [1.08919686, -0.24193256]],
    ]
)  # (h=4, T=4, d_v=2)
T002_MH_POSITION1_WEIGHTS = np.array(
    [
        [0.26914389, 0.29401485, 0.19324804, 0.24359321],
        [0.22621923, 0.28882462, 0.21266388, 0.27229227],
        [0.31554975, 0.14753084, 0.26249605, 0.27442336],
        [0.12891289, 0.2111176, 0.54042794, 0.11954157],
    ]
)  # (h=4, T_k=4): "位置1在各个头的attention weights", one row per head
T002_MH_HEAD_OUTPUTS_SHAPE = (4, 4, 2)  # (h, T, d_v)
T002_MH_CONCAT_SHAPE = (4, 8)  # (T, h * d_v)
T002_MH_FINAL_SHAPE = (4, 3)  # (T, d_model) after W_o (8, 3)

# =============================================================================== text 003
# PyTorch. The 001 example with Q Kᵀ / sqrt(hidden_size=3); printed to 4 decimals
# (weights in 5 significant digits).

T003_X, T003_WQ, T003_WK, T003_WV = T001_X, T001_WQ, T001_WK, T001_WV
T003_HIDDEN_SIZE = 3
T003_SCORES = np.array(
    [[1.1547, 2.3094, 2.3094], [2.3094, 9.2376, 6.9282], [2.3094, 6.9282, 5.7735]]
)  # (3, 3) Q Kᵀ / sqrt(3)
T003_DECIMALS = 4
T003_WEIGHTS = np.array(
    [
        [1.3613e-01, 4.3194e-01, 4.3194e-01],
        [8.9045e-04, 9.0884e-01, 9.0267e-02],
        [7.4449e-03, 7.5471e-01, 2.3785e-01],
    ]
)  # (3, 3)
T003_WEIGHTS_SIGNIFICANT = 5
T003_OUTPUT = np.array(
    [[1.8639, 6.3194, 1.7042], [1.9991, 7.8141, 0.2735], [1.9926, 7.4796, 0.7359]]
)  # (3, 3)
# selfAttention(2, 10, 16) on torch.rand((32, 20, 10)):
T003_SHAPES = {
    "batch_size": 32,
    "seq_len": 20,
    "input_size": 10,
    "d_model": 16,
    "num_attention_heads": 2,
    "d_k": 8,
    "scores_shape": (32, 2, 20, 20),
    "result_shape": (32, 20, 16),
}
# The constructor's check, as the text writes it (its two strings join with no space):
T003_HEADS_ERROR = "the hidden size %d is not a multiple of the number of attention heads%d"
# The image example: an 8x8 picture cut into four 4x4 patches, each flattened to 16
# numbers (row by row within the patch); identity embedding and W_q = W_k = W_v = I16.
T003_IMAGE = np.array(
    [
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 1, 1, 0, 1, 1, 1, 1],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 1, 1, 0, 0, 1, 1, 0],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 1, 1, 0, 1, 1, 1, 1],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 1, 1, 0, 0, 1, 1, 0],
    ]
)  # (8, 8) as drawn in the text's comment
T003_PATCHES = np.array(
    [
        [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0],  # X1
        [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0],  # X2
        [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0],  # X3
        [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0],  # X4
    ]
)  # (T=4 patches, 16 pixels) as the text types them
T003_PATCH_SIZE = 4

# =============================================================================== text 004
# numpy notes: the 001 Q, K, V typed in directly, scores NOT scaled, naive softmax with
# the max-subtraction commented out; then 768 features split into 8 heads of 96.

T004_Q, T004_K, T004_V = T001_Q, T001_K, T001_V
T004_MH = {"values_length": 3, "num_attention_heads": 8, "hidden_size": 768, "attention_head_size": 96}
T004_MH_SHAPES = {
    "reshaped": (3, 8, 96),  # (T, h, d_head)
    "transposed": (8, 3, 96),  # (h, T, d_head)
    "key_transposed": (8, 96, 3),
    "scores": (8, 3, 3),  # (h, T, T)
    "out": (8, 3, 96),
    "out_transposed": (3, 8, 96),
    "merged": (3, 768),
}
