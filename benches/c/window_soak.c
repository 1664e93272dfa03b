/* The shared-window row of the soak (examples/soak.rs) in plain C, to tell the MPI's memory
 * from the binding's: N windows of 1 KiB per rank allocated, locked, queried, written,
 * unlocked and freed on the node's communicator; prints the resident memory each rank gained
 * after the first tenth (VmRSS of /proc/self/status).
 *
 *   mpicc -O2 -o window_soak benches/c/window_soak.c && mpiexec -n 2 ./window_soak 10000
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long resident_kib(void) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (status && fgets(line, sizeof line, status))
        if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
    if (status) fclose(status);
    return kib;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    long n = argc > 1 ? atol(argv[1]) : 10000, before = 0;
    for (long i = 0; i < n; i++) {
        if (i == n / 10) {
            MPI_Barrier(node);
            before = resident_kib();
        }
        char *base;
        MPI_Win win;
        MPI_Win_allocate_shared(1024, 1, MPI_INFO_NULL, node, &base, &win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        for (int r = 0; r < size; r++) {
            MPI_Aint len;
            int unit;
            char *segment;
            MPI_Win_shared_query(win, r, &len, &unit, &segment);
        }
        memset(base, 1, 1024);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    MPI_Barrier(node);
    printf("rank %d: %ld windows, resident +%ld KiB after the first tenth\n", rank, n,
           resident_kib() - before);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
