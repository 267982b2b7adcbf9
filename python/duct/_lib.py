"""libduct's C API (include/duct/duct.h) declared for ctypes.

duct's Python binding is a thin layer over the same libduct.so that C and C++
programs link: one ctypes call per collective, with the GIL released while
the call runs (ctypes.CDLL), so other Python threads keep running during a
collective and while DUCT_Wait waits. MPI handles come from mpi4py
(MPI._handleof); their C types are sized from mpi4py (MPI._sizeof), so the
layer fits Open MPI (pointer handles) and MPICH (int handles) alike.
"""

import ctypes
import os

from mpi4py import MPI

from . import _config


def _int_of_size(nbytes, signed=True):
    types = {4: (ctypes.c_int32, ctypes.c_uint32), 8: (ctypes.c_int64, ctypes.c_uint64)}
    return types[nbytes][0 if signed else 1]


def _handle_type(cls):
    # Open MPI's handles are pointers, MPICH's are ints.
    return ctypes.c_void_p if MPI._sizeof(cls) == ctypes.sizeof(ctypes.c_void_p) else _int_of_size(MPI._sizeof(cls))


Comm = _handle_type(MPI.Comm)
Datatype = _handle_type(MPI.Datatype)
Op = _handle_type(MPI.Op)
Request = _handle_type(MPI.Request)
Count = _int_of_size(MPI.COUNT.Get_size())
Aint = _int_of_size(MPI.AINT.Get_size())
STATUS_SIZE = MPI._sizeof(MPI.Status)

_P = ctypes.c_void_p
_I = ctypes.c_int
_CA = ctypes.POINTER(Count)
_AA = ctypes.POINTER(Aint)
_R = ctypes.POINTER(Request)

# name: argument types (all return an int error code unless listed in _RESTYPES)
_PROTOTYPES = {
    'Allreduce_c': (_P, _P, Count, Datatype, Op, Comm),
    'Bcast_c': (_P, Count, Datatype, _I, Comm),
    'Reduce_c': (_P, _P, Count, Datatype, Op, _I, Comm),
    'Allgather_c': (_P, Count, Datatype, _P, Count, Datatype, Comm),
    'Allgatherv_c': (_P, Count, Datatype, _P, _CA, _AA, Datatype, Comm),
    'Reduce_scatter_block_c': (_P, _P, Count, Datatype, Op, Comm),
    'Reduce_scatter_c': (_P, _P, _CA, Datatype, Op, Comm),
    'Alltoall_c': (_P, Count, Datatype, _P, Count, Datatype, Comm),
    'Alltoallv_c': (_P, _CA, _AA, Datatype, _P, _CA, _AA, Datatype, Comm),
    'Gather_c': (_P, Count, Datatype, _P, Count, Datatype, _I, Comm),
    'Gatherv_c': (_P, Count, Datatype, _P, _CA, _AA, Datatype, _I, Comm),
    'Scatter_c': (_P, Count, Datatype, _P, Count, Datatype, _I, Comm),
    'Scatterv_c': (_P, _CA, _AA, Datatype, _P, Count, Datatype, _I, Comm),
    'Barrier': (Comm,),
    'Wait': (_R, _P),
    'Test': (_R, ctypes.POINTER(_I), _P),
    'Waitall': (_I, _R, _P),
    'Error_class': (_I,),
    'Comm_revoke': (Comm,),
    'Comm_is_revoked': (Comm, ctypes.POINTER(_I)),
    'Comm_get_failed': (Comm, _P),
    'Comm_agree': (Comm, ctypes.POINTER(_I)),
    'Comm_shrink': (Comm, _P),
    'Type_float16': (),
    'Type_bfloat16': (),
    'Query_cuda_support': (),
    'Version_string': (),
}
# Every blocking collective has a nonblocking twin with the request pointer
# last, and a stream-ordered one (include/duct/duct_stream.h: Allreduce_c ->
# Allreduce_stream_c, Barrier -> Barrier_stream) with the CUDA stream last.
def stream_name(name):
    return name[:-2] + '_stream_c' if name.endswith('_c') else name + '_stream'


for _name in [n for n in _PROTOTYPES if n.endswith('_c') or n == 'Barrier']:
    _PROTOTYPES['I' + _name[0].lower() + _name[1:]] = _PROTOTYPES[_name] + (_R,)
    _PROTOTYPES[stream_name(_name)] = _PROTOTYPES[_name] + (_P,)
_RESTYPES = {'Type_float16': Datatype, 'Type_bfloat16': Datatype, 'Version_string': ctypes.c_char_p}


def _load():
    path = os.environ.get('DUCT_LIBRARY') or _config.LIBDUCT
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f'duct: cannot load libduct ({path}): {e}; set DUCT_LIBRARY to its path') from None
    table = {}
    for name, argtypes in _PROTOTYPES.items():
        fn = getattr(lib, 'DUCT_' + name)
        fn.argtypes = argtypes
        fn.restype = _RESTYPES.get(name, ctypes.c_int)
        table[name] = fn
    return path, table


PATH, fn = _load()
