"""ropecheck from Python: the 256-bit RoPE reference, the audit of third-party outputs and the
property gate of kernels, over the same C++ core as the ``ropecheck`` command (a compiled
pybind11 module, never a reimplementation).

    import ropecheck
    y = ropecheck.reference(x, positions, "config.json")            # 256-bit reference
    report = ropecheck.audit(x, positions, y_kernel, spec)            # → AuditReport
    report = ropecheck.gate(my_rope, dtypes=["float32"])              # → GateReport

Inputs are NumPy arrays, anything with the array protocol, or torch CPU tensors (bfloat16 read
through its raw bits). CUDA tensors: copy them to the CPU at the boundary (``t.cpu()``).

Every bad argument — an array, a spec, a label, a seed, a tolerance, a path — raises
``InputError`` (a ValueError; ``SpecError`` and ``FlagError`` are its subclasses) with the
one-line message the ``ropecheck`` command prints for the same input before its exit 2.
"""

from __future__ import annotations

import json as _json
from collections.abc import Mapping as _Mapping
from dataclasses import dataclass as _dataclass

from . import _ropecheck as _core
from ._bridge import KernelTimeout
from ._bridge import kernel_adapter as _kernel_adapter
from ._bridge import kernel_device as _kernel_device
from ._bridge import raw_array as _raw_array

__version__ = _core.__version__
# The dtype names the core takes, from its one catalog (numeric/dtype.h): the storage dtypes
# (gate's ``dtypes``, audit's ``dtype``), those NumPy holds as raw bits, and the 8-bit floats.
storage_dtypes: tuple[str, ...] = _core.storage_dtypes
raw_bits_dtypes: tuple[str, ...] = _core.raw_bits_dtypes
float8_dtypes: tuple[str, ...] = _core.float8_dtypes
Spec = _core.Spec
InputError = _core.InputError  # a ValueError: any bad input or argument, named in the message
SpecError = _core.SpecError  # an InputError: a spec the reader refuses, naming the key and value
FlagError = _core.FlagError  # an InputError: an argument value the call cannot use (tolerance, seed), named

__all__ = [
    "AuditReport",
    "GateFailure",
    "GateReport",
    "FlagError",
    "InputError",
    "KernelTimeout",
    "Spec",
    "SpecError",
    "audit",
    "float8_dtypes",
    "gate",
    "load_spec",
    "raw_bits_dtypes",
    "reference",
    "storage_dtypes",
]


def load_spec(spec) -> Spec:
    """A spec from a dict (a ``config.json`` loaded with ``json.load`` works as is; read by the
    rules of a config.json file: no inf or nan, nesting to 256 levels), a path to a JSON file, or
    a Spec (returned as is)."""
    return _core.load_spec(spec)


def reference(x, positions, spec, form: str = "elementwise", out_dtype: str = "float64",
              output_scale: float = 1.0):
    """The 256-bit reference applied to X (``[tokens, heads, head_dim]`` or
    ``[batch, tokens, heads, head_dim]``) at int32/int64 positions (``[tokens]`` or
    ``[batch, tokens]``; with an M-RoPE or 2-D vision spec ``[streams, tokens]`` or
    ``[streams, batch, tokens]``), each output rounded once to ``out_dtype`` (float64 or float32): what
    ``ropecheck reference`` writes. ``form``: elementwise, complex or matrix. ``output_scale`` S
    (``--output-scale``): each output is y / S, the value an fp8 store with that scale approximates."""
    xa, xd = _raw_array(x, "x")
    pa, pd = _raw_array(positions, "positions")
    return _core.reference(spec, xa, xd, pa, pd, form, out_dtype, output_scale)


class _Report:
    """What AuditReport and GateReport share: the core report object, its JSON as a dict, the
    verdict, and the files of the CLI's report flags."""

    def __init__(self, core):
        self._core = core
        self._dict = _json.loads(core.to_json())

    @property
    def passed(self) -> bool:
        return bool(self._core.passed)

    @property
    def verdict(self) -> str:
        return self._dict["verdict"]

    def to_dict(self) -> dict:
        return _json.loads(self._core.to_json())

    def to_json(self) -> str:
        """The JSON report, byte for byte what ``write(json=…)`` writes (and the CLI's ``--json``)."""
        return self._core.to_json()

    def write(self, json=None, markdown=None, html=None, junit=None) -> None:
        """Writes the files asked for, all or none; the paths are checked first as the CLI checks
        its report flags (not empty, not one path twice, not the spec file read)."""
        self._core.write(json, markdown, html, junit)


