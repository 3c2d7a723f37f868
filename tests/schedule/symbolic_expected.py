"""TVMScript printed by Apache TVM 0.27 for the schedules of test_symbolic_primitives.py
(generated once with TVM; tvmlite must match them byte for byte): the inputs, prim
functions over symbolic extents as TVM prints legalized operators, and what each
schedule turns them into."""

SCALE = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(256)))
        y = T.match_buffer(var_y, (n, T.int64(256)))
        for i, j in T.grid(n, T.int64(256)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(x[vi, vj])
                T.writes(y[vi, vj])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)
"""

SCALE_2D = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        n, m = T.int64(), T.int64()
        x = T.match_buffer(var_x, (n, m))
        y = T.match_buffer(var_y, (n, m))
        for i, j in T.grid(n, m):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(x[vi, vj])
                T.writes(y[vi, vj])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)
"""

SCALE_3D = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(3), T.int64(7)))
        y = T.match_buffer(var_y, (n, T.int64(3), T.int64(7)))
        for i, j, k in T.grid(n, T.int64(3), T.int64(7)):
            with T.sblock("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                T.reads(x[vi, vj, vk])
                T.writes(y[vi, vj, vk])
                y[vi, vj, vk] = x[vi, vj, vk] * T.float32(2.0)
"""

ROW_SOFTMAX = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(64)), "float32"), T_softmax_norm: T.Buffer((n, T.int64(64)), "float32")):
        T.func_attr({"op_attrs": [["axis", -1]], "op_kind": "out_ewise_fusible", "op_name": "relax.nn.softmax", "tir.noalias": True})
        # with T.sblock("root"):
        T_softmax_maxelem = T.sblock_alloc_buffer((n,))
        T_softmax_exp = T.sblock_alloc_buffer((n, T.int64(64)))
        T_softmax_expsum = T.sblock_alloc_buffer((n,))
        for i0, k in T.grid(n, T.int64(64)):
            with T.sblock("T_softmax_maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(x[v_i0, v_k])
                T.writes(T_softmax_maxelem[v_i0])
                with T.init():
                    T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], x[v_i0, v_k])
        for i0, i1 in T.grid(n, T.int64(64)):
            with T.sblock("T_softmax_exp"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(x[v_i0, v_i1], T_softmax_maxelem[v_i0])
                T.writes(T_softmax_exp[v_i0, v_i1])
                T_softmax_exp[v_i0, v_i1] = T.exp(x[v_i0, v_i1] - T_softmax_maxelem[v_i0])
        for i0, k in T.grid(n, T.int64(64)):
            with T.sblock("T_softmax_expsum"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(T_softmax_exp[v_i0, v_k])
                T.writes(T_softmax_expsum[v_i0])
                with T.init():
                    T_softmax_expsum[v_i0] = T.float32(0.0)
                T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
        for i0, i1 in T.grid(n, T.int64(64)):
            with T.sblock("T_softmax_norm"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])
                T.writes(T_softmax_norm[v_i0, v_i1])
                T.sblock_attr({"axis": 1})
                T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]

"""

SUM_ROWS = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((T.int64(8), n), "float32"), x_red: T.Buffer((T.int64(8),), "float32")):
        T.func_attr({"op_attrs": [["axis", [1]], ["keepdims", False]], "op_kind": "comm_reduce", "op_name": "relax.sum", "tir.noalias": True})
        # with T.sblock("root"):
        for ax0, k1 in T.grid(T.int64(8), n):
            with T.sblock("x_red"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(x[v_ax0, v_k1])
                T.writes(x_red[v_ax0])
                with T.init():
                    x_red[v_ax0] = T.float32(0.0)
                x_red[v_ax0] = x_red[v_ax0] + x[v_ax0, v_k1]

"""

MATMUL = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(32)), "float32"), w: T.Buffer((T.int64(32), T.int64(64)), "float32"), matmul: T.Buffer((n, T.int64(64)), "float32")):
        T.func_attr({"op_attrs": [["out_dtype", None]], "op_kind": "out_ewise_fusible", "op_name": "relax.matmul", "tir.noalias": True})
        # with T.sblock("root"):
        for i0, i1, k in T.grid(n, T.int64(64), T.int64(32)):
            with T.sblock("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], w[v_k, v_i1])
                T.writes(matmul[v_i0, v_i1])
                with T.init():
                    matmul[v_i0, v_i1] = T.float32(0.0)
                matmul[v_i0, v_i1] = matmul[v_i0, v_i1] + x[v_i0, v_k] * w[v_k, v_i1]

"""

BATCH_MATMUL = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

s = TypeVar("s")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(q: T.Buffer((T.int64(2), s, T.int64(8)), "float32"), k: T.Buffer((T.int64(2), T.int64(8), s), "float32"), matmul: T.Buffer((T.int64(2), s, s), "float32")):
        T.func_attr({"op_attrs": [["out_dtype", None]], "op_kind": "out_ewise_fusible", "op_name": "relax.matmul", "tir.noalias": True})
        # with T.sblock("root"):
        for i0, i1, i2, k_1 in T.grid(T.int64(2), s, s, T.int64(8)):
            with T.sblock("matmul"):
                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k_1])
                T.reads(q[v_i0, v_i1, v_k], k[v_i0, v_k, v_i2])
                T.writes(matmul[v_i0, v_i1, v_i2])
                with T.init():
                    matmul[v_i0, v_i1, v_i2] = T.float32(0.0)
                matmul[v_i0, v_i1, v_i2] = matmul[v_i0, v_i1, v_i2] + q[v_i0, v_i1, v_k] * k[v_i0, v_k, v_i2]

