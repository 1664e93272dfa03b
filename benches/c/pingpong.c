/* Plain C ping-pong between ranks 0 and 1 at 4 KiB, 64 KiB, 1 MiB and 4 MiB: one-way latency
 * and bandwidth. tools/single-copy-cost.sh runs it with and without Open MPI's shared-memory
 * single-copy path, which ferrompi turns off (the guide's errors chapter). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t sizes[] = {4096, 65536, 1 << 20, 4 << 20};
  char *b = calloc(4 << 20, 1);
  for (int s = 0; s < 4; s++) {
    int n = (int)sizes[s], iters = sizes[s] >= (1 << 20) ? 200 : 2000;
    for (int w = 0; w < 2; w++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      for (int i = 0; i < iters; i++) {
        if (rank == 0) { MPI_Send(b, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD); MPI_Recv(b, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
        else { MPI_Recv(b, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(b, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD); }
      }
      t = MPI_Wtime() - t;
      if (rank == 0 && w == 1) printf("%8d B: %8.2f us one-way, %7.0f MB/s\n", n, t / iters / 2 * 1e6, n / (t / iters / 2) / 1e6);
    }
  }
  MPI_Finalize();
}