class AuditReport(_Report):
    """What ``ropecheck audit`` reports, for tensors in memory. ``to_dict()`` has the fields of
    the JSON report (docs/report-schema.md); ``write(json=…, markdown=…, html=…, junit=…)``
    writes the same files as the CLI's report flags."""

    @property
    def max_rel_pair_error_units(self) -> float:
        return self._dict["max_rel_pair_error_units"]

    @property
    def tolerance_units(self) -> float:
        return self._dict["tolerance_units"]

    @property
    def worst(self) -> dict:
        return dict(self._dict["worst"])

    @property
    def diagnosis(self) -> list[dict]:
        return [dict(f) for f in self._dict["diagnosis"]]

    def __str__(self) -> str:
        return self._core.render_terminal()

    def __repr__(self) -> str:
        codes = ", ".join(f["code"] for f in self._dict["diagnosis"]) or "-"
        return (f"<AuditReport {self.verdict}: max {self.max_rel_pair_error_units:.4g} units of 2^-24 "
                f"(tolerance {self.tolerance_units:.4g}); diagnosis: {codes}>")


def audit(x, positions, y, spec, dtype: str | None = None, tolerance: float | None = None,
          labels: _Mapping[str, str] | None = None, output_scale: float = 1.0, contract=None) -> AuditReport:
    """Judges a third-party RoPE output ``y`` of input ``x`` against the reference's double tier,
    as ``ropecheck audit`` does (same figures, same diagnosis). ``dtype`` judges y as float32,
    float16, bfloat16, float8_e4m3fn or float8_e5m2 (default: y's; fp8 given as uint8 NumPy
    arrays of the bits needs it, a torch fp8 tensor names itself); ``tolerance`` in units of 2^-24 × pair norm.
    ``labels`` names the inputs in messages and the report (keys spec, x, positions, y).
    ``output_scale`` S (``--output-scale``): fp8 ``y`` written as round(y_exact / S), judged and
    diagnosed so, and recorded as the report's ``output_scale``; a FlagError (ValueError) unless S > 0, finite in float32, and y is judged as fp8.
    ``contract`` (as ``gate()`` takes it: a name, a ``"STAGE=CHOICE,…"`` recipe, a path, a dict or
    AuditReports) judges y against a correct kernel's bound widened by that recipe's derived
    error, as ``ropecheck audit --contract`` does; not with ``tolerance``."""
    raw16 = dtype if isinstance(dtype, str) and dtype in _core.raw_bits_dtypes else None
    xa, xd = _raw_array(x, "x", raw16)
    pa, pd = _raw_array(positions, "positions")
    ya, yd = _raw_array(y, "y", raw16)
    return AuditReport(_core.audit(spec, xa, xd, pa, pd, ya, yd, dtype, tolerance, labels, output_scale,
                                   _core_of_contract(contract)))


@_dataclass(frozen=True)
class GateFailure:
    """One failed property or fixture of a gate."""

    check: str  # "<property>/<dtype>" or the fixture's name
    worst_over_bound: float  # observed worst error / derived bound (0 for exact properties)
    counterexample: str  # shrunk counterexample; its last line names the violated bound
    seed: int
    replay: str  # one line that replays it

    def __str__(self) -> str:
        lines = [f"{self.check}: worst/bound {self.worst_over_bound:.4g} (seed {self.seed})"]
        lines += ["  " + line for line in self.counterexample.splitlines()]
        if self.replay:
            lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


