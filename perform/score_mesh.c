/* score_mesh.c - solids from mesh files (OBJ, STL, PLY and the other
 * formats libassimp reads) for the orchestra's `solid ... mesh "FILE"`:
 * every triangle of every mesh of the file, its nodes' transforms applied,
 * scaled and moved into the room.  Whether the surface is closed is the
 * room's check (room/room_mesh.c), which says where it leaks.  Built without
 * libassimp, a mesh is refused with the reason. */
#include "score_internal.h"

#include <stdlib.h>
#include <string.h>

#ifdef KETTLE_HAVE_ASSIMP
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

/* The triangles of a scene whose transforms are already applied (one mesh
 * list in world coordinates: aiProcess_PreTransformVertices). */
static int collect(const struct aiScene *sc, double scale, const double at_m[3], double **out,
                   int *count, kt_error *err)
{
    size_t n = 0;
    for (unsigned m = 0; m < sc->mNumMeshes; m++)
        for (unsigned f = 0; f < sc->mMeshes[m]->mNumFaces; f++)
            n += sc->mMeshes[m]->mFaces[f].mNumIndices == 3;
    if (n == 0 || n > 50000000)
        return kt_fail(err, KT_EINVAL, "it holds %zu triangles (1 to 50 million wanted)", n);
    double *xyz = malloc(sizeof *xyz * 9 * n);
    if (!xyz)
        return kt_fail(err, KT_ENOMEM, "out of memory for its %zu triangles", n);
    size_t t = 0;
    for (unsigned m = 0; m < sc->mNumMeshes; m++) {
        const struct aiMesh *me = sc->mMeshes[m];
        for (unsigned f = 0; f < me->mNumFaces; f++) {
            if (me->mFaces[f].mNumIndices != 3)
                continue;                /* points and lines bound no volume */
            for (int k = 0; k < 3; k++) {
                const struct aiVector3D *v = &me->mVertices[me->mFaces[f].mIndices[k]];
                const double p[3] = {v->x, v->y, v->z};
                for (int d = 0; d < 3; d++)
                    xyz[9 * t + 3 * k + d] = at_m[d] + scale * p[d];
            }
            t++;
        }
    }
    *out = xyz;
    *count = (int)n;
    return KT_OK;
}

int kt_mesh_load(const char *path, double scale, const double at_m[3], double **xyz,
                 int *triangles, kt_error *err)
{
    /* one list of triangles in the file's world coordinates, shared corners
     * joined (the room's closedness check compares them exactly) */
    const struct aiScene *sc = aiImportFile(path, aiProcess_Triangulate |
                                                      aiProcess_JoinIdenticalVertices |
                                                      aiProcess_PreTransformVertices);
    if (!sc)
        return kt_fail(err, KT_EINVAL, "cannot read mesh %s: %s", path, aiGetErrorString());
    int rc = collect(sc, scale, at_m, xyz, triangles, err);
    aiReleaseImport(sc);
    return rc;
}
#else
int kt_mesh_load(const char *path, double scale, const double at_m[3], double **xyz,
                 int *triangles, kt_error *err)
{
    (void)scale, (void)at_m, (void)xyz, (void)triangles;
    return kt_fail(err, KT_ENOTSUP, "cannot read mesh %s: this build has no mesh reader "
                                    "(install libassimp-dev and rebuild)", path);
}
#endif
