"""The little of the CUDA runtime the TensorRT backend needs, through cuda-python: device identity, a stream of
its own (with a priority), pinned host and device buffers allocated once, async copies, events.

cuda-python returns (error, *values) from every call instead of raising; `check` turns a failure into an
exception that names the call, so a bad pointer or a lost device is never silently ignored.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

try:  # cuda-python >= 12.6 (cuda-bindings); the old top-level module is the fallback for earlier releases
    from cuda.bindings import runtime as cudart
except ImportError:  # pragma: no cover - depends on the installed cuda-python
    from cuda import cudart

__all__ = ["CudaError", "check", "device_count", "DeviceIdentity", "device_identity", "CudaStream", "CudaEvent",
           "PinnedArray", "DeviceBuffer"]


class CudaError(RuntimeError):
    pass


def check(result: Any, call: str) -> Any:
    """Unwrap cuda-python's (error, *values) tuple: the value(s) on success, CudaError otherwise."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != cudart.cudaError_t.cudaSuccess:
        _, name = cudart.cudaGetErrorName(err)
        raise CudaError(f"{call} failed: {name.decode() if isinstance(name, bytes) else name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def device_count() -> int:
    """GPUs visible to this process; 0 where there is no driver or no device (never raises)."""
    err, count = cudart.cudaGetDeviceCount()
    return int(count) if err == cudart.cudaError_t.cudaSuccess else 0


@dataclass(frozen=True)
class DeviceIdentity:
    name: str
    compute_capability: str  # "9.0"

    @property
    def slug(self) -> str:
        return f"{self.name.replace(' ', '-')}-sm{self.compute_capability.replace('.', '')}"


def device_identity(device: int = 0) -> DeviceIdentity:
    props = check(cudart.cudaGetDeviceProperties(device), "cudaGetDeviceProperties")
    name = props.name.decode() if isinstance(props.name, bytes) else str(props.name)
    return DeviceIdentity(name.strip("\x00 "), f"{props.major}.{props.minor}")


class CudaStream:
    """A non-blocking stream (it never waits on the legacy default stream). priority: 0 is normal; lower numbers
    run first where the device has work from several streams (cudaDeviceGetStreamPriorityRange)."""

    def __init__(self, priority: int = 0) -> None:
        least, greatest = check(cudart.cudaDeviceGetStreamPriorityRange(), "cudaDeviceGetStreamPriorityRange")
        clamped = min(max(priority, greatest), least)
        self.handle = check(cudart.cudaStreamCreateWithPriority(cudart.cudaStreamNonBlocking, clamped),
                            "cudaStreamCreateWithPriority")
        self.priority = clamped

    @property
    def ptr(self) -> int:
        return int(self.handle)

    def synchronize(self) -> None:
        check(cudart.cudaStreamSynchronize(self.handle), "cudaStreamSynchronize")

    def close(self) -> None:
        if self.handle is not None:
            check(cudart.cudaStreamDestroy(self.handle), "cudaStreamDestroy")
            self.handle = None


class CudaEvent:
    def __init__(self) -> None:
        self.handle = check(cudart.cudaEventCreate(), "cudaEventCreate")

    def record(self, stream: CudaStream) -> None:
        check(cudart.cudaEventRecord(self.handle, stream.handle), "cudaEventRecord")

    def synchronize(self) -> None:
        check(cudart.cudaEventSynchronize(self.handle), "cudaEventSynchronize")

    def elapsed_ms(self, start: CudaEvent) -> float:
        return float(check(cudart.cudaEventElapsedTime(start.handle, self.handle), "cudaEventElapsedTime"))

    def close(self) -> None:
        if self.handle is not None:
            check(cudart.cudaEventDestroy(self.handle), "cudaEventDestroy")
            self.handle = None


class PinnedArray:
    """Page-locked host memory seen as a numpy array: async copies from it overlap with compute, and the
    driver skips the staging copy it makes for pageable memory."""

    def __init__(self, shape: tuple[int, ...], dtype: DTypeLike) -> None:
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(shape)) * self.dtype.itemsize
        self.ptr = int(check(cudart.cudaMallocHost(self.nbytes), "cudaMallocHost"))
        raw = (ctypes.c_byte * self.nbytes).from_address(self.ptr)
        self.array: NDArray[Any] = np.frombuffer(memoryview(raw), dtype=self.dtype).reshape(shape)

    def view(self, shape: tuple[int, ...]) -> NDArray[Any]:
        """The first prod(shape) elements as a C-contiguous array of that shape (what a smaller batch uses)."""
        return self.array.reshape(-1)[: int(np.prod(shape))].reshape(shape)

    def close(self) -> None:
        if self.ptr:
            self.array = np.empty(0, self.dtype)
            check(cudart.cudaFreeHost(self.ptr), "cudaFreeHost")
            self.ptr = 0


class DeviceBuffer:
    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.ptr = int(check(cudart.cudaMalloc(nbytes), "cudaMalloc"))

    def upload(self, host: PinnedArray, nbytes: int, stream: CudaStream) -> None:
        check(cudart.cudaMemcpyAsync(self.ptr, host.ptr, nbytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice,
                                     stream.handle), "cudaMemcpyAsync(host to device)")

    def download(self, host: PinnedArray, nbytes: int, stream: CudaStream) -> None:
        check(cudart.cudaMemcpyAsync(host.ptr, self.ptr, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost,
                                     stream.handle), "cudaMemcpyAsync(device to host)")

    def close(self) -> None:
        if self.ptr:
            check(cudart.cudaFree(self.ptr), "cudaFree")
            self.ptr = 0
