/* A plain C MPI program, built on its own with the MPI's compiler wrapper (tools/thread-levels.sh):
 * what a C user gets at each thread level, with nothing of ferrompi in the process. benches/levels.rs
 * is its twin through ferrompi; the script runs both, interleaved, and compares them.
 *
 *   levels-c init|single|funneled|serialized|multiple [ROUNDS]
 *
 * "init" is plain MPI_Init; the others MPI_Init_thread at that level. Needs 2 ranks. For each
 * operation, ROUNDS blocks of about 2 ms are timed with MPI_Wtime (the slower rank's time counts),
 * and rank 0 prints one line per operation: "op ns-per-operation" with the median block. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPS 5
static const char *names[OPS] = {"pingpong8", "allreduce8", "barrier", "exchange8", "window64"};

static void once(int op, int rank, int peer, char *buf, double *x, double *y, MPI_Request *r) {
    switch (op) {
    case 0:
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        break;
    case 1:
        MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case 2:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 3:
        for (int k = 0; k < 8; k++)
            MPI_Irecv(buf + 64 + 8 * k, 8, MPI_BYTE, peer, k, MPI_COMM_WORLD, &r[k]);
        for (int k = 0; k < 8; k++)
            MPI_Isend(buf, 8, MPI_BYTE, peer, k, MPI_COMM_WORLD, &r[8 + k]);
        MPI_Waitall(16, r, MPI_STATUSES_IGNORE);
        break;
    case 4: {
        char ack = 0;
        for (int k = 0; k < 64; k++) {
            if (rank == 0)
                MPI_Isend(buf, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r[k]);
            else
                MPI_Irecv(buf + 64 + 8 * k, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &r[k]);
        }
        MPI_Waitall(64, r, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        break;
    }
    }
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *level = argc > 1 ? argv[1] : "init";
    int rounds = argc > 2 ? atoi(argv[2]) : 30;
    int provided = -1;
    static const char *levels[] = {"single", "funneled", "serialized", "multiple"};
    static const int values[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    if (strcmp(level, "init") == 0) {
        MPI_Init(&argc, &argv);
    } else {
        int wanted = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(level, levels[i]) == 0)
                wanted = values[i];
        if (wanted < 0 || rounds < 1) {
            fprintf(stderr, "usage: levels-c init|single|funneled|serialized|multiple [ROUNDS]\n");
            return 2;
        }
        MPI_Init_thread(&argc, &argv, wanted, &provided);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "levels-c needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc(1024, 1);
    double x = 1.0, y = 0.0, *blocks = malloc(sizeof(double) * rounds);
    MPI_Request r[64];
    for (int op = 0; op < OPS; op++) {
        /* Calibrate: iterations for about 2 ms, agreed by both ranks. */
        long iters = 1;
        for (;;) {
            double t = MPI_Wtime();
            for (long i = 0; i < iters; i++)
                once(op, rank, 1 - rank, buf, &x, &y, r);
            double d = MPI_Wtime() - t, slow;
            MPI_Allreduce(&d, &slow, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (slow > 2e-3 || iters > (1L << 24))
                break;
            iters *= 2;
        }
        for (int b = 0; b < rounds; b++) {
            double t = MPI_Wtime();
            for (long i = 0; i < iters; i++)
                once(op, rank, 1 - rank, buf, &x, &y, r);
            double d = MPI_Wtime() - t;
            MPI_Allreduce(&d, &blocks[b], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        qsort(blocks, rounds, sizeof(double), compare);
        if (rank == 0)
            printf("%s %.1f\n", names[op], blocks[rounds / 2] / iters * 1e9);
    }
    if (rank == 0)
        printf("provided %s\n", provided < 0 ? "Init" : provided == MPI_THREAD_SINGLE ? "Single"
                                 : provided == MPI_THREAD_FUNNELED          ? "Funneled"
                                 : provided == MPI_THREAD_SERIALIZED        ? "Serialized"
                                                                            : "Multiple");
    free(blocks);
    free(buf);
    MPI_Finalize();
    return 0;
}
