"""Turn the array objects Python programs pass into (pointer, count, dtype).

Accepted, in this order:
  * torch.Tensor (CPU or CUDA), by its data_ptr();
  * objects with __cuda_array_interface__ (CuPy, Numba, ...);
  * objects with __array_interface__ (NumPy arrays, and anything NumPy can
    view: bytearray, array.array, memoryview through numpy.asarray);
  * objects with __dlpack__ (DLPack capsules, read with ctypes).
Arrays must be C-contiguous (any shape): a non-contiguous one raises
ValueError rather than being copied, so that a receive buffer is always the
caller's own memory. Elements are counted in the array's dtype.
"""

import ctypes
import math
import threading
import sys

from mpi4py import MPI

from . import _lib

# dtype name -> its MPI datatype (duct's for float16 and bfloat16)
_DATATYPES = {
    'bool': MPI.C_BOOL, 'int8': MPI.INT8_T, 'uint8': MPI.UINT8_T, 'int16': MPI.INT16_T,
    'uint16': MPI.UINT16_T, 'int32': MPI.INT32_T, 'uint32': MPI.UINT32_T, 'int64': MPI.INT64_T,
    'uint64': MPI.UINT64_T, 'float32': MPI.FLOAT, 'float64': MPI.DOUBLE, 'longdouble': MPI.LONG_DOUBLE,
    'complex64': MPI.C_FLOAT_COMPLEX, 'complex128': MPI.C_DOUBLE_COMPLEX,
    'clongdouble': MPI.C_LONG_DOUBLE_COMPLEX,
}
_HANDLES = {name: MPI._handleof(t) for name, t in _DATATYPES.items()}
_HANDLES['float16'] = _lib.fn['Type_float16']()
_HANDLES['bfloat16'] = _lib.fn['Type_bfloat16']()
_ITEMSIZE = {name: t.Get_size() for name, t in _DATATYPES.items()}
_ITEMSIZE.update(float16=2, bfloat16=2)


class Buf:
    """One buffer argument: where it is, how many elements of which dtype."""

    __slots__ = ('ptr', 'count', 'dtype', 'obj', 'keep')

    def __init__(self, ptr, count, dtype, obj, keep=None):
        # obj (and keep) hold the memory alive while duct uses it
        self.ptr, self.count, self.dtype, self.obj, self.keep = ptr, count, dtype, obj, keep

    @property
    def datatype(self):
        # None (an argument MPI ignores on this rank) passes MPI_INT8_T
        return _HANDLES[self.dtype or 'int8']


NONE = Buf(None, 0, None, None)
IN_PLACE = Buf(int(MPI.IN_PLACE), 0, None, None)


def _typestr_dtype(typestr, what):
    order, kind, size = typestr[0], typestr[1], int(typestr[2:])
    if order == ('>' if sys.byteorder == 'little' else '<') and size > 1:
        raise ValueError(f'{what}: non-native byte order ({typestr!r}) is not supported')
    name = None
    if kind == 'b' and size == 1:
        name = 'bool'
    elif kind in 'iu' and size in (1, 2, 4, 8):
        name = f"{'u' if kind == 'u' else ''}int{8 * size}"
    elif kind == 'f':
        name = {2: 'float16', 4: 'float32', 8: 'float64'}.get(size)
        if name is None and size == _ITEMSIZE['longdouble']:
            name = 'longdouble'
    elif kind == 'c':
        name = {8: 'complex64', 16: 'complex128'}.get(size)
        if name is None and size == _ITEMSIZE['clongdouble']:
            name = 'clongdouble'
    if name is None:
        raise ValueError(f'{what}: dtype {typestr!r} is not supported (bool, integers, float16/32/64, '
                         'bfloat16, long double and complex are)')
    return name


def _c_contiguous(shape, strides, itemsize):
    if strides is None:
        return True
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def _from_interface(obj, iface, what, writable, dtype=None):
    """__array_interface__ / __cuda_array_interface__ (dtype: already known)."""
    dtype = dtype or _typestr_dtype(iface['typestr'], what)
    shape = iface['shape']
    if not _c_contiguous(shape, iface.get('strides'), _ITEMSIZE[dtype]):
        raise ValueError(f'{what}: the array is not C-contiguous (make a contiguous copy first)')
    ptr, readonly = iface['data']
    if writable and readonly:
        raise ValueError(f'{what}: the array is read-only')
    return Buf(ptr, math.prod(shape), dtype, obj)


_ORDER = threading.local()   # .streams: the duct.on_stream stack of this thread


def current_stream():
    """The CUDA stream (an int handle) of the innermost duct.on_stream of this
    thread, or None."""
    streams = getattr(_ORDER, 'streams', None)
    return streams[-1] if streams else None


def push_stream(handle):
    if not hasattr(_ORDER, 'streams'):
        _ORDER.streams = []
    _ORDER.streams.append(handle)


def pop_stream():
    _ORDER.streams.pop()


_TORCH_DTYPES = {}   # torch.dtype -> name, filled on first use


