! An unmodified Fortran MPI program (tests/interpose/preload.sh, modes f77,
! f90, f08: this source with `include 'mpif.h'`, `use mpi` (-DUSE_MPI) or
! `use mpi_f08` (-DUSE_MPI_F08: handles are derived types, and ierror is
! optional: left out of some calls). Every rank prints its results;
! preload.sh compares the lines with and without libduct-mpi. Fortran types
! and ops: DOUBLE PRECISION (sum, max in place), REAL (sum), INTEGER (sum to
! a root, bcast), data movement of DOUBLE PRECISION (allgather, alltoall,
! gather, scatter), odd counts.
program plain_mpi
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
#elif defined(USE_MPI)
  use mpi
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer, parameter :: n = 1001
  double precision :: x(n), y(n), z(n)
  real :: r(n), rs(n)
  integer :: iv(n), ivs(n), ierr, rank, nranks, i, s1
  double precision, allocatable :: g(:), h(:), one(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  do i = 1, n
    x(i) = rank * 1000 + i + 0.25d0
    r(i) = real(rank + i) * 0.5
    iv(i) = rank * 7 + i
  end do
  ivs = 0
#ifdef USE_MPI_F08
  call MPI_Allreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
#else
  call MPI_Allreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
#endif
  z = x
  call MPI_Allreduce(MPI_IN_PLACE, z, n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(r, rs, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(iv, ivs, n, MPI_INTEGER, MPI_SUM, nranks - 1, MPI_COMM_WORLD, ierr)
  s1 = ivs(1)
  call MPI_Bcast(s1, 1, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, ierr)
#ifdef USE_MPI_F08
  call MPI_Bcast(x, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
#else
  call MPI_Bcast(x, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
#endif
  allocate(g(n * nranks), h(n * nranks), one(n))
  call MPI_Allgather(y, n, MPI_DOUBLE_PRECISION, g, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  g(1:n) = g(1:n) + rank
  call MPI_Alltoall(g, n, MPI_DOUBLE_PRECISION, h, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call MPI_Gather(z, n, MPI_DOUBLE_PRECISION, g, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  if (rank /= 0) g = 0
  call MPI_Scatter(h, n, MPI_DOUBLE_PRECISION, one, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  print '(a,i0,a,7es24.16,2i12)', 'rank ', rank, ': ', sum(y), sum(z), sum(dble(rs)), sum(x), sum(g), sum(h), &
       sum(one), s1, ierr
  if (rank == 0) print '(a)', 'PASS'
  call MPI_Finalize(ierr)
end program plain_mpi
