/* The timed loops of tools/call-form.sh. The script compiles this file twice with the MPI's
 * compiler wrapper: as C is built by default, where a call into libmpi goes through a PLT stub
 * (`call MPI_Put@plt`, then `jmp *GOT`), and with -fno-plt, where it loads the address from the
 * GOT (`call *MPI_Put@GOTPCREL(%rip)`), as rustc makes every call into a shared library.
 * CALL_FORM names each build's function. Each returns the seconds that `iters` operations took. */
#include <mpi.h>

#ifndef CALL_FORM
#error "define CALL_FORM, the function's name"
#endif

/* op 0: put 8 bytes + flush; op 1: get 8 bytes + flush_local (under the caller's lock_all on
 * `win`); op 2: MPI_Comm_rank, a call that does next to nothing. */
double CALL_FORM(int op, long iters, char *buf, int target, MPI_Win win) {
    int rank;
    double start = MPI_Wtime();
    switch (op) {
    case 0:
        for (long i = 0; i < iters; i++) {
            MPI_Put(buf, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(target, win);
        }
        break;
    case 1:
        for (long i = 0; i < iters; i++) {
            MPI_Get(buf, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
            MPI_Win_flush_local(target, win);
        }
        break;
    default:
        for (long i = 0; i < iters; i++) {
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        }
        break;
    }
    return MPI_Wtime() - start;
}
