/* The C side of the benchmarks: the same operations as the Rust benchmarks, written as a C
 * program would write them, compiled by build.rs with the flags of the MPI compiler wrapper and
 * linked into the benchmark binaries only. Each function runs `iters` iterations on
 * MPI_COMM_WORLD and returns the elapsed seconds. Built with -fno-plt, so that it calls MPI as
 * rustc does, through the GOT (tools/call-form.sh measures what the PLT changes). */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* build.rs defines FERROMPI_PERSISTENT_COLL when mpi.h declares MPI_Allreduce_init and
 * FERROMPI_MPIX_PERSISTENT_COLL when mpi-ext.h declares MPIX_Allreduce_init: what the MPI
 * declares, not its MPI_VERSION (Open MPI 5 declares MPI-4's calls but reports 3.1). */
#if defined(FERROMPI_MPIX_PERSISTENT_COLL)
#  include <mpi-ext.h>
#endif

double ferrompi_c_allreduce(long iters, const double *send, double *recv, int count) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return MPI_Wtime() - start;
}

double ferrompi_c_iallreduce(long iters, const double *send, double *recv, int count) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Request request;
        MPI_Iallreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - start;
}

/* A persistent allreduce, made once: MPI-4's, or Open MPI's MPIX_ one. NULL without either. */
void *ferrompi_c_allreduce_init(const double *send, double *recv, int count) {
    MPI_Request *request = malloc(sizeof *request);
    int rc = MPI_ERR_UNSUPPORTED_OPERATION;
    (void)send, (void)recv, (void)count;
    if (request == NULL)
        return NULL;
#if defined(FERROMPI_PERSISTENT_COLL)
    rc = MPI_Allreduce_init(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, request);
#elif defined(FERROMPI_MPIX_PERSISTENT_COLL)
    rc = MPIX_Allreduce_init(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                             MPI_INFO_NULL, request);
#endif
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        fprintf(stderr, "persistent allreduce init failed: %s\n", text);
        free(request);
        return NULL;
    }
    return request;
}

double ferrompi_c_persistent(long iters, void *request) {
    MPI_Request *r = request;
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Start(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - start;
}

void ferrompi_c_request_free(void *request) {
    MPI_Request_free(request);
    free(request);
}

/* Round trips between ranks 0 and 1 (the others wait in the final barrier of the harness). */
/* A particle as a C program declares it, and its datatype as a C program makes it: the fields
 * at their offsets, resized to the struct's size (4 bytes of padding at the end, not sent). */
struct ferrompi_c_particle {
    double position[3];
    unsigned int id;
};

MPI_Datatype ferrompi_c_particle_type(void) {
    int lengths[2] = {3, 1};
    MPI_Aint offsets[2] = {offsetof(struct ferrompi_c_particle, position),
                           offsetof(struct ferrompi_c_particle, id)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_UINT32_T}, joined, whole;
    MPI_Type_create_struct(2, lengths, offsets, types, &joined);
    MPI_Type_create_resized(joined, 0, sizeof(struct ferrompi_c_particle), &whole);
    MPI_Type_free(&joined);
    MPI_Type_commit(&whole);
    return whole;
}

/* A ping-pong of `count` values of `type` (a struct datatype, or MPI_BYTE). */
double ferrompi_c_pingpong_typed(long iters, void *buf, int count, MPI_Datatype type) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, count, type, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, count, type, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, count, type, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, type, 0, 1, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - start;
}

double ferrompi_c_pingpong(long iters, char *buf, int bytes) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - start;
}

/* OSU-style bandwidth: rank 0 posts `window` sends of one buffer, rank 1 `window` receives into
 * its `window` buffers (`stride` bytes apart); then a one-byte acknowledgement. */
double ferrompi_c_bandwidth(long iters, char *buf, int bytes, int window, long stride,
                            MPI_Request *requests) {
    int rank;
    char ack = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(buf, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(window, requests, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < window; w++)
                MPI_Irecv(buf + w * stride, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(window, requests, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - start;
}

/* Eight receives from and eight sends to the partner rank (rank ^ 1), then one wait-all. */
double ferrompi_c_exchange8(long iters, const char *send, char *recv, int bytes, long stride,
                            MPI_Request *requests) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        for (int k = 0; k < 8; k++)
            MPI_Irecv(recv + k * stride, bytes, MPI_BYTE, peer, k, MPI_COMM_WORLD, &requests[k]);
        for (int k = 0; k < 8; k++)
            MPI_Isend(send, bytes, MPI_BYTE, peer, k, MPI_COMM_WORLD, &requests[8 + k]);
        MPI_Waitall(16, requests, MPI_STATUSES_IGNORE);
    }
    return MPI_Wtime() - start;
}

double ferrompi_c_barrier(long iters) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - start;
}

double ferrompi_c_bcast(long iters, char *buf, int bytes) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Bcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    return MPI_Wtime() - start;
}

double ferrompi_c_allgatherv(long iters, const double *send, int count, double *recv,
                             const int *counts, const int *displs) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allgatherv(send, count, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    return MPI_Wtime() - start;
}

double ferrompi_c_alltoall(long iters, const double *send, double *recv, int count) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Alltoall(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, MPI_COMM_WORLD);
    return MPI_Wtime() - start;
}

/* Shared windows: allocate (the leader `bytes`, the others nothing), look up every segment,
 * zero one's own (MPI leaves it undefined), take the lock_all that load/store synchronisation
 * needs, and free: what a C program does before it may read the window. */
