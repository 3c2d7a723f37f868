"""TVMScript printed by Apache TVM 0.27 for the schedules in test_primitives.py (generated once with TVM; tvmlite must match them byte for byte):
the inputs (MATMUL, CHAIN, ROWSUM, PAD, ARGMAX, EINSUM) and what each schedule turns them into."""

MATMUL = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i, j, k in T.grid(T.int64(8), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

CHAIN = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
"""

ROWSUM = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
"""

PAD = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(4)), "float32"), C: T.Buffer((T.int64(6), T.int64(6)), "float32")):
        # with T.sblock("root"):
        P = T.sblock_alloc_buffer((T.int64(6), T.int64(6)))
        for i, j in T.grid(T.int64(6), T.int64(6)):
            with T.sblock("P"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi - T.int64(1), vj - T.int64(1)])
                T.writes(P[vi, vj])
                P[vi, vj] = T.if_then_else(T.int64(1) <= vi and vi < T.int64(5) and T.int64(1) <= vj and vj < T.int64(5), A[vi - T.int64(1), vj - T.int64(1)], T.float32(0.0))
        for i, j in T.grid(T.int64(6), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(P[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = P[vi, vj] * T.float32(2.0)
"""

ARGMAX = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), idx: T.Buffer((T.int64(4),), "int64"), val: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("argmax"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(idx[vi], val[vi])
                with T.init():
                    idx[vi] = T.int64(-1)
                    val[vi] = T.float32(-340282346638528859811704183484516925440.0)
                v_idx: T.let[T.int64] = T.Select(val[vi] > A[vi, vk] or val[vi] == A[vi, vk] and idx[vi] < vk, idx[vi], vk)
                v_val: T.let[T.float32] = T.Select(val[vi] > A[vi, vk], val[vi], A[vi, vk])
                idx[vi] = v_idx
                val[vi] = v_val
"""

# A loop that does not start at 0 around the block.
OFFSET = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(6), T.int64(8)), "float32"), C: T.Buffer((T.int64(6), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i in range(T.int64(1), T.int64(5)):
            for j in range(T.int64(8)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = A[vi, vj] * T.float32(2.0)
"""

# A reduction followed by an elementwise epilogue, and a three-stage chain.
REDUCE_EPILOGUE = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), C: T.Buffer((T.int64(4),), "float32")):
        B = T.sblock_alloc_buffer((T.int64(4),))
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(T.int64(4)):
            with T.sblock("C"):
                vi = T.axis.spatial(T.int64(4), i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi] * T.float32(0.5)
"""

CHAIN3 = (
    CHAIN.replace(
        'C: T.Buffer((T.int64(4), T.int64(6)), "float32")):',
        'D: T.Buffer((T.int64(4), T.int64(6)), "float32")):',
    ).replace(
        "B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))",
        "B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))\n"
        "        C = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))",
    )
    + """        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = C[vi, vj] * T.float32(3.0)
"""
)

EINSUM = """# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(5), T.int64(3)), "float32"), W: T.Buffer((T.int64(6), T.int64(3)), "float32"), D: T.Buffer((T.int64(5), T.int64(6)), "float32")):
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((T.int64(5), T.int64(6)))
        for i, j, k in T.grid(T.int64(5), T.int64(6), T.int64(3)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], W[vj, vk])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vj, vk]
        for i, j in T.grid(T.int64(5), T.int64(6)):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
"""

EXPECTED = {
    "pad_einsum": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(5), T.int64(3)), "float32"), W: T.Buffer((T.int64(6), T.int64(3)), "float32"), D: T.Buffer((T.int64(5), T.int64(6)), "float32")):
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((T.int64(5), T.int64(6)))
        A_pad = T.sblock_alloc_buffer((T.int64(8), T.int64(3)))
        W_pad = T.sblock_alloc_buffer((T.int64(8), T.int64(3)))
        C_pad = T.sblock_alloc_buffer((T.int64(8), T.int64(8)))
        for i0, i1 in T.grid(T.int64(8), T.int64(3)):
            with T.sblock("A_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v0, v1])
                T.writes(A_pad[v0, v1])
                A_pad[v0, v1] = T.if_then_else(v0 < T.int64(5), A[v0, v1], T.float32(0.0))
        for i0, i1 in T.grid(T.int64(8), T.int64(3)):
            with T.sblock("W_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(W[v0, v1])
                T.writes(W_pad[v0, v1])
                W_pad[v0, v1] = T.if_then_else(v0 < T.int64(6), W[v0, v1], T.float32(0.0))
        for i, j, k in T.grid(T.int64(8), T.int64(8), T.int64(3)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A_pad[vi, vk], W_pad[vj, vk])
                T.writes(C_pad[vi, vj])
                with T.init():
                    C_pad[vi, vj] = T.float32(0.0)
                C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * W_pad[vj, vk]
        for i0, i1 in T.grid(T.int64(5), T.int64(6)):
            with T.sblock("C_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(C_pad[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_pad[v0, v1]
        for i, j in T.grid(T.int64(5), T.int64(6)):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
""",
    "pad_einsum_reduction": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(5), T.int64(3)), "float32"), W: T.Buffer((T.int64(6), T.int64(3)), "float32"), D: T.Buffer((T.int64(5), T.int64(6)), "float32")):
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((T.int64(5), T.int64(6)))
        A_pad = T.sblock_alloc_buffer((T.int64(5), T.int64(4)))
        W_pad = T.sblock_alloc_buffer((T.int64(8), T.int64(4)))
        C_pad = T.sblock_alloc_buffer((T.int64(5), T.int64(8)))
        for i0, i1 in T.grid(T.int64(5), T.int64(4)):
            with T.sblock("A_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v0, v1])
                T.writes(A_pad[v0, v1])
                A_pad[v0, v1] = T.if_then_else(v1 < T.int64(3), A[v0, v1], T.float32(0.0))
        for i0, i1 in T.grid(T.int64(8), T.int64(4)):
            with T.sblock("W_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(W[v0, v1])
                T.writes(W_pad[v0, v1])
                W_pad[v0, v1] = T.if_then_else(v0 < T.int64(6) and v1 < T.int64(3), W[v0, v1], T.float32(0.0))
        for i, j, k in T.grid(T.int64(5), T.int64(8), T.int64(4)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A_pad[vi, vk], W_pad[vj, vk])
                T.writes(C_pad[vi, vj])
                with T.init():
                    C_pad[vi, vj] = T.float32(0.0)
                C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * W_pad[vj, vk]
        for i0, i1 in T.grid(T.int64(5), T.int64(6)):
            with T.sblock("C_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(C_pad[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_pad[v0, v1]
        for i, j in T.grid(T.int64(5), T.int64(6)):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
""",
    "split": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i_0, i_1, j, k in T.grid(T.int64(2), T.int64(4), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                vi = T.axis.spatial(T.int64(8), i_0 * T.int64(4) + i_1)
                vj, vk = T.axis.remap("SR", [j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "split_pred": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i, j_0, j_1, k in T.grid(T.int64(8), T.int64(3), T.int64(3), T.int64(8)):
            with T.sblock("C"):
                vi = T.axis.spatial(T.int64(8), i)
                vj = T.axis.spatial(T.int64(8), j_0 * T.int64(3) + j_1)
                vk = T.axis.reduce(T.int64(8), k)
                T.where(j_0 * T.int64(3) + j_1 < T.int64(8))
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "fuse": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i_j_fused in T.parallel(T.int64(64)):
            for k in range(T.int64(8)):
                with T.sblock("C"):
                    vi = T.axis.spatial(T.int64(8), i_j_fused // T.int64(8))
                    vj = T.axis.spatial(T.int64(8), i_j_fused % T.int64(8))
                    vk = T.axis.reduce(T.int64(8), k)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "reorder": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for k, j, i in T.grid(T.int64(8), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "tile": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i_0_j_0_fused in T.parallel(T.int64(8)):
            for i_1_init in T.unroll(T.int64(2)):
                for j_1_init in T.vectorized(T.int64(4)):
                    with T.sblock("C_init"):
                        vi = T.axis.spatial(T.int64(8), i_0_j_0_fused // T.int64(2) * T.int64(2) + i_1_init)
                        vj = T.axis.spatial(T.int64(8), i_0_j_0_fused % T.int64(2) * T.int64(4) + j_1_init)
                        T.reads()
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.float32(0.0)
            for k in range(T.int64(8)):
                for i_1 in T.unroll(T.int64(2)):
                    for j_1 in T.vectorized(T.int64(4)):
                        with T.sblock("C_update"):
                            vi = T.axis.spatial(T.int64(8), i_0_j_0_fused // T.int64(2) * T.int64(2) + i_1)
                            vj = T.axis.spatial(T.int64(8), i_0_j_0_fused % T.int64(2) * T.int64(4) + j_1)
                            vk = T.axis.reduce(T.int64(8), k)
                            T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""",
    "inline": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)
""",
    "rinline": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)
""",
    "at": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i in range(T.int64(4)):
            for ax0 in range(T.int64(6)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for j in range(T.int64(6)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "rat": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i in range(T.int64(4)):
            for j in range(T.int64(6)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for ax0 in range(T.int64(6)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "cache": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        B_global = T.sblock_alloc_buffer((T.int64(8), T.int64(8)))
        C_local = T.sblock_alloc_buffer((T.int64(8), T.int64(8)), scope="local")
        for ax0, ax1 in T.grid(T.int64(8), T.int64(8)):
            with T.sblock("B_global"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v0, v1])
                T.writes(B_global[v0, v1])
                B_global[v0, v1] = B[v0, v1]
        for i, j, k in T.grid(T.int64(8), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B_global[vk, vj])
                T.writes(C_local[vi, vj])
                with T.init():
                    C_local[vi, vj] = T.float32(0.0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B_global[vk, vj]
        for ax0, ax1 in T.grid(T.int64(8), T.int64(8)):
            with T.sblock("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(C_local[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_local[v0, v1]
""",
    "storage": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B_local = T.sblock_alloc_buffer((T.int64(4), T.int64(6)), scope="local")
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B_local[vi, vj])
                T.sblock_attr({"buffer_dim_align": [[0, 0, 8, 1]]})
                B_local[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B_local[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B_local[vi, vj] + T.float32(1.0)
""",
    "layout": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(2), T.int64(4), T.int64(3)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vj // T.int64(3), vi, vj % T.int64(3)])
                B[vj // T.int64(3), vi, vj % T.int64(3)] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vj // T.int64(3), vi, vj % T.int64(3)])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vj // T.int64(3), vi, vj % T.int64(3)] + T.float32(1.0)
""",
    "block_layout": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for ax0, ax1 in T.grid(T.int64(6), T.int64(4)):
            with T.sblock("C"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v1, v0])
                T.writes(C[v1, v0])
                C[v1, v0] = B[v1, v0] + T.float32(1.0)
""",
    "rfactor": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        B_rf = T.sblock_alloc_buffer((T.int64(4), T.int64(4)))
        for i, k_0, k_1 in T.grid(T.int64(4), T.int64(2), T.int64(4)):
            with T.sblock("B_rf"):
                vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                T.reads(A[vi, vk_0 * T.int64(4) + vk_1])
                T.writes(B_rf[vk_1, vi])
                with T.init():
                    B_rf[vk_1, vi] = T.float32(0.0)
                B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * T.int64(4) + vk_1]
        for i, k_1 in T.grid(T.int64(4), T.int64(4)):
            with T.sblock("B"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])
                T.reads(B_rf[vk_1, vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + B_rf[vk_1, vi]
""",
    "reindex": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        C_reindex = T.sblock_alloc_buffer((T.int64(8), T.int64(8)))
        for i, j, k in T.grid(T.int64(8), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C_reindex[vi, vj])
                with T.init():
                    C_reindex[vi, vj] = T.float32(0.0)
                C_reindex[vi, vj] = C_reindex[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(T.int64(8), T.int64(8)):
            with T.sblock("C_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(C_reindex[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_reindex[v0, v1]
""",
    "merge": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i_m in range(T.int64(4)):
            for j in range(T.int64(6)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i_m, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for j in range(T.int64(6)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i_m, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "unit": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j, u in T.grid(T.int64(4), T.int64(6), 1):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "annotate": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i in T.serial(T.int64(4), annotations={"pragma_auto_unroll_max_step": 16}):
            for j in range(T.int64(6)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    T.sblock_attr({"meta_schedule.vectorize": 8})
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "blockize": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i_0, j_0, k in T.grid(T.int64(4), T.int64(2), T.int64(8)):
            with T.sblock("C_o"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k])
                T.reads(A[vi_o * T.int64(2):vi_o * T.int64(2) + T.int64(2), vk_o], B[vk_o, vj_o * T.int64(4):vj_o * T.int64(4) + T.int64(4)])
                T.writes(C[vi_o * T.int64(2):vi_o * T.int64(2) + T.int64(2), vj_o * T.int64(4):vj_o * T.int64(4) + T.int64(4)])
                with T.init():
                    for i_1, j_1 in T.grid(T.int64(2), T.int64(4)):
                        with T.sblock("C_init"):
                            vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                            T.reads()
                            T.writes(C[vi_o * T.int64(2) + vi_i_init, vj_o * T.int64(4) + vj_i_init])
                            C[vi_o * T.int64(2) + vi_i_init, vj_o * T.int64(4) + vj_i_init] = T.float32(0.0)
                for i_1, j_1 in T.grid(T.int64(2), T.int64(4)):
                    with T.sblock("C"):
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])
                        T.reads(C[vi_o * T.int64(2) + vi_i, vj_o * T.int64(4) + vj_i], A[vi_o * T.int64(2) + vi_i, vk_o], B[vk_o, vj_o * T.int64(4) + vj_i])
                        T.writes(C[vi_o * T.int64(2) + vi_i, vj_o * T.int64(4) + vj_i])
                        C[vi_o * T.int64(2) + vi_i, vj_o * T.int64(4) + vj_i] = C[vi_o * T.int64(2) + vi_i, vj_o * T.int64(4) + vj_i] + A[vi_o * T.int64(2) + vi_i, vk_o] * B[vk_o, vj_o * T.int64(4) + vj_i]
""",
    "padding": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(4)), "float32"), C: T.Buffer((T.int64(6), T.int64(6)), "float32")):
        # with T.sblock("root"):
        P = T.sblock_alloc_buffer((T.int64(6), T.int64(6)))
        for i, j in T.grid(T.int64(6), T.int64(6)):
            with T.sblock("P_pad_const"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(P[vi, vj])
                P[vi, vj] = T.float32(0.0)
        for i, j in T.grid(T.int64(4), T.int64(4)):
            with T.sblock("P"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(P[vi + T.int64(1), vj + T.int64(1)])
                P[vi + T.int64(1), vj + T.int64(1)] = A[vi, vj]
        for i, j in T.grid(T.int64(6), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(P[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = P[vi, vj] * T.float32(2.0)
""",
    "argmax_rfactor": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), idx: T.Buffer((T.int64(4),), "int64"), val: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        idx_rf = T.sblock_alloc_buffer((T.int64(2), T.int64(4)), "int64")
        val_rf = T.sblock_alloc_buffer((T.int64(2), T.int64(4)))
        for i, k_0, k_1 in T.grid(T.int64(4), T.int64(4), T.int64(2)):
            with T.sblock("argmax_rf"):
                vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                T.reads(A[vi, vk_0 * T.int64(2) + vk_1])
                T.writes(idx_rf[vk_1, vi], val_rf[vk_1, vi])
                with T.init():
                    idx_rf[vk_1, vi] = T.int64(-1)
                    val_rf[vk_1, vi] = T.float32(-340282346638528859811704183484516925440.0)
                v_idx_rf: T.let[T.int64] = T.Select(val_rf[vk_1, vi] > A[vi, vk_0 * T.int64(2) + vk_1] or val_rf[vk_1, vi] == A[vi, vk_0 * T.int64(2) + vk_1] and idx_rf[vk_1, vi] < vk_0 * T.int64(2) + vk_1, idx_rf[vk_1, vi], vk_0 * T.int64(2) + vk_1)
                v_val_rf: T.let[T.float32] = T.Select(val_rf[vk_1, vi] > A[vi, vk_0 * T.int64(2) + vk_1], val_rf[vk_1, vi], A[vi, vk_0 * T.int64(2) + vk_1])
                idx_rf[vk_1, vi] = v_idx_rf
                val_rf[vk_1, vi] = v_val_rf
        for i, k_1 in T.grid(T.int64(4), T.int64(2)):
            with T.sblock("argmax"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])
                T.reads(idx_rf[vk_1, vi], val_rf[vk_1, vi])
                T.writes(idx[vi], val[vi])
                with T.init():
                    idx[vi] = T.int64(-1)
                    val[vi] = T.float32(-340282346638528859811704183484516925440.0)
                v_idx: T.let[T.int64] = T.Select(val[vi] > val_rf[vk_1, vi] or val[vi] == val_rf[vk_1, vi] and idx[vi] < idx_rf[vk_1, vi], idx[vi], idx_rf[vk_1, vi])
                v_val: T.let[T.float32] = T.Select(val[vi] > val_rf[vk_1, vi], val[vi], val_rf[vk_1, vi])
                idx[vi] = v_idx
                val[vi] = v_val
""",
    "unannotate": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                T.sblock_attr({"meta_schedule.vectorize": 8})
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "param_layout": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(6), T.int64(4)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vj, vi])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vj, vi] * T.float32(2.0)
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
    "split_layout": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for ax0, ax1, ax2 in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.sblock("C"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(B[v1, v0 * T.int64(3) + v2])
                T.writes(C[v1, v0 * T.int64(3) + v2])
                C[v1, v0 * T.int64(3) + v2] = B[v1, v0 * T.int64(3) + v2] + T.float32(1.0)
""",
    "fused_layout": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for ax0, ax1, ax2 in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.sblock("C"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(B[v0 * T.int64(2) + (v1 * T.int64(3) + v2) // T.int64(6), (v1 * T.int64(3) + v2) % T.int64(6)])
                T.writes(C[v0 * T.int64(2) + (v1 * T.int64(3) + v2) // T.int64(6), (v1 * T.int64(3) + v2) % T.int64(6)])
                C[v0 * T.int64(2) + (v1 * T.int64(3) + v2) // T.int64(6), (v1 * T.int64(3) + v2) % T.int64(6)] = B[v0 * T.int64(2) + (v1 * T.int64(3) + v2) // T.int64(6), (v1 * T.int64(3) + v2) % T.int64(6)] + T.float32(1.0)
""",
    "reduce_layout": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(64), T.int64(8)):
            with T.sblock("C"):
                v0, v1 = T.axis.remap("SR", [ax0, ax1])
                T.reads(A[v0 // T.int64(8), v1], B[v1, v0 % T.int64(8)])
                T.writes(C[v0 // T.int64(8), v0 % T.int64(8)])
                with T.init():
                    C[v0 // T.int64(8), v0 % T.int64(8)] = T.float32(0.0)
                C[v0 // T.int64(8), v0 % T.int64(8)] = C[v0 // T.int64(8), v0 % T.int64(8)] + A[v0 // T.int64(8), v1] * B[v1, v0 % T.int64(8)]
""",
    "cache_at": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        A_local = T.sblock_alloc_buffer((T.int64(8), T.int64(8)), scope="local")
        C_local = T.sblock_alloc_buffer((T.int64(8), T.int64(8)), scope="local")
        for i_0 in range(T.int64(2)):
            for k in range(T.int64(8)):
                for ax0 in range(T.int64(4)):
                    with T.sblock("A_local"):
                        v0 = T.axis.spatial(T.int64(8), i_0 * T.int64(4) + ax0)
                        v1 = T.axis.spatial(T.int64(8), k)
                        T.reads(A[v0, v1])
                        T.writes(A_local[v0, v1])
                        A_local[v0, v1] = A[v0, v1]
                for j, i_1 in T.grid(T.int64(8), T.int64(4)):
                    with T.sblock("C"):
                        vi = T.axis.spatial(T.int64(8), i_0 * T.int64(4) + i_1)
                        vj, vk = T.axis.remap("SR", [j, k])
                        T.reads(A_local[vi, vk], B[vk, vj])
                        T.writes(C_local[vi, vj])
                        with T.init():
                            C_local[vi, vj] = T.float32(0.0)
                        C_local[vi, vj] = C_local[vi, vj] + A_local[vi, vk] * B[vk, vj]
            for ax0, ax1 in T.grid(T.int64(4), T.int64(8)):
                with T.sblock("C_local"):
                    v0 = T.axis.spatial(T.int64(8), i_0 * T.int64(4) + ax0)
                    v1 = T.axis.spatial(T.int64(8), ax1)
                    T.reads(C_local[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_local[v0, v1]
""",
    "rfactor_whole": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        B_rf = T.sblock_alloc_buffer((T.int64(8), T.int64(4)))
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("B_rf"):
                vk, vi = T.axis.remap("SS", [k, i])
                T.reads(A[vi, vk])
                T.writes(B_rf[vk, vi])
                B_rf[vk, vi] = A[vi, vk]
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("B"):
                vk, vi = T.axis.remap("RS", [k, i])
                T.reads(B_rf[vk, vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + B_rf[vk, vi]
""",
    "argmax_rfactor_whole": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), idx: T.Buffer((T.int64(4),), "int64"), val: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        idx_rf = T.sblock_alloc_buffer((T.int64(8), T.int64(4)), "int64")
        val_rf = T.sblock_alloc_buffer((T.int64(8), T.int64(4)))
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("argmax_rf"):
                vk, vi = T.axis.remap("SS", [k, i])
                T.reads(A[vi, vk])
                T.writes(idx_rf[vk, vi], val_rf[vk, vi])
                idx_rf[vk, vi] = vk
                val_rf[vk, vi] = A[vi, vk]
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("argmax"):
                vk, vi = T.axis.remap("RS", [k, i])
                T.reads(idx_rf[vk, vi], val_rf[vk, vi])
                T.writes(idx[vi], val[vi])
                with T.init():
                    idx[vi] = T.int64(-1)
                    val[vi] = T.float32(-340282346638528859811704183484516925440.0)
                v_idx: T.let[T.int64] = T.Select(val[vi] > val_rf[vk, vi] or val[vi] == val_rf[vk, vi] and idx[vi] < idx_rf[vk, vi], idx[vi], idx_rf[vk, vi])
                v_val: T.let[T.float32] = T.Select(val[vi] > val_rf[vk, vi], val[vi], val_rf[vk, vi])
                idx[vi] = v_idx
                val[vi] = v_val
""",
    "split_offset": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(6), T.int64(8)), "float32"), C: T.Buffer((T.int64(6), T.int64(8)), "float32")):
        # with T.sblock("root"):
        for i in range(T.int64(1), T.int64(5)):
            for j_0, j_1 in T.grid(T.int64(2), T.int64(4)):
                with T.sblock("C"):
                    vi = T.axis.spatial((T.int64(1), T.int64(5)), i - T.int64(1) + T.int64(1))
                    vj = T.axis.spatial(T.int64(8), j_0 * T.int64(4) + j_1)
                    T.reads(A[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = A[vi, vj] * T.float32(2.0)
""",
    "cache_write_nested": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), D: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        C = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        C_global = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i, j in T.grid(T.int64(4), T.int64(6)):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i in range(T.int64(4)):
            for ax0, ax1 in T.grid(T.int64(1), T.int64(6)):
                with T.sblock("C"):
                    vi = T.axis.spatial(T.int64(4), i + ax0)
                    vj = T.axis.spatial(T.int64(6), ax1)
                    T.reads(B[vi, vj])
                    T.writes(C_global[vi, vj])
                    C_global[vi, vj] = B[vi, vj] + T.float32(1.0)
            for ax0, ax1 in T.grid(T.int64(1), T.int64(6)):
                with T.sblock("C_global"):
                    v0 = T.axis.spatial(T.int64(4), i + ax0)
                    v1 = T.axis.spatial(T.int64(6), ax1)
                    T.reads(C_global[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_global[v0, v1]
            for j in range(T.int64(6)):
                with T.sblock("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(C[vi, vj])
                    T.writes(D[vi, vj])
                    D[vi, vj] = C[vi, vj] * T.float32(3.0)
""",
    "cache_write_compact": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(6), T.int64(8)), "float32"), C: T.Buffer((T.int64(6), T.int64(8)), "float32")):
        # with T.sblock("root"):
        C_local = T.sblock_alloc_buffer((T.int64(4), T.int64(8)), scope="local")
        for i in range(T.int64(1), T.int64(5)):
            for j in range(T.int64(8)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(C_local[vi - T.int64(1), vj])
                    C_local[vi - T.int64(1), vj] = A[vi, vj] * T.float32(2.0)
        for ax0, ax1 in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(C_local[v0, v1])
                T.writes(C[T.int64(1) + v0, v1])
                C[T.int64(1) + v0, v1] = C_local[v0, v1]
""",
    "cache_read_nested": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        B_local = T.sblock_alloc_buffer((T.int64(4), T.int64(6)), scope="local")
        for i in range(T.int64(4)):
            for ax0 in range(T.int64(6)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for ax0, ax1 in T.grid(T.int64(1), T.int64(6)):
                with T.sblock("B_local"):
                    v0 = T.axis.spatial(T.int64(4), i + ax0)
                    v1 = T.axis.spatial(T.int64(6), ax1)
                    T.reads(B[v0, v1])
                    T.writes(B_local[v0, v1])
                    B_local[v0, v1] = B[v0, v1]
            for j in range(T.int64(6)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B_local[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B_local[vi, vj] + T.float32(1.0)
""",
    "reindex_transposed": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32"), C: T.Buffer((T.int64(8), T.int64(8)), "float32")):
        # with T.sblock("root"):
        B_reindex = T.sblock_alloc_buffer((T.int64(8), T.int64(8)))
        for ax0, ax1 in T.grid(T.int64(8), T.int64(8)):
            with T.sblock("B_reindex_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v1, v0])
                T.writes(B_reindex[v0, v1])
                B_reindex[v0, v1] = B[v1, v0]
        for i, j, k in T.grid(T.int64(8), T.int64(8), T.int64(8)):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B_reindex[vj, vk])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B_reindex[vj, vk]
""",
    "reindex_offset": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(6), T.int64(8)), "float32"), C: T.Buffer((T.int64(6), T.int64(8)), "float32")):
        # with T.sblock("root"):
        C_reindex = T.sblock_alloc_buffer((T.int64(5), T.int64(8)))
        for i in range(T.int64(1), T.int64(5)):
            for j in range(T.int64(8)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(C_reindex[vi, vj])
                    C_reindex[vi, vj] = A[vi, vj] * T.float32(2.0)
        for ax0 in range(T.int64(1), T.int64(5)):
            for ax1 in range(T.int64(8)):
                with T.sblock("C_reindex"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(C_reindex[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_reindex[v0, v1]
""",
    "layout_in_context": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), C: T.Buffer((T.int64(1), T.int64(4)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4),))
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(T.int64(4)):
            with T.sblock("C"):
                vi = T.axis.spatial(T.int64(4), i)
                T.reads(B[vi])
                T.writes(C[T.int64(0), vi])
                C[T.int64(0), vi] = B[vi] * T.float32(0.5)
""",
    "blockize_argmax": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(8)), "float32"), idx: T.Buffer((T.int64(4),), "int64"), val: T.Buffer((T.int64(4),), "float32")):
        # with T.sblock("root"):
        for i in range(T.int64(4)):
            with T.sblock("argmax_o"):
                vi_o = T.axis.spatial(T.int64(4), i)
                vk_o = T.axis.reduce(T.int64(1), T.int64(0))
                T.reads(A[vi_o, T.int64(0):T.int64(8)])
                T.writes(idx[vi_o], val[vi_o])
                with T.init():
                    with T.sblock("argmax_init"):
                        T.reads()
                        T.writes(idx[vi_o], val[vi_o])
                        idx[vi_o] = T.int64(-1)
                        val[vi_o] = T.float32(-340282346638528859811704183484516925440.0)
                for k in range(T.int64(8)):
                    with T.sblock("argmax"):
                        vk_i = T.axis.reduce(T.int64(8), k)
                        T.reads(idx[vi_o], val[vi_o], A[vi_o, vk_i])
                        T.writes(idx[vi_o], val[vi_o])
                        v_idx: T.let[T.int64] = T.Select(A[vi_o, vk_i] < val[vi_o] or val[vi_o] == A[vi_o, vk_i] and idx[vi_o] < vk_i, idx[vi_o], vk_i)
                        v_val: T.let[T.float32] = T.Select(A[vi_o, vk_i] < val[vi_o], val[vi_o], A[vi_o, vk_i])
                        idx[vi_o] = v_idx
                        val[vi_o] = v_val
""",
    "at_after_split": """# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(4), T.int64(6)), "float32"), C: T.Buffer((T.int64(4), T.int64(6)), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((T.int64(4), T.int64(6)))
        for i in range(T.int64(4)):
            for ax0 in range(T.int64(6)):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for j in range(T.int64(6)):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
""",
}