def _torch_buf(t, what):
    if not _TORCH_DTYPES:
        import torch
        for name in _HANDLES:
            if hasattr(torch, name) and isinstance(getattr(torch, name), torch.dtype):
                _TORCH_DTYPES[getattr(torch, name)] = name
    if not t.is_contiguous():
        raise ValueError(f'{what}: the tensor is not contiguous (call .contiguous() first)')
    dtype = _TORCH_DTYPES.get(t.dtype)
    if dtype is None:
        raise ValueError(f'{what}: dtype {t.dtype} is not supported')
    if t.is_cuda:
        # Work queued on the tensor's stream must be done before duct reads
        # or writes it (duct's rule for device buffers, as CUDA-aware MPI's);
        # a stream-ordered call (duct.on_stream) is ordered on its stream instead.
        if current_stream() is None:
            import torch
            torch.cuda.current_stream(t.device).synchronize()
    elif not t.is_cpu:
        raise ValueError(f'{what}: tensors on {t.device.type} are not supported (cpu and cuda are)')
    return Buf(t.data_ptr(), t.numel(), dtype, t)


def _numpy_buf(a, what, writable):
    """NumPy arrays, with the dtype looked up by its (cached) dtype object."""
    dtype = _NUMPY_DTYPES.get(a.dtype)
    if dtype is None:
        dtype = _NUMPY_DTYPES[a.dtype] = _typestr_dtype(a.dtype.str, what)
    return _from_interface(a, a.__array_interface__, what, writable, dtype)


_NUMPY_DTYPES = {}


class _DLDevice(ctypes.Structure):
    _fields_ = [('device_type', ctypes.c_int32), ('device_id', ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device', _DLDevice), ('ndim', ctypes.c_int32),
                ('dtype', _DLDataType), ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_KINDS = {0: 'i', 1: 'u', 2: 'f', 5: 'c', 6: 'b'}


def _dlpack_buf(obj, what):
    capsule = obj.__dlpack__()
    # The capsule (and so the producer's memory) stays alive, unconsumed,
    # for as long as the Buf does; its destructor frees the DLManagedTensor.
    t = _DLTensor.from_address(_capsule_pointer(capsule, b'dltensor'))
    if t.dtype.lanes != 1:
        raise ValueError(f'{what}: DLPack vector dtypes (lanes = {t.dtype.lanes}) are not supported')
    if t.dtype.code == 4 and t.dtype.bits == 16:
        dtype = 'bfloat16'
    elif t.dtype.code in _DL_KINDS and t.dtype.bits % 8 == 0:
        dtype = _typestr_dtype(f'={_DL_KINDS[t.dtype.code]}{t.dtype.bits // 8}', what)
    else:
        raise ValueError(f'{what}: DLPack dtype code {t.dtype.code}, {t.dtype.bits} bits is not supported')
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = None if not t.strides else [t.strides[i] * _ITEMSIZE[dtype] for i in range(t.ndim)]
    if not _c_contiguous(shape, strides, _ITEMSIZE[dtype]):
        raise ValueError(f'{what}: the array is not C-contiguous (make a contiguous copy first)')
    kind = t.device.device_type
    if kind not in (_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED):
        raise ValueError(f'{what}: DLPack device type {kind} is not supported (CPU and CUDA are)')
    return Buf((t.data or 0) + t.byte_offset, math.prod(shape), dtype, obj, keep=capsule)


try:
    import numpy
    _NDARRAY = numpy.ndarray
except ImportError:
    _NDARRAY = None
_TORCH_CLASSES = set()   # torch.Tensor, torch.nn.Parameter, ... as they are seen


def buf(obj, what, writable=False):
    """The Buf of `obj` (argument `what` of the call, for error messages)."""
    if obj is None:
        return NONE
    if obj is MPI.IN_PLACE:
        return IN_PLACE
    cls = type(obj)
    if cls is _NDARRAY:
        return _numpy_buf(obj, what, writable)
    if cls in _TORCH_CLASSES or (cls.__module__.partition('.')[0] == 'torch' and hasattr(obj, 'data_ptr')):
        _TORCH_CLASSES.add(cls)
        return _torch_buf(obj, what)
    iface = getattr(obj, '__cuda_array_interface__', None)
    if iface is not None:
        return _from_interface(obj, iface, what, writable)
    iface = getattr(obj, '__array_interface__', None)
    if iface is not None:
        return _from_interface(obj, iface, what, writable)
    if hasattr(obj, '__dlpack__'):
        return _dlpack_buf(obj, what)
    try:
        view = numpy.asarray(memoryview(obj))
    except (NameError, TypeError):
        view = None
    if view is not None:
        # The view (which holds obj) stays with the Buf: while it is
        # exported, a bytearray cannot be resized under a running collective.
        return _from_interface(view, view.__array_interface__, what, writable)
    raise TypeError(f'{what}: expected an array (NumPy, PyTorch, CuPy, DLPack or buffer), got {type(obj).__name__}')
