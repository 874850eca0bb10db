"""Arrays in and out of the C++ core, without rounding anything on the way.

Every input goes to the core as a C-contiguous NumPy array of its raw storage elements plus the
dtype they hold: float16 and bfloat16 as their 16-bit patterns (a torch bfloat16 tensor is read
through ``tensor.view(torch.int16)``, never through float32), float8_e4m3fn and float8_e5m2 as
their 8-bit patterns (NumPy has no fp8: a uint8 array plus the dtype's name; a torch
``float8_e4m3fn``/``float8_e5m2`` tensor through ``view(torch.uint8)``). The gate's kernel adapter does the
reverse for the user's kernel: raw bits in, NumPy or torch tensors of the storage dtype out, and
checks what the kernel returns before its bits are copied back, and with ``timeout=`` stops a
kernel call that runs too long (``KernelTimeout``).
"""

from __future__ import annotations

import signal

import numpy as np

from ._ropecheck import InputError
from ._ropecheck import float8_dtypes as _FP8  # the C++ core's dtype catalog (numeric/dtype.h)

_NUMPY_DTYPES = {
    np.dtype(np.float64): "float64",
    np.dtype(np.float32): "float32",
    np.dtype(np.float16): "float16",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
}


def _torch():
    import torch  # imported only when a torch tensor or tensor_type="torch" is used

    return torch


def is_torch_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "dtype") and hasattr(value, "device")


def _torch_fp8(torch) -> dict:
    """torch's fp8 dtypes by ropecheck's name (torch >= 2.1 has them; older torch has none)."""
    return {n: getattr(torch, n) for n in _FP8 if hasattr(torch, n)}


def raw_array(value, name: str, raw16: str | None = None):
    """``(array, dtype name)`` for a NumPy array, an object with the array protocol or a torch
    CPU tensor. A 16-bit integer array holds the bits of ``raw16`` (``"bfloat16"``), as the
    CLI's ``--dtype bfloat16`` reads a uint16 .npy; a uint8 array the bits of ``raw16``
    ``"float8_e4m3fn"`` or ``"float8_e5m2"`` (and is refused without it, as the CLI refuses a
    uint8 .npy without ``--dtype``). Raises InputError (a ValueError) naming the input for a CUDA
    tensor, an unsupported dtype or something that is no array."""
    if is_torch_tensor(value):
        torch = _torch()
        if value.device.type != "cpu":
            raise InputError(
                f"{name}: a torch tensor on {value.device}; copy it to the CPU at the boundary "
                f"({name}.cpu()) — ropecheck reads host memory only"
            )
        value = value.detach().contiguous()
        if value.dtype == torch.bfloat16:
            bits = value.view(torch.int16).numpy().view(np.uint16)
            return np.ascontiguousarray(bits), "bfloat16"
        if value.dtype == torch.float16:
            return np.ascontiguousarray(value.view(torch.int16).numpy().view(np.uint16)), "float16"
        for fp8_name, fp8_dtype in _torch_fp8(torch).items():
            if value.dtype == fp8_dtype:
                return np.ascontiguousarray(value.view(torch.uint8).numpy()), fp8_name
        value = value.numpy()
    try:
        array = np.ascontiguousarray(np.asarray(value))
    except (TypeError, ValueError) as e:  # a ragged list, an object NumPy cannot read
        raise InputError(f"{name}: is not an array ({' '.join(str(e).split())})") from None
    if array.dtype in (np.dtype(np.uint16), np.dtype(np.int16)):
        if raw16 is None:
            raise InputError(f"{name}: 16-bit integers: pass dtype=\"bfloat16\" to read them as bfloat16 bits")
        return array.view(np.uint16), raw16
    if array.dtype == np.dtype(np.uint8):
        if raw16 not in _FP8:
            choices = " or ".join(f"dtype=\"{n}\"" for n in _FP8)
            raise InputError(f"{name}: uint8 array: pass {choices} to read it as fp8 bits")
        return array, raw16
    name_of = _NUMPY_DTYPES.get(array.dtype)
    if name_of is None:
        raise InputError(f"{name}: dtype {array.dtype} is not float64, float32, float16, bfloat16, int32 or int64")
    if name_of == "float16":
        return array.view(np.uint16), "float16"
    return array, name_of


# ---------------------------------------------------------------------------------------------
# The gate's side: the user's kernel between raw storage bits.


def _kernel_input(bits: np.ndarray, storage: str, tensor_type: str):
    if tensor_type == "numpy":
        return bits.view(np.float16) if storage == "float16" else bits  # fp8: uint8 bits
    torch = _torch()
    if storage == "float32":
        return torch.from_numpy(bits)
    if storage in _FP8:
        return torch.from_numpy(bits).view(_torch_fp8(torch)[storage])
    as_int16 = torch.from_numpy(bits.view(np.int16))
    return as_int16.view(torch.bfloat16 if storage == "bfloat16" else torch.float16)