"""

CONV = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(4), T.int64(6), T.int64(6)), "float32"), w: T.Buffer((T.int64(16), T.int64(4), T.int64(3), T.int64(3)), "float32"), conv2d_nchw: T.Buffer((n, T.int64(16), T.int64(6), T.int64(6)), "float32")):
        T.func_attr({"op_attrs": [["strides", [1, 1]], ["padding", [1, 1, 1, 1]], ["dilation", [1, 1]], ["groups", 1], ["data_layout", "NCHW"], ["kernel_layout", "OIHW"], ["out_layout", "NCHW"], ["out_dtype", None]], "op_kind": "out_ewise_fusible", "op_name": "relax.nn.conv2d", "tir.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((n, T.int64(4), T.int64(8), T.int64(8)))
        for i0, i1, i2, i3 in T.grid(n, T.int64(4), T.int64(8), T.int64(8)):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(x[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(T.int64(1) <= v_i2 and v_i2 < T.int64(7) and T.int64(1) <= v_i3 and v_i3 < T.int64(7), x[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)], T.float32(0.0))
        for nn, ff, yy, xx, rc, ry, rx in T.grid(n, T.int64(16), T.int64(6), T.int64(6), T.int64(4), T.int64(3), T.int64(3)):
            with T.sblock("conv2d_nchw"):
                v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
                T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], w[v_ff, v_rc, v_ry, v_rx])
                T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                with T.init():
                    conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * w[v_ff, v_rc, v_ry, v_rx]

"""

