# Type stubs of the ropecheck package (python/ropecheck/__init__.py).
import os
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np

__version__: str
# numeric/dtype.h's catalog: the storage dtypes (gate's dtypes, audit's dtype), those given as
# raw bits (uint16 bfloat16, uint8 fp8), and the 8-bit floats. A storage dtype is a str here.
storage_dtypes: tuple[str, ...]
raw_bits_dtypes: tuple[str, ...]
float8_dtypes: tuple[str, ...]

# Every bad argument or input: InputError, or one of its two subclasses.
class InputError(ValueError): ...
class FlagError(InputError): ...
class SpecError(InputError): ...
# A kernel call ran past gate(timeout=…): names the kernel, the property/dtype and the call.
class KernelTimeout(TimeoutError): ...

class Spec:
    @property
    def head_dim(self) -> int: ...
    @property
    def rotary_dim(self) -> int: ...
    @property
    def base(self) -> float: ...
    @property
    def pairing(self) -> Literal["half", "adjacent"]: ...
    @property
    def scaling(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def layers_without_rope(self) -> list[int]: ...
    @property
    def layers_without_rope_rule(self) -> str: ...
    @property
    def layer(self) -> int | None: ...

SpecLike = Mapping[str, Any] | str | bytes | os.PathLike[str] | Spec
Path = str | bytes | os.PathLike[str]
# q, k, positions, params -> (q_out, k_out); NumPy arrays or torch tensors (tensor_type="torch").
Kernel = Callable[[Any, Any, Any, dict[str, Any]], tuple[Any, Any]]

def load_spec(spec: SpecLike) -> Spec: ...
def reference(
    x: Any,
    positions: Any,
    spec: SpecLike,
    form: Literal["elementwise", "complex", "matrix"] = "elementwise",
    out_dtype: Literal["float64", "float32"] = "float64",
    output_scale: float = 1.0,
) -> np.ndarray: ...

class AuditReport:
    @property
    def passed(self) -> bool: ...
    @property
    def verdict(self) -> str: ...
    @property
    def max_rel_pair_error_units(self) -> float: ...
    @property
    def tolerance_units(self) -> float: ...
    @property
    def worst(self) -> dict[str, Any]: ...
    @property
    def diagnosis(self) -> list[dict[str, str]]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def write(
        self, json: Path | None = None, markdown: Path | None = None, html: Path | None = None,
        junit: Path | None = None
    ) -> None: ...

def audit(
    x: Any,
    positions: Any,
    y: Any,
    spec: SpecLike,
    dtype: str | None = None,  # one of storage_dtypes
    tolerance: float | None = None,
    labels: Mapping[str, str] | None = None,
    output_scale: float = 1.0,
    contract: str | os.PathLike[str] | bytes | Mapping[str, Any] | AuditReport | Sequence[AuditReport] | None = None,
) -> AuditReport: ...

@dataclass(frozen=True)
class GateFailure:
    check: str
    worst_over_bound: float
    counterexample: str
    seed: int
    replay: str

class GateReport:
    @property
    def passed(self) -> bool: ...
    @property
    def verdict(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def properties(self) -> list[dict[str, Any]]: ...
    @property
    def fixtures(self) -> list[dict[str, Any]]: ...
    @property
    def skipped(self) -> list[dict[str, str]]: ...
    @property
    def mutants(self) -> list[dict[str, Any]]: ...
    @property
    def mutants_not_applicable(self) -> list[dict[str, str]]: ...
    @property
    def failures(self) -> list[GateFailure]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def write(
        self, json: Path | None = None, markdown: Path | None = None, html: Path | None = None,
        junit: Path | None = None
    ) -> None: ...

def gate(
    kernel: Kernel,
    dtypes: Sequence[str] | str = ("float32",),  # storage_dtypes
    pairings: Sequence[Literal["half", "adjacent"]] | str | None = None,
    profile: Literal["quick", "deep"] = "quick",
    seed: int | None = None,
    mutants: bool = False,
    tensor_type: Literal["numpy", "torch"] | None = None,
    name: str | None = None,
    timeout: float | None = None,
    contract: str | os.PathLike[str] | bytes | Mapping[str, Any] | AuditReport | Sequence[AuditReport] | None = None,
    max_position: int | None = None,
    positions: Literal["all", "nonnegative"] = "all",
    properties: Sequence[str] | None = None,
    serves: Mapping[str, bool | int | None] | None = None,
    baseline: str | os.PathLike[str] | bytes | GateReport | None = None,
    shard: tuple[int, int] | None = None,
    device: Any = None,
) -> GateReport: ...