class GateReport(_Report):
    """What the gate found on one Python kernel: ``to_dict()`` has the fields of
    ``ropecheck gate --json``; ``failures`` the failed properties and fixtures; ``skipped`` the
    properties whose contract a Python kernel cannot express, with the reason."""

    @property
    def seed(self) -> int:
        return self._dict["seed"]

    @property
    def properties(self) -> list[dict]:
        return [dict(p) for k in self._dict["kernels"] for p in k["properties"]]

    @property
    def fixtures(self) -> list[dict]:
        return [dict(f) for f in self._dict["fixtures"]]

    @property
    def skipped(self) -> list[dict]:
        return list(self._core.skipped)

    @property
    def mutants(self) -> list[dict]:
        """With ``mutants=True``: name, imitates, killed, killed_by, counterexamples per mutant."""
        return [dict(m) for m in self._dict.get("mutants", [])]

    @property
    def mutants_not_applicable(self) -> list[dict]:
        return list(self._core.mutants_not_applicable)

    @property
    def failures(self) -> list[GateFailure]:
        out = [GateFailure(p["name"], p["worst_over_bound"], p["counterexample"], self.seed, p["replay"])
               for p in self.properties if p["verdict"] == "fail"]
        out += [GateFailure(f["name"], f["worst_over_bound"], f["detail"], self.seed, "")
                for f in self.fixtures if f["verdict"] == "fail"]
        out += [GateFailure(f"mutant {m['name']} survived", 0.0, m["imitates"], self.seed,
                            f"ropecheck gate --mutant {m['name']}")
                for m in self.mutants if not m["killed"]]
        return out

    def __str__(self) -> str:
        text = self._core.render_terminal()
        for s in self.skipped:
            text += f"skipped {s['property']}/{s['dtype']}: {s['reason']}\n"
        return text

    def __repr__(self) -> str:
        failed = ", ".join(f.check for f in self.failures) or "-"
        return f"<GateReport {self.verdict}: failed: {failed}>"