AVG_POOL = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(32), T.int64(3), T.int64(3)), "float32"), adaptive_pool_avg: T.Buffer((n, T.int64(32), T.int64(1), T.int64(1)), "float32")):
        T.func_attr({"op_attrs": [["output_size", [1, 1]], ["layout", "NCHW"], ["out_layout", "NCHW"]], "op_kind": "out_ewise_fusible", "op_name": "relax.nn.adaptive_avg_pool2d", "tir.noalias": True})
        # with T.sblock("root"):
        adaptive_pool_sum = T.sblock_alloc_buffer((n, T.int64(32), T.int64(1), T.int64(1)))
        for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(n, T.int64(32), T.int64(1), T.int64(1), T.int64(3), T.int64(3)):
            with T.sblock("adaptive_pool_sum"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
                T.reads(x[v_ax0, v_ax1, v_ax2 * T.int64(3) + v_rv0, v_ax3 * T.int64(3) + v_rv1])
                T.writes(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                with T.init():
                    adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
                adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + x[v_ax0, v_ax1, v_ax2 * T.int64(3) + v_rv0, v_ax3 * T.int64(3) + v_rv1]
        for ax0, ax1, ax2, ax3 in T.grid(n, T.int64(32), T.int64(1), T.int64(1)):
            with T.sblock("adaptive_pool_avg"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
                T.sblock_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.float32(9.0)

"""

# A batch matmul over a symbolic batch whose columns (7) pad to a register (8).
ODD_BATCH_MATMUL = """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(a: T.Buffer((n, T.int64(5), T.int64(8)), "float32"), b: T.Buffer((n, T.int64(8), T.int64(7)), "float32"), c: T.Buffer((n, T.int64(5), T.int64(7)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.sblock("root"):
        for i0, i1, i2, k in T.grid(n, T.int64(5), T.int64(7), T.int64(8)):
            with T.sblock("C"):
                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
                T.reads(a[v_i0, v_i1, v_k], b[v_i0, v_k, v_i2])
                T.writes(c[v_i0, v_i1, v_i2])
                with T.init():
                    c[v_i0, v_i1, v_i2] = T.float32(0.0)
                c[v_i0, v_i1, v_i2] = c[v_i0, v_i1, v_i2] + a[v_i0, v_i1, v_k] * b[v_i0, v_k, v_i2]
"""

EXPECTED = {
    "split_inner": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, m), "float32"), y: T.Buffer((n, m), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i, j_0, j_1 in T.grid(n, (m + T.int64(15)) // T.int64(16), T.int64(16)):
            with T.sblock("B"):
                vi = T.axis.spatial(n, i)
                vj = T.axis.spatial(m, j_0 * T.int64(16) + j_1)
                T.where(j_0 * T.int64(16) + j_1 < m)
                T.reads(x[vi, vj])
                T.writes(y[vi, vj])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "split_outer": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, m), "float32"), y: T.Buffer((n, m), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_0, i_1, j in T.grid(T.int64(4), (n + T.int64(3)) // T.int64(4), m):
            with T.sblock("B"):
                vi = T.axis.spatial(n, i_0 * ((n + T.int64(3)) // T.int64(4)) + i_1)
                vj = T.axis.spatial(m, j)
                T.where(i_0 * ((n + T.int64(3)) // T.int64(4)) + i_1 < n)
                T.reads(x[vi, vj])
                T.writes(y[vi, vj])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "split_three": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, m), "float32"), y: T.Buffer((n, m), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i, j_0, j_1, j_2 in T.grid(n, (m + T.int64(31)) // T.int64(32), T.int64(4), T.int64(8)):
            with T.sblock("B"):
                vi = T.axis.spatial(n, i)
                vj = T.axis.spatial(m, j_0 * T.int64(32) + j_1 * T.int64(8) + j_2)
                T.where((j_0 * T.int64(4) + j_1) * T.int64(8) + j_2 < m)
                T.reads(x[vi, vj])
                T.writes(y[vi, vj])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "fuse_both": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(256)), "float32"), y: T.Buffer((n, T.int64(256)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_j_fused in range(n * T.int64(256)):
            with T.sblock("B"):
                vi = T.axis.spatial(n, i_j_fused // T.int64(256))
                vj = T.axis.spatial(T.int64(256), i_j_fused % T.int64(256))
                T.reads(x[vi, vj])
                T.writes(y[vi, vj])
                y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "fuse_split_exact": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(256)), "float32"), y: T.Buffer((n, T.int64(256)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_j_fused_0 in T.parallel(n * T.int64(16)):
            for i_j_fused_1 in T.vectorized(T.int64(16)):
                with T.sblock("B"):
                    vi = T.axis.spatial(n, (i_j_fused_0 * T.int64(16) + i_j_fused_1) // T.int64(256))
                    vj = T.axis.spatial(T.int64(256), (i_j_fused_0 * T.int64(16) + i_j_fused_1) % T.int64(256))
                    T.reads(x[vi, vj])
                    T.writes(y[vi, vj])
                    y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "fuse_split": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, m), "float32"), y: T.Buffer((n, m), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_j_fused_0 in T.parallel((n * m + T.int64(15)) // T.int64(16)):
            for i_j_fused_1 in T.vectorized(T.int64(16)):
                with T.sblock("B"):
                    vi = T.axis.spatial(n, (i_j_fused_0 * T.int64(16) + i_j_fused_1) // m)
                    vj = T.axis.spatial(m, (i_j_fused_0 * T.int64(16) + i_j_fused_1) % m)
                    T.where(i_j_fused_0 * T.int64(16) + i_j_fused_1 < n * m)
                    T.reads(x[vi, vj])
                    T.writes(y[vi, vj])
                    y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "split_then_fuse": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(256)), "float32"), y: T.Buffer((n, T.int64(256)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_j_0_fused in T.parallel(n * T.int64(16)):
            for j_1 in T.vectorized(T.int64(16)):
                with T.sblock("B"):
                    vi = T.axis.spatial(n, i_j_0_fused // T.int64(16))
                    vj = T.axis.spatial(T.int64(256), i_j_0_fused % T.int64(16) * T.int64(16) + j_1)
                    T.reads(x[vi, vj])
                    T.writes(y[vi, vj])
                    y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "fuse_three_split": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(3), T.int64(7)), "float32"), y: T.Buffer((n, T.int64(3), T.int64(7)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_j_k_fused_0 in T.parallel((n * T.int64(21) + T.int64(15)) // T.int64(16)):
            for i_j_k_fused_1 in T.vectorized(T.int64(16)):
                with T.sblock("B"):
                    vi = T.axis.spatial(n, (i_j_k_fused_0 * T.int64(16) + i_j_k_fused_1) // T.int64(21))
                    vj = T.axis.spatial(T.int64(3), (i_j_k_fused_0 * T.int64(16) + i_j_k_fused_1) % T.int64(21) // T.int64(7))
                    vk = T.axis.spatial(T.int64(7), (i_j_k_fused_0 * T.int64(16) + i_j_k_fused_1) % T.int64(7))
                    T.where(i_j_k_fused_0 * T.int64(16) + i_j_k_fused_1 < n * T.int64(21))
                    T.reads(x[vi, vj, vk])
                    T.writes(y[vi, vj, vk])
                    y[vi, vj, vk] = x[vi, vj, vk] * T.float32(2.0)""",
    "tile_2d": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, m), "float32"), y: T.Buffer((n, m), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_0_j_0_fused in T.parallel((n + T.int64(15)) // T.int64(16) * ((m + T.int64(15)) // T.int64(16))):
            for i_1 in range(T.int64(16)):
                for j_1 in T.vectorized(T.int64(16)):
                    with T.sblock("B"):
                        vi = T.axis.spatial(n, i_0_j_0_fused // ((m + T.int64(15)) // T.int64(16)) * T.int64(16) + i_1)
                        vj = T.axis.spatial(m, i_0_j_0_fused % ((m + T.int64(15)) // T.int64(16)) * T.int64(16) + j_1)
                        T.where(i_0_j_0_fused // ((m + T.int64(15)) // T.int64(16)) * T.int64(16) + i_1 < n and i_0_j_0_fused % ((m + T.int64(15)) // T.int64(16)) * T.int64(16) + j_1 < m)
                        T.reads(x[vi, vj])
                        T.writes(y[vi, vj])
                        y[vi, vj] = x[vi, vj] * T.float32(2.0)""",
    "softmax_rows": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(64)), "float32"), T_softmax_norm: T.Buffer((n, T.int64(64)), "float32")):
        T.func_attr({"op_attrs": [["axis", -1]], "op_kind": "out_ewise_fusible", "op_name": "relax.nn.softmax", "tir.noalias": True})
        # with T.sblock("root"):
        T_softmax_maxelem = T.sblock_alloc_buffer((n,))
        T_softmax_exp = T.sblock_alloc_buffer((n, T.int64(64)))
        T_softmax_expsum = T.sblock_alloc_buffer((n,))
        T_softmax_maxelem_rf = T.sblock_alloc_buffer((n, T.int64(16)))
        T_softmax_expsum_rf = T.sblock_alloc_buffer((n, T.int64(16)))
        for i0_m in T.parallel(n):
            for k_1_init in T.vectorized(T.int64(16)):
                with T.sblock("T_softmax_maxelem_rf_init"):
                    vk_1, v_i0 = T.axis.remap("SS", [k_1_init, i0_m])
                    T.reads()
                    T.writes(T_softmax_maxelem_rf[v_i0, vk_1])
                    T_softmax_maxelem_rf[v_i0, vk_1] = T.float32(-340282346638528859811704183484516925440.0)
            for k_0 in range(T.int64(4)):
                for k_1 in T.vectorized(T.int64(16)):
                    with T.sblock("T_softmax_maxelem_rf_update"):
                        vk_1, v_i0, vk_0 = T.axis.remap("SSR", [k_1, i0_m, k_0])
                        T.reads(T_softmax_maxelem_rf[v_i0, vk_1], x[v_i0, vk_0 * T.int64(16) + vk_1])
                        T.writes(T_softmax_maxelem_rf[v_i0, vk_1])
                        T_softmax_maxelem_rf[v_i0, vk_1] = T.max(T_softmax_maxelem_rf[v_i0, vk_1], x[v_i0, vk_0 * T.int64(16) + vk_1])
            for k_1 in range(T.int64(16)):
                with T.sblock("T_softmax_maxelem"):
                    vk_1, v_i0 = T.axis.remap("RS", [k_1, i0_m])
                    T.reads(T_softmax_maxelem_rf[v_i0, vk_1])
                    T.writes(T_softmax_maxelem[v_i0])
                    with T.init():
                        T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                    T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], T_softmax_maxelem_rf[v_i0, vk_1])
            for i1_0 in range(T.int64(4)):
                for i1_1 in T.vectorized(T.int64(16)):
                    with T.sblock("T_softmax_exp"):
                        v_i0 = T.axis.spatial(n, i0_m)
                        v_i1 = T.axis.spatial(T.int64(64), i1_0 * T.int64(16) + i1_1)
                        T.reads(x[v_i0, v_i1], T_softmax_maxelem[v_i0])
                        T.writes(T_softmax_exp[v_i0, v_i1])
                        T_softmax_exp[v_i0, v_i1] = T.exp(x[v_i0, v_i1] - T_softmax_maxelem[v_i0])
            for k_1_init in T.vectorized(T.int64(16)):
                with T.sblock("T_softmax_expsum_rf_init"):
                    vk_1, v_i0 = T.axis.remap("SS", [k_1_init, i0_m])
                    T.reads()
                    T.writes(T_softmax_expsum_rf[v_i0, vk_1])
                    T_softmax_expsum_rf[v_i0, vk_1] = T.float32(0.0)
            for k_0 in range(T.int64(4)):
                for k_1 in T.vectorized(T.int64(16)):
                    with T.sblock("T_softmax_expsum_rf_update"):
                        vk_1, v_i0, vk_0 = T.axis.remap("SSR", [k_1, i0_m, k_0])
                        T.reads(T_softmax_expsum_rf[v_i0, vk_1], T_softmax_exp[v_i0, vk_0 * T.int64(16) + vk_1])
                        T.writes(T_softmax_expsum_rf[v_i0, vk_1])
                        T_softmax_expsum_rf[v_i0, vk_1] = T_softmax_expsum_rf[v_i0, vk_1] + T_softmax_exp[v_i0, vk_0 * T.int64(16) + vk_1]
            for k_1 in range(T.int64(16)):
                with T.sblock("T_softmax_expsum"):
                    vk_1, v_i0 = T.axis.remap("RS", [k_1, i0_m])
                    T.reads(T_softmax_expsum_rf[v_i0, vk_1])
                    T.writes(T_softmax_expsum[v_i0])
                    with T.init():
                        T_softmax_expsum[v_i0] = T.float32(0.0)
                    T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_expsum_rf[v_i0, vk_1]
            for i1_0 in range(T.int64(4)):
                for i1_1 in T.vectorized(T.int64(16)):
                    with T.sblock("T_softmax_norm"):
                        v_i0 = T.axis.spatial(n, i0_m)
                        v_i1 = T.axis.spatial(T.int64(64), i1_0 * T.int64(16) + i1_1)
                        T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])
                        T.writes(T_softmax_norm[v_i0, v_i1])
                        T.sblock_attr({"axis": 1})
                        T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]""",
    "sum_partials": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((T.int64(8), n), "float32"), x_red: T.Buffer((T.int64(8),), "float32")):
        T.func_attr({"op_attrs": [["axis", [1]], ["keepdims", False]], "op_kind": "comm_reduce", "op_name": "relax.sum", "tir.noalias": True})
        # with T.sblock("root"):
        x_red_rf = T.sblock_alloc_buffer((T.int64(8), T.int64(16)))
        for ax0 in range(T.int64(8)):
            for k1_1_init in T.vectorized(T.int64(16)):
                with T.sblock("x_red_rf_init"):
                    vk1_1, v_ax0 = T.axis.remap("SS", [k1_1_init, ax0])
                    T.reads()
                    T.writes(x_red_rf[v_ax0, vk1_1])
                    x_red_rf[v_ax0, vk1_1] = T.float32(0.0)
            for k1_0 in range((n + T.int64(15)) // T.int64(16)):
                for k1_1 in T.vectorized(T.int64(16)):
                    with T.sblock("x_red_rf_update"):
                        vk1_1, v_ax0, vk1_0 = T.axis.remap("SSR", [k1_1, ax0, k1_0])
                        T.where(k1_0 * T.int64(16) + k1_1 < n)
                        T.reads(x_red_rf[v_ax0, vk1_1], x[v_ax0, vk1_0 * T.int64(16) + vk1_1])
                        T.writes(x_red_rf[v_ax0, vk1_1])
                        x_red_rf[v_ax0, vk1_1] = x_red_rf[v_ax0, vk1_1] + x[v_ax0, vk1_0 * T.int64(16) + vk1_1]
        for ax0, k1_1 in T.grid(T.int64(8), T.int64(16)):
            with T.sblock("x_red"):
                vk1_1, v_ax0 = T.axis.remap("RS", [k1_1, ax0])
                T.reads(x_red_rf[v_ax0, vk1_1])
                T.writes(x_red[v_ax0])
                with T.init():
                    x_red[v_ax0] = T.float32(0.0)
                x_red[v_ax0] = x_red[v_ax0] + x_red_rf[v_ax0, vk1_1]""",
    "matmul_tiles": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(32)), "float32"), w: T.Buffer((T.int64(32), T.int64(64)), "float32"), matmul: T.Buffer((n, T.int64(64)), "float32")):
        T.func_attr({"op_attrs": [["out_dtype", None]], "op_kind": "out_ewise_fusible", "op_name": "relax.matmul", "tir.noalias": True})
        # with T.sblock("root"):
        matmul_local = T.sblock_alloc_buffer((n, T.int64(64)), scope="local")
        for i1_0_i0_0_fused in T.parallel((n + T.int64(7)) // T.int64(8) * T.int64(2)):
            for i0_1_init in T.unroll(T.int64(8)):
                for i1_1_init in T.vectorized(T.int64(32)):
                    with T.sblock("matmul_init"):
                        v_i0 = T.axis.spatial(n, i1_0_i0_0_fused % ((n + T.int64(7)) // T.int64(8)) * T.int64(8) + i0_1_init)
                        v_i1 = T.axis.spatial(T.int64(64), i1_0_i0_0_fused // ((n + T.int64(7)) // T.int64(8)) * T.int64(32) + i1_1_init)
                        T.where(i1_0_i0_0_fused % ((n + T.int64(7)) // T.int64(8)) * T.int64(8) + i0_1_init < n)
                        T.reads()
                        T.writes(matmul_local[v_i0, v_i1])
                        matmul_local[v_i0, v_i1] = T.float32(0.0)
            for k in range(T.int64(32)):
                for i0_1 in T.unroll(T.int64(8)):
                    for i1_1 in T.vectorized(T.int64(32)):
                        with T.sblock("matmul_update"):
                            v_i0 = T.axis.spatial(n, i1_0_i0_0_fused % ((n + T.int64(7)) // T.int64(8)) * T.int64(8) + i0_1)
                            v_i1 = T.axis.spatial(T.int64(64), i1_0_i0_0_fused // ((n + T.int64(7)) // T.int64(8)) * T.int64(32) + i1_1)
                            v_k = T.axis.reduce(T.int64(32), k)
                            T.where(i1_0_i0_0_fused % ((n + T.int64(7)) // T.int64(8)) * T.int64(8) + i0_1 < n)
                            T.reads(matmul_local[v_i0, v_i1], x[v_i0, v_k], w[v_k, v_i1])
                            T.writes(matmul_local[v_i0, v_i1])
                            matmul_local[v_i0, v_i1] = matmul_local[v_i0, v_i1] + x[v_i0, v_k] * w[v_k, v_i1]
            for ax0 in range(T.int64(8)):
                for ax1 in T.vectorized(T.int64(32)):
                    with T.sblock("matmul_local"):
                        v0 = T.axis.spatial(n, i1_0_i0_0_fused % ((n + T.int64(7)) // T.int64(8)) * T.int64(8) + ax0)
                        v1 = T.axis.spatial(T.int64(64), i1_0_i0_0_fused // ((n + T.int64(7)) // T.int64(8)) * T.int64(32) + ax1)
                        T.where(i1_0_i0_0_fused % ((n + T.int64(7)) // T.int64(8)) * T.int64(8) + ax0 < n)
                        T.reads(matmul_local[v0, v1])
                        T.writes(matmul[v0, v1])
                        matmul[v0, v1] = matmul_local[v0, v1]""",
    "batch_matmul_tiles": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

s = TypeVar("s")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(q: T.Buffer((T.int64(2), s, T.int64(8)), "float32"), k: T.Buffer((T.int64(2), T.int64(8), s), "float32"), matmul: T.Buffer((T.int64(2), s, s), "float32")):
        T.func_attr({"op_attrs": [["out_dtype", None]], "op_kind": "out_ewise_fusible", "op_name": "relax.matmul", "tir.noalias": True})
        # with T.sblock("root"):
        matmul_local = T.sblock_alloc_buffer((T.int64(2), s, s), scope="local")
        for i0_i2_0_i1_0_fused in T.parallel((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8)) * T.int64(2)):
            for i1_1_init in T.unroll(T.int64(8)):
                for i2_1_init in T.vectorized(T.int64(32)):
                    with T.sblock("matmul_init"):
                        v_i0 = T.axis.spatial(T.int64(2), i0_i2_0_i1_0_fused // ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))))
                        v_i1 = T.axis.spatial(s, i0_i2_0_i1_0_fused % ((s + T.int64(7)) // T.int64(8)) * T.int64(8) + i1_1_init)
                        v_i2 = T.axis.spatial(s, i0_i2_0_i1_0_fused % ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))) // ((s + T.int64(7)) // T.int64(8)) * T.int64(32) + i2_1_init)
                        T.where(i0_i2_0_i1_0_fused % ((s + T.int64(7)) // T.int64(8)) * T.int64(8) + i1_1_init < s and i0_i2_0_i1_0_fused % ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))) // ((s + T.int64(7)) // T.int64(8)) * T.int64(32) + i2_1_init < s)
                        T.reads()
                        T.writes(matmul_local[v_i0, v_i1, v_i2])
                        matmul_local[v_i0, v_i1, v_i2] = T.float32(0.0)
            for k_1 in range(T.int64(8)):
                for i1_1 in T.unroll(T.int64(8)):
                    for i2_1 in T.vectorized(T.int64(32)):
                        with T.sblock("matmul_update"):
                            v_i0 = T.axis.spatial(T.int64(2), i0_i2_0_i1_0_fused // ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))))
                            v_i1 = T.axis.spatial(s, i0_i2_0_i1_0_fused % ((s + T.int64(7)) // T.int64(8)) * T.int64(8) + i1_1)
                            v_i2 = T.axis.spatial(s, i0_i2_0_i1_0_fused % ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))) // ((s + T.int64(7)) // T.int64(8)) * T.int64(32) + i2_1)
                            v_k = T.axis.reduce(T.int64(8), k_1)
                            T.where(i0_i2_0_i1_0_fused % ((s + T.int64(7)) // T.int64(8)) * T.int64(8) + i1_1 < s and i0_i2_0_i1_0_fused % ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))) // ((s + T.int64(7)) // T.int64(8)) * T.int64(32) + i2_1 < s)
                            T.reads(matmul_local[v_i0, v_i1, v_i2], q[v_i0, v_i1, v_k], k[v_i0, v_k, v_i2])
                            T.writes(matmul_local[v_i0, v_i1, v_i2])
                            matmul_local[v_i0, v_i1, v_i2] = matmul_local[v_i0, v_i1, v_i2] + q[v_i0, v_i1, v_k] * k[v_i0, v_k, v_i2]
            for ax0 in range(T.int64(8)):
                for ax1 in T.vectorized(T.int64(32)):
                    with T.sblock("matmul_local"):
                        v0 = T.axis.spatial(T.int64(2), i0_i2_0_i1_0_fused // ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))))
                        v1 = T.axis.spatial(s, i0_i2_0_i1_0_fused % ((s + T.int64(7)) // T.int64(8)) * T.int64(8) + ax0)
                        v2 = T.axis.spatial(s, i0_i2_0_i1_0_fused % ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))) // ((s + T.int64(7)) // T.int64(8)) * T.int64(32) + ax1)
                        T.where(i0_i2_0_i1_0_fused % ((s + T.int64(7)) // T.int64(8)) * T.int64(8) + ax0 < s and i0_i2_0_i1_0_fused % ((s + T.int64(31)) // T.int64(32) * ((s + T.int64(7)) // T.int64(8))) // ((s + T.int64(7)) // T.int64(8)) * T.int64(32) + ax1 < s)
                        T.reads(matmul_local[v0, v1, v2])
                        T.writes(matmul[v0, v1, v2])
                        matmul[v0, v1, v2] = matmul_local[v0, v1, v2]""",
    "conv_tiles": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(4), T.int64(6), T.int64(6)), "float32"), w: T.Buffer((T.int64(16), T.int64(4), T.int64(3), T.int64(3)), "float32"), conv2d_nchw: T.Buffer((n, T.int64(16), T.int64(6), T.int64(6)), "float32")):
        T.func_attr({"op_attrs": [["strides", [1, 1]], ["padding", [1, 1, 1, 1]], ["dilation", [1, 1]], ["groups", 1], ["data_layout", "NCHW"], ["kernel_layout", "OIHW"], ["out_layout", "NCHW"], ["out_dtype", None]], "op_kind": "out_ewise_fusible", "op_name": "relax.nn.conv2d", "tir.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((n, T.int64(4), T.int64(8), T.int64(8)))
        w_global = T.sblock_alloc_buffer((T.int64(1), T.int64(4), T.int64(3), T.int64(3), T.int64(16)))
        conv2d_nchw_local = T.sblock_alloc_buffer((n, T.int64(6), T.int64(6), T.int64(16)), scope="local")
        for ax0_ax1_ax2_fused in T.parallel(T.int64(192)):
            for ax3 in range(T.int64(3)):
                with T.sblock("w_global"):
                    v0 = T.axis.spatial(T.int64(16), ax0_ax1_ax2_fused // T.int64(12))
                    v1 = T.axis.spatial(T.int64(4), ax0_ax1_ax2_fused % T.int64(12) // T.int64(3))
                    v2 = T.axis.spatial(T.int64(3), ax0_ax1_ax2_fused % T.int64(3))
                    v3 = T.axis.spatial(T.int64(3), ax3)
                    T.reads(w[v0, v1, v2, v3])
                    T.writes(w_global[T.int64(0), v1, v2, v3, v0])
                    w_global[T.int64(0), v1, v2, v3, v0] = w[v0, v1, v2, v3]
        for i0_i1_i2_fused in T.parallel(n * T.int64(32)):
            for i3 in range(T.int64(8)):
                with T.sblock("pad_temp"):
                    v_i0 = T.axis.spatial(n, i0_i1_i2_fused // T.int64(32))
                    v_i1 = T.axis.spatial(T.int64(4), i0_i1_i2_fused % T.int64(32) // T.int64(8))
                    v_i2 = T.axis.spatial(T.int64(8), i0_i1_i2_fused % T.int64(8))
                    v_i3 = T.axis.spatial(T.int64(8), i3)
                    T.reads(x[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)])
                    T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                    pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(T.int64(1) <= v_i2 and v_i2 < T.int64(7) and T.int64(1) <= v_i3 and v_i3 < T.int64(7), x[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)], T.float32(0.0))
        for ff_0_nn_yy_xx_0_fused in T.parallel(n * T.int64(6)):
            for xx_1_init in T.unroll(T.int64(6)):
                for ff_1_init in T.vectorized(T.int64(16)):
                    with T.sblock("conv2d_nchw_init"):
                        v_nn = T.axis.spatial(n, ff_0_nn_yy_xx_0_fused // T.int64(6))
                        v_ff = T.axis.spatial(T.int64(16), ff_1_init)
                        v_yy = T.axis.spatial(T.int64(6), ff_0_nn_yy_xx_0_fused % T.int64(6))
                        v_xx = T.axis.spatial(T.int64(6), xx_1_init)
                        T.reads()
                        T.writes(conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff])
                        conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff] = T.float32(0.0)
            for rc, ry, rx in T.grid(T.int64(4), T.int64(3), T.int64(3)):
                for xx_1 in T.unroll(T.int64(6)):
                    for ff_1 in T.vectorized(T.int64(16)):
                        with T.sblock("conv2d_nchw_update"):
                            v_nn = T.axis.spatial(n, ff_0_nn_yy_xx_0_fused // T.int64(6))
                            v_ff = T.axis.spatial(T.int64(16), ff_1)
                            v_yy = T.axis.spatial(T.int64(6), ff_0_nn_yy_xx_0_fused % T.int64(6))
                            v_xx, v_rc, v_ry, v_rx = T.axis.remap("SRRR", [xx_1, rc, ry, rx])
                            T.reads(conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff], pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], w_global[T.int64(0), v_rc, v_ry, v_rx, v_ff])
                            T.writes(conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff])
                            conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff] = conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * w_global[T.int64(0), v_rc, v_ry, v_rx, v_ff]
            for ax1 in range(T.int64(6)):
                for ax0 in T.vectorized(T.int64(16)):
                    with T.sblock("conv2d_nchw_local"):
                        v0 = T.axis.spatial(n, ff_0_nn_yy_xx_0_fused // T.int64(6))
                        v1 = T.axis.spatial(T.int64(16), ax0)
                        v2 = T.axis.spatial(T.int64(6), ff_0_nn_yy_xx_0_fused % T.int64(6))
                        v3 = T.axis.spatial(T.int64(6), ax1)
                        T.reads(conv2d_nchw_local[v0, v2, v3, v1])
                        T.writes(conv2d_nchw[v0, v1, v2, v3])
                        conv2d_nchw[v0, v1, v2, v3] = conv2d_nchw_local[v0, v2, v3, v1]""",
    "pool_channels": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((n, T.int64(32), T.int64(3), T.int64(3)), "float32"), adaptive_pool_avg: T.Buffer((n, T.int64(32), T.int64(1), T.int64(1)), "float32")):
        T.func_attr({"op_attrs": [["output_size", [1, 1]], ["layout", "NCHW"], ["out_layout", "NCHW"]], "op_kind": "out_ewise_fusible", "op_name": "relax.nn.adaptive_avg_pool2d", "tir.noalias": True})
        # with T.sblock("root"):
        adaptive_pool_sum = T.sblock_alloc_buffer((n, T.int64(32), T.int64(1), T.int64(1)))
        for ax0_ax1_ax2_fused in T.parallel(n * T.int64(32)):
            for ax3_init in T.vectorized(T.int64(1)):
                with T.sblock("adaptive_pool_sum_init"):
                    v_ax0 = T.axis.spatial(n, ax0_ax1_ax2_fused // T.int64(32))
                    v_ax1 = T.axis.spatial(T.int64(32), ax0_ax1_ax2_fused % T.int64(32))
                    v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
                    v_ax3 = T.axis.spatial(T.int64(1), ax3_init)
                    T.reads()
                    T.writes(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                    adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
            for rv0, rv1 in T.grid(T.int64(3), T.int64(3)):
                for ax3 in T.vectorized(T.int64(1)):
                    with T.sblock("adaptive_pool_sum_update"):
                        v_ax0 = T.axis.spatial(n, ax0_ax1_ax2_fused // T.int64(32))
                        v_ax1 = T.axis.spatial(T.int64(32), ax0_ax1_ax2_fused % T.int64(32))
                        v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
                        v_ax3, v_rv0, v_rv1 = T.axis.remap("SRR", [ax3, rv0, rv1])
                        T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3], x[v_ax0, v_ax1, v_ax2 * T.int64(3) + v_rv0, v_ax3 * T.int64(3) + v_rv1])
                        T.writes(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                        adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + x[v_ax0, v_ax1, v_ax2 * T.int64(3) + v_rv0, v_ax3 * T.int64(3) + v_rv1]
            with T.sblock("adaptive_pool_avg"):
                v_ax0 = T.axis.spatial(n, ax0_ax1_ax2_fused // T.int64(32))
                v_ax1 = T.axis.spatial(T.int64(32), ax0_ax1_ax2_fused % T.int64(32))
                v_ax2 = T.axis.spatial(T.int64(1), T.int64(0))
                v_ax3 = T.axis.spatial(T.int64(1), T.int64(0))
                T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
                T.sblock_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.float32(9.0)""",
    "pad_einsum_symbolic_batch": """# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(a: T.Buffer((n, T.int64(5), T.int64(8)), "float32"), b: T.Buffer((n, T.int64(8), T.int64(7)), "float32"), c: T.Buffer((n, T.int64(5), T.int64(7)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.sblock("root"):
        b_pad = T.sblock_alloc_buffer((n, T.int64(8), T.int64(8)))
        c_pad = T.sblock_alloc_buffer((n, T.int64(5), T.int64(8)))
        for i0, i1, i2 in T.grid(n, T.int64(8), T.int64(8)):
            with T.sblock("b_pad"):
                v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(b[v0, v1, v2])
                T.writes(b_pad[v0, v1, v2])
                b_pad[v0, v1, v2] = T.if_then_else(v2 < T.int64(7), b[v0, v1, v2], T.float32(0.0))
        for i0, i1, i2, k in T.grid(n, T.int64(5), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
                T.reads(a[v_i0, v_i1, v_k], b_pad[v_i0, v_k, v_i2])
                T.writes(c_pad[v_i0, v_i1, v_i2])
                with T.init():
                    c_pad[v_i0, v_i1, v_i2] = T.float32(0.0)
                c_pad[v_i0, v_i1, v_i2] = c_pad[v_i0, v_i1, v_i2] + a[v_i0, v_i1, v_k] * b_pad[v_i0, v_k, v_i2]
        for i0, i1, i2 in T.grid(n, T.int64(5), T.int64(7)):
            with T.sblock("c_pad"):
                v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(c_pad[v0, v1, v2])
                T.writes(c[v0, v1, v2])
                c[v0, v1, v2] = c_pad[v0, v1, v2]""",
}