def _output_bits(value, storage: str, expected_shape, name: str, kernel_name: str) -> np.ndarray:
    if is_torch_tensor(value):
        torch = _torch()
        wanted = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
                  **_torch_fp8(torch)}[storage]
        if value.dtype != wanted:
            raise TypeError(
                f"kernel {kernel_name}: {name} has dtype {value.dtype}, but the call's storage dtype is "
                f"{wanted} (return the output in the dtype of the input)"
            )
        value = value.detach().cpu().contiguous()
        array = (value.numpy() if storage == "float32"
                 else value.view(torch.uint8).numpy() if storage in _FP8
                 else value.view(torch.int16).numpy().view(np.uint16))
    else:
        array = np.asarray(value)
        wanted = np.dtype(np.float32 if storage == "float32" else np.uint8 if storage in _FP8 else np.float16)
        if storage == "bfloat16" or array.dtype != wanted:
            raise TypeError(
                f"kernel {kernel_name}: {name} has dtype {array.dtype}, but the call's storage dtype is "
                f"{storage} (return the output in the dtype of the input)"
            )
        array = array.view(np.uint16) if storage == "float16" else array
    if tuple(array.shape) != tuple(expected_shape):
        raise ValueError(
            f"kernel {kernel_name}: {name} has shape {tuple(array.shape)}, expected {tuple(expected_shape)}"
        )
    return np.ascontiguousarray(array)


class KernelTimeout(TimeoutError):
    """A kernel call ran past ``gate(timeout=…)``: the message names the kernel, the check
    (property/dtype, or fixtures) and the call."""


def _call_text(q_bits, k_bits, params, storage) -> str:
    return (f"tokens={q_bits.shape[0]}, heads={q_bits.shape[1]} (k_heads={k_bits.shape[1]}), "
            f"head_dim={q_bits.shape[2]}, rotary_dim={params['rotary_dim']}, dtype={storage}, "
            f"pairing={params['pairing']}")


def _limited(call, seconds: float, message):
    """call() with a one-shot ITIMER_REAL of `seconds`: its SIGALRM handler raises KernelTimeout
    inside the kernel's Python code (a kernel stuck in C code that never returns to the
    interpreter is not interrupted). The previous handler is restored after the call."""

    def on_alarm(signum, frame):
        raise KernelTimeout(message())

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return call()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def kernel_device(device, tensor_type: str):
    """gate(device=…): None (the CPU), or a torch device (its name or a torch.device) the kernel's
    tensors are made on; only with tensor_type="torch". InputError (a FlagError) otherwise."""
    from ._ropecheck import FlagError

    if device is None:
        return None
    if tensor_type != "torch":
        raise FlagError(f"device: needs tensor_type=\"torch\" {device!r} (NumPy arrays live on the CPU)")
    torch = _torch()
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise FlagError(f"device: is not a torch device {device!r} ({' '.join(str(e).split())})") from None


def kernel_adapter(kernel, tensor_type: str, kernel_name: str, timeout: float | None = None, device=None):
    """The callable the C++ bridge calls once per kernel call (python/python_kernel.h); `check`
    is the gate's running check, named when a call exceeds `timeout` seconds. With `device`
    (kernel_device), q, k, positions and the params' tensors are made on it, and the outputs
    copied back to the host for judging."""

    def adapter(q_bits, k_bits, positions, params, storage, check):
        if timeout is None:
            return _adapted(q_bits, k_bits, positions, params, storage)
        return _limited(lambda: _adapted(q_bits, k_bits, positions, params, storage), timeout,
                        lambda: (f"kernel {kernel_name}: a call exceeded timeout={timeout:g} s in {check} "
                                 f"({_call_text(q_bits, k_bits, params, storage)})"))

    def _adapted(q_bits, k_bits, positions, params, storage):
        q = _kernel_input(q_bits, storage, tensor_type)
        k = _kernel_input(k_bits, storage, tensor_type)
        if tensor_type == "torch":
            torch = _torch()
            positions = torch.from_numpy(positions)
            params = dict(params, inv_freq=torch.from_numpy(params["inv_freq"]))
            if "pair_streams" in params:
                params["pair_streams"] = torch.from_numpy(params["pair_streams"])
            if device is not None:
                q, k, positions = q.to(device), k.to(device), positions.to(device)
                params = {key: v.to(device) if is_torch_tensor(v) else v for key, v in params.items()}
        result = kernel(q, k, positions, params)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(f"kernel {kernel_name}: must return (q_out, k_out), returned {type(result).__name__}")
        return (
            _output_bits(result[0], storage, q_bits.shape, "q_out", kernel_name),
            _output_bits(result[1], storage, k_bits.shape, "k_out", kernel_name),
        )

    return adapter
