/* What the form of a call into libmpi costs (tools/call-form.sh): the loops of call_form_loop.c
 * built twice, through the PLT (C's default) and through the GOT (-fno-plt, rustc's form), run in
 * the same process in interleaved blocks, PLT first in even rounds and GOT first in odd ones.
 *
 *   call-form ROUNDS
 *
 * Needs 2 ranks or more; every rank puts to and gets from the next. Blocks last about 2 ms; a
 * block's time is the slower rank's. Rank 0 prints a Markdown table: per operation the median
 * nanoseconds of each form, and the median of the per-round paired differences, GOT - PLT. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double call_form_plt(int op, long iters, char *buf, int target, MPI_Win win);
double call_form_got(int op, long iters, char *buf, int target, MPI_Win win);

#define OPS 3
static const char *names[OPS] = {"put 8 B + MPI_Win_flush", "get 8 B + MPI_Win_flush_local",
                                 "MPI_Comm_rank"};

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One block of `iters` operations on every rank at once; the slower rank's seconds. */
static double block(int form, int op, long iters, char *buf, int target, MPI_Win win) {
    double mine, slowest;
    MPI_Barrier(MPI_COMM_WORLD);
    mine = form ? call_form_got(op, iters, buf, target, win)
                : call_form_plt(op, iters, buf, target, win);
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv) {
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 41;
    char version[MPI_MAX_LIBRARY_VERSION_STRING], buf[8] = {0};
    int length;
    void *base;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || rounds < 1) {
        if (rank == 0) fprintf(stderr, "call-form: needs 2 ranks or more and ROUNDS >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Get_library_version(version, &length);
    version[strcspn(version, "\n")] = '\0';
    /* 1 MiB per rank, as the comparison's put/get window: with 8 bytes each, the ranks' windows
     * could share a cache line, and the puts (each rank writes the next one's) would time its
     * transfers between the cores. */
    MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    int target = (rank + 1) % size;
    double *plt = malloc(sizeof(double) * rounds), *got = malloc(sizeof(double) * rounds),
           *diff = malloc(sizeof(double) * rounds);
    if (rank == 0) {
        printf("### The call's form, C against C: %s, %d ranks, medians of %d interleaved rounds\n\n"
               "The same loops (benches/c/call_form_loop.c) built as C is by default, each call into "
               "libmpi through a PLT stub, and with -fno-plt, through the GOT as rustc calls (and as "
               "the comparison's C reference is built).\n\n",
               version, size, rounds);
        printf("| operation | through the PLT, ns | through the GOT, ns | GOT - PLT, ns (median of "
               "paired rounds) | GOT / PLT |\n|---|---:|---:|---:|---:|\n");
    }
    for (int op = 0; op < OPS; op++) {
        /* Iterations for about 2 ms a block, from a short trial of each form. */
        long iters = 1000;
        block(0, op, iters, buf, target, win);
        double trial = block(1, op, iters, buf, target, win);
        iters = (long)(iters * 2e-3 / (trial > 1e-9 ? trial : 1e-9));
        if (iters < 1) iters = 1;
        MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        for (int r = 0; r < rounds; r++) {
            int first = r % 2; /* 0: PLT first; 1: GOT first */
            double a = block(first, op, iters, buf, target, win) * 1e9 / iters;
            double b = block(!first, op, iters, buf, target, win) * 1e9 / iters;
            plt[r] = first ? b : a;
            got[r] = first ? a : b;
            diff[r] = got[r] - plt[r];
        }
        if (rank == 0) {
            double p = median(plt, rounds), g = median(got, rounds), d = median(diff, rounds);
            printf("| %s | %.2f | %.2f | %+.2f | %.3f |\n", names[op], p, g, d, g / p);
        }
    }
    free(plt);
    free(got);
    free(diff);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