double ferrompi_c_shared_alloc(long iters, MPI_Comm comm, MPI_Aint bytes) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *segments[64];
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        char *base;
        MPI_Win win;
        MPI_Aint mine = rank == 0 ? bytes : 0;
        MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, comm, &base, &win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        for (int r = 0; r < size && r < 64; r++) {
            MPI_Aint len;
            int unit;
            MPI_Win_shared_query(win, r, &len, &unit, &segments[r]);
        }
        memset(base, 0, (size_t)mine);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    return MPI_Wtime() - start;
}

/* Entering a load/store epoch on a shared window: sync, barrier, sync (MPI-4.0 §12.7). */
double ferrompi_c_shared_epoch(long iters, MPI_Comm comm) {
    char *base;
    MPI_Win win;
    MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, comm, &base, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Win_sync(win);
        MPI_Barrier(comm);
        MPI_Win_sync(win);
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    return elapsed;
}

/* Reading a table through a load/store epoch on a shared window, as a C program does: sync,
 * barrier, sync (the epoch), then a sum of the `n` doubles at `table`, which lie in `win`'s
 * memory (the window the Rust side reads, which holds a lock_all for its whole life). The sum is
 * sequential, as Rust's `iter().sum()` (no -ffast-math: neither may reorder the additions). */
double ferrompi_c_shared_sum(long iters, MPI_Win win, MPI_Comm comm, const double *table, long n,
                             double *sink) {
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Win_sync(win);
        MPI_Barrier(comm);
        MPI_Win_sync(win);
        double sum = 0.0;
        for (long k = 0; k < n; k++)
            sum += table[k];
        *sink += sum;
    }
    return MPI_Wtime() - start;
}

/* Put `bytes` to the next rank's window and flush, or get them and flush locally, under
 * lock_all, on `win`: the window the Rust sides use too, so all three run on the same memory. */
double ferrompi_c_rma(long iters, int get, char *buf, int bytes, MPI_Win win) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    double start = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (get) {
            MPI_Get(buf, bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
            MPI_Win_flush_local(next, win);
        } else {
            MPI_Put(buf, bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
            MPI_Win_flush(next, win);
        }
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock_all(win);
    return elapsed;
}

/* A 2-D halo exchange on `cart` (a Cartesian communicator of 2 dimensions), as a stencil code
 * writes it: this process's ly x lx block of doubles with a ghost layer, its four faces
 * subarrays sent from the interior's edges and received into the ghosts, in the neighbourhood
 * order (along each dimension the neighbour behind, then ahead). `form`: 0 the blocking
 * MPI_Neighbor_alltoallw, 1 MPI_Ineighbor_alltoallw + MPI_Wait, 2 a persistent request made
 * once (MPI-4's or Open MPI's MPIX_), started and waited for. Returns -1 when the MPI has no
 * persistent form. */
double ferrompi_c_halo(long iters, MPI_Comm cart, int ly, int lx, int form) {
    int sizes[2] = {ly + 2, lx + 2};
    int rows[2] = {1, lx}, cols[2] = {ly, 1};
    int send_at[4][2] = {{1, 1}, {ly, 1}, {1, 1}, {1, lx}};
    int recv_at[4][2] = {{0, 1}, {ly + 1, 1}, {1, 0}, {1, lx + 1}};
    MPI_Datatype send_types[4], recv_types[4];
    for (int k = 0; k < 4; k++) {
        int *sub = k < 2 ? rows : cols;
        MPI_Type_create_subarray(2, sizes, sub, send_at[k], MPI_ORDER_C, MPI_DOUBLE, &send_types[k]);
        MPI_Type_create_subarray(2, sizes, sub, recv_at[k], MPI_ORDER_C, MPI_DOUBLE, &recv_types[k]);
        MPI_Type_commit(&send_types[k]);
        MPI_Type_commit(&recv_types[k]);
    }
    int counts[4] = {1, 1, 1, 1};
    MPI_Aint displs[4] = {0, 0, 0, 0};
    size_t cells = (size_t)sizes[0] * (size_t)sizes[1];
    double *field = calloc(cells, sizeof *field), *ghosts = calloc(cells, sizeof *ghosts);
    double elapsed = -1.0;
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    if (form == 2) {
        rc = MPI_ERR_UNSUPPORTED_OPERATION;
#if defined(FERROMPI_PERSISTENT_COLL)
        rc = MPI_Neighbor_alltoallw_init(field, counts, displs, send_types, ghosts, counts,
                                         displs, recv_types, cart, MPI_INFO_NULL, &request);
#elif defined(FERROMPI_MPIX_PERSISTENT_COLL)
        rc = MPIX_Neighbor_alltoallw_init(field, counts, displs, send_types, ghosts, counts,
                                          displs, recv_types, cart, MPI_INFO_NULL, &request);
#endif
    }
    if (rc == MPI_SUCCESS) {
        double start = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            if (form == 0) {
                MPI_Neighbor_alltoallw(field, counts, displs, send_types, ghosts, counts, displs,
                                       recv_types, cart);
            } else if (form == 1) {
                MPI_Ineighbor_alltoallw(field, counts, displs, send_types, ghosts, counts,
                                        displs, recv_types, cart, &request);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            } else {
                MPI_Start(&request);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            }
        }
        elapsed = MPI_Wtime() - start;
    }
    if (form == 2 && rc == MPI_SUCCESS)
        MPI_Request_free(&request);
    for (int k = 0; k < 4; k++) {
        MPI_Type_free(&send_types[k]);
        MPI_Type_free(&recv_types[k]);
    }
    free(field);
    free(ghosts);
    return elapsed;
}
