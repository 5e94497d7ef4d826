/* room_block_float.cu - the blocked pass's kernels in single precision
 * (room_block_pass.cuh). */
#define ROOM_BLOCK_INSTANCES
#include "room_block_pass.cuh"

void room_block_launch(const block_args<float> &a, int depth, int tile, dim3 grid,
                       cudaStream_t stream, int *resident)
{
    block_launch<float>(a, depth, tile, grid, stream, resident);
}
