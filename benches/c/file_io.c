/* Collective and independent file I/O in plain C: the reference for benches/file_io.rs.
 *
 *   file_io PATH MIB [ROUNDS]   under mpirun -n N
 *
 * A distributed array of MIB MiB of doubles (each process a contiguous block of MIB/N MiB)
 * is written to PATH and read back, at explicit offsets: collectively (MPI_File_write_at_all,
 * MPI_File_read_at_all) and independently (MPI_File_write_at, MPI_File_read_at), ROUNDS times
 * each in that order, after one untimed collective write that makes the file. Each operation is timed from a barrier to the end of the slowest
 * process's call (the largest MPI_Wtime difference); rank 0 prints one line per operation:
 * `op seconds`. The file goes to the page cache (no sync), so this measures what the MPI
 * and the binding add to moving the bytes, not the disk. The values read are checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double timed(MPI_File fh, int op, MPI_Offset at, double *buf, int count) {
  MPI_Status status;
  int rc = MPI_SUCCESS;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  switch (op) {
  case 0: rc = MPI_File_write_at_all(fh, at, buf, count, MPI_DOUBLE, &status); break;
  case 1: rc = MPI_File_read_at_all(fh, at, buf, count, MPI_DOUBLE, &status); break;
  case 2: rc = MPI_File_write_at(fh, at, buf, count, MPI_DOUBLE, &status); break;
  default: rc = MPI_File_read_at(fh, at, buf, count, MPI_DOUBLE, &status); break;
  }
  double mine = MPI_Wtime() - t0, slowest = 0.0;
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "file_io: operation %d failed\n", op);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: file_io PATH MIB [ROUNDS]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long total = atol(argv[2]) * (1L << 20) / 8;
  int rounds = argc > 3 ? atoi(argv[3]) : 1;
  long first = total * rank / size, count = total * (rank + 1) / size - first;
  double *buf = malloc((size_t)count * sizeof(double));
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  const char *names[4] = {"write_at_all", "read_at_all", "write_at", "read_at"};
  /* Untimed: the file's pages are made once, so that every timed write overwrites. */
  for (long i = 0; i < count; i++) buf[i] = 0.0;
  timed(fh, 0, first * 8, buf, (int)count);
  for (int r = 0; r < rounds; r++) {
    for (int op = 0; op < 4; op++) {
      for (long i = 0; i < count; i++) buf[i] = (op & 1) ? -1.0 : (double)(first + i + op);
      double t = timed(fh, op, first * 8, buf, (int)count);
      if (op & 1) {
        for (long i = 0; i < count; i++)
          if (buf[i] != (double)(first + i + op - 1)) {
            fprintf(stderr, "file_io: wrong value read at %ld\n", first + i);
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
      }
      if (rank == 0) printf("%s %.6f\n", names[op], t);
    }
  }
  MPI_File_close(&fh);
  free(buf);
  MPI_Finalize();
  return 0;
}
