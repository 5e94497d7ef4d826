/* kt_cuda_rn.cuh - device arithmetic that nvcc never contracts into FMAs
 * (the _rn intrinsics), for the kernels that must give the CPU's bits: the
 * C compiler does not contract either (ISO C11 mode), so the same sequence
 * of these operations rounds the same on both.  Shared by the room's
 * kernels (cuda/room_*.cu). */
#ifndef KT_CUDA_RN_CUH
#define KT_CUDA_RN_CUH

static __device__ __forceinline__ float rn_mul(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ float rn_add(float a, float b) { return __fadd_rn(a, b); }
static __device__ __forceinline__ float rn_sub(float a, float b) { return __fsub_rn(a, b); }
static __device__ __forceinline__ double rn_mul(double a, double b) { return __dmul_rn(a, b); }
static __device__ __forceinline__ double rn_add(double a, double b) { return __dadd_rn(a, b); }
static __device__ __forceinline__ double rn_sub(double a, double b) { return __dsub_rn(a, b); }

/* f + v in the field's precision, as room_add (room/room_internal.h)
 * rounds it: float + (float)v, or double + v. */
static __device__ __forceinline__ float rn_field_add(float f, double v) { return __fadd_rn(f, (float)v); }
static __device__ __forceinline__ double rn_field_add(double f, double v) { return __dadd_rn(f, v); }

/* One leg pair of room/room_stencil_impl.h's row pass: v + w (a + b). */
template <typename REAL>
static __device__ __forceinline__ REAL rn_pair(REAL v, REAL w, REAL a, REAL b)
{
    return rn_add(v, rn_mul(w, rn_add(a, b)));
}

#endif
