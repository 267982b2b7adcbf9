! An unmodified Fortran MPI program (tests/interpose/preload.sh, modes f77,
! f90, f08: this source with `include 'mpif.h'`, `use mpi` (-DUSE_MPI) or
! `use mpi_f08` (-DUSE_MPI_F08: handles are derived types, and ierror is
! optional: left out of some calls). Every rank prints its results;
! preload.sh compares the lines with and without libduct-mpi. Fortran types
! and ops: DOUBLE PRECISION (sum, max in place), REAL (sum), INTEGER (sum to
! a root, bcast), COMPLEX (sum), DOUBLE COMPLEX (prod), 2DOUBLE_PRECISION
! (maxloc, with ties), 2INTEGER (minloc to a root), LOGICAL (land, lor in
! place), data movement of DOUBLE PRECISION (allgather, alltoall, gather,
! scatter), odd counts.
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
  complex :: c(n), cs(n)
  double complex :: dc(n), dcp(n)
  double precision :: loc(2, n), locr(2, n)
  integer :: iloc(2, n), ilocr(2, n)
  logical :: l(n), land(n), lor(n)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  do i = 1, n
    x(i) = rank * 1000 + i + 0.25d0
    r(i) = real(rank + i) * 0.5
    iv(i) = rank * 7 + i
    c(i) = cmplx(real(rank - i), real(mod(i * 3 + rank, 11)))
    dc(i) = dcmplx(dble(mod(i + rank, 4) - 1), dble(mod(i * 3 + rank * 2, 3) - 1))
    loc(1, i) = dble(mod((i * 3 + rank) / 2, 4))
    loc(2, i) = dble(mod(rank * 5 + i, 9))
    iloc(1, i) = mod((i + rank) / 2, 5)
    iloc(2, i) = mod(rank * 7 + i, 6)
    l(i) = mod(i + rank, 7) /= 0
  end do
  ilocr = -1
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
  call MPI_Allreduce(c, cs, n, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(dc, dcp, n, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(loc, locr, n, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(iloc, ilocr, n, MPI_2INTEGER, MPI_MINLOC, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l, land, n, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  lor = l
  call MPI_Allreduce(MPI_IN_PLACE, lor, n, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  print '(a,i0,a,7es24.16,2i12)', 'rank ', rank, ': ', sum(y), sum(z), sum(dble(rs)), sum(x), sum(g), sum(h), &
       sum(one), s1, ierr
  print '(a,i0,a,6es24.16,5i12)', 'rank ', rank, ' types: ', real(sum(cs)), aimag(sum(cs)), dble(sum(dcp)), &
       dimag(sum(dcp)), sum(locr(1, :)), sum(locr(2, :)), sum(ilocr(1, :)), sum(ilocr(2, :)), &
       count(land), count(lor), sum(int(locr(2, 1:20)))
  if (rank == 0) print '(a)', 'PASS'
  call MPI_Finalize(ierr)
end program plain_mpi
