/* Under the default error handler (MPI_ERRORS_ARE_FATAL) a bad argument
 * aborts the job with duct's message. Plain C: duct.h must compile as C. */
#include <duct/duct.h>
#include <stdio.h>

int main(int argc, char **argv) {
  float a[4] = {1, 2, 3, 4}, b[4];
  MPI_Init(&argc, &argv);
  DUCT_Allreduce(a, b, -1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  printf("not reached: the job should have aborted\n");
  MPI_Finalize();
  return 0;
}