def gate(kernel, dtypes=("float32",), pairings=None, profile: str = "quick",
         seed: int | None = None, mutants: bool = False, tensor_type: str | None = None,
         name: str | None = None, timeout: float | None = None, contract=None,
         max_position: int | None = None, positions: str = "all", properties=None,
         serves: _Mapping | None = None, baseline=None, shard=None, device=None) -> GateReport:
    """Runs the property suite and the fixtures of ``ropecheck gate`` on a Python RoPE kernel

        kernel(q, k, positions, params) -> (q_out, k_out)

    q ``[tokens, q_heads, head_dim]`` and k ``[tokens, k_heads, head_dim]`` in the storage dtype
    (NumPy arrays, or torch CPU tensors with ``tensor_type="torch"``, which bfloat16 needs;
    float8_e4m3fn/float8_e5m2 come as uint8 NumPy arrays of the bits, or torch fp8 tensors),
    positions int64 ``[tokens]``, params a dict: ``rotary_dim``, ``pairing`` ("half" |
    "adjacent"), ``inv_freq`` (float64 ``[rotary_dim/2]``, already scaled), ``attention_factor``
    (multiplies cos and sin) and ``inverse`` (rotate by −angle). Dims past rotary_dim pass
    through. k may have 0 heads. The outputs are new arrays of the input's dtype and shape.

    ``mutants=True`` also gates every deliberately wrong kernel of mutants/ on the same checks
    (dtypes, pairings, skipped properties) and passes only if each applicable one is killed, as
    ``ropecheck gate --mutants`` does: evidence that the checks your kernel passed have teeth.

    An exception raised by the kernel ends the gate with that exception. Empty ``dtypes`` or
    ``pairings`` are refused (the gate would check nothing); ``name`` (default: the kernel's
    ``__name__``) is 1 to 128 characters of ``[A-Za-z0-9_.-]``, as a C-ABI kernel's.

    ``timeout`` (seconds, a finite number > 0; default None, no limit) bounds each kernel call: one
    that runs longer ends the gate with ``KernelTimeout`` (a TimeoutError) naming the kernel, the
    check (property/dtype) and the call. It arms a one-shot ITIMER_REAL whose SIGALRM handler
    raises inside the kernel's Python code, so it needs the main thread (elsewhere InputError), and
    a kernel stuck in C code that never returns to the interpreter is not interrupted. Ctrl-C ends
    the gate with KeyboardInterrupt.

    The options of ``ropecheck gate`` (docs/python.md): ``contract`` (default exact) is a
    contract name, a ``"STAGE=CHOICE,…"`` recipe, a path or a dict as a contract file holds it
    (``{"recipe": {…}}`` or ``{"recipes": {"float32": {…}}}``), or an AuditReport (or a list,
    one per dtype) whose recipe, found in the kernel's own output, the gate holds it to;
    ``max_position`` and ``positions`` ("all" | "nonnegative") bound the cases' positions;
    ``properties`` runs only those (and no fixture). ``serves`` declares what the kernel serves
    (keys ``negative_positions``, ``max_position``, ``inverse``, ``attention_factor``,
    ``partial_rotary``, ``absent_tensor``; each omitted one: served): the gate never calls it
    outside, and the properties that need what it lacks are skipped with the reason.
    ``baseline`` (a saved gate JSON's path, or a GateReport) is ``--baseline``'s ratchet: a
    failure the baseline had too, by no more than 10% worst/bound, is a known failure; a new
    failure or a growth beyond 10% is a failing ``baseline/…`` fixture row. ``shard=(i, n)`` runs
    block i of n of every property's cases (``--shard I/N``; shard 0 also runs the fixtures).

    ``serves={"position_streams": True}``: the kernel takes position streams (M-RoPE, 2-D vision):
    positions ``[streams, tokens]`` (``[1, tokens]`` for a 1-D call) and ``params["pair_streams"]``
    (int32 ``[rotary_dim/2]``, the stream each pair turns by); the stream properties run on it.
    A ``ropecheck.torch`` adapter declares its own ``serves``, ``pairings`` and ``tensor_type``,
    used where these are not given. It is the same run as ``ropecheck gate`` (core/gate_run.h).

    ``device`` (with ``tensor_type="torch"``; a name such as ``"cuda"`` or a torch.device): the
    kernel's tensors are made on that device and its outputs copied back to the host for judging,
    so a kernel that runs only on a GPU is gated where it runs."""
    # A ropecheck.torch adapter declares its pairings, tensor type and domain: the defaults.
    declared = getattr(kernel, "ropecheck_declaration", None)
    if pairings is None:
        pairings = declared.pairings if declared is not None else ("half", "adjacent")
    if tensor_type is None:
        tensor_type = declared.tensor_type if declared is not None else "numpy"
    if serves is None and declared is not None:
        serves = declared.serves
    a = _core.gate_arguments(kernel, dtypes, pairings, profile, seed, mutants, tensor_type, name, timeout,
                             _core_of_contract(contract), max_position, positions, properties, serves,
                             baseline._core if isinstance(baseline, GateReport) else baseline, shard)
    options = "".join(f", {key}={a[key]!r}" for key, default in
                      (("max_position", 0), ("positions", "all"), ("properties", [])) if a[key] != default)
    if a["contract_name"] != "exact":
        options = f", contract={a['contract_name']!r}" + options
    if serves is not None:
        options += f", serves={dict(serves)!r}"
    call = (f"ropecheck.gate({a['name']}, dtypes={a['dtypes']!r}, pairings={a['pairings']!r}, "
            f"profile={a['profile']!r}, seed={a['seed']}, tensor_type={a['tensor_type']!r}{options})")
    replay = _replay_command(call)
    adapter = _kernel_adapter(kernel, a["tensor_type"], a["name"], a["timeout"], _kernel_device(device, a["tensor_type"]))
    return GateReport(_core.gate(adapter, replay, a))


def _replay_command(call: str) -> str:
    """What a failure's replay line runs after its ``RC_PARAMS="…"`` prefix: in a pytest test,
    the test (``pytest 'FILE::TEST'``, the file made absolute so the line runs from any
    directory), with the gate call as a shell comment; elsewhere the call alone."""
    import os
    import shlex

    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if not current:
        return f"python: {call}"
    node = current.rsplit(" (", 1)[0]
    file, _, rest = node.partition("::")
    if os.path.exists(file):
        file = os.path.abspath(file)
    return f"pytest {shlex.quote(file + '::' + rest if rest else file)}  # {call}"


def _core_of_contract(contract):
    """An AuditReport (or a list of them) as the core's report objects; anything else as is."""
    if isinstance(contract, AuditReport):
        return contract._core
    if isinstance(contract, (list, tuple)):
        return [c._core if isinstance(c, AuditReport) else c for c in contract]
    return contract
