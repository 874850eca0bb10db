#!/usr/bin/env bash
# Hostile-input sweep against a ropecheck binary (default build/cli/ropecheck):
# every case must exit 2 with one stderr line starting "ropecheck:" and leave its folder as
# it was. Prints each case that does not, and the count. Needs python3 (no numpy).
# Never point its outputs at a device: a ropecheck without the output checks, run as root,
# renames its report over the target (this is why outputs here are FIFOs in a temp folder).
R=$(realpath "${1:-build/cli/ropecheck}")
LIBDIR=$(cd "$(dirname "$R")/.." && pwd)
W=$(mktemp -d /tmp/hostile-sweep-run-XXXX)
cd "$W"
python3 - <<'PY'
import struct, random
def save(name, descr, shape, data, fmt):
    shp = "(%s)" % ", ".join(str(d) for d in shape) if len(shape) > 1 else "(%d,)" % shape[0]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shp)
    pad = 64 - (10 + len(hdr) + 1) % 64
    hdr = hdr + ' ' * pad + '\n'
    with open(name, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<%d%s' % (len(data), fmt), *data))
random.seed(1)
save('x.npy', '<f4', (4, 1, 8), [random.gauss(0, 1) for _ in range(32)], 'f')
save('pos.npy', '<i8', (4,), [0, 1, 2, 3], 'q')
b = open('x.npy', 'rb').read()
open('trunc.npy', 'wb').write(b[:-5])
hb = bytearray(b); hb[8] = 0xff; hb[9] = 0xff; open('hdrlen.npy', 'wb').write(bytes(hb))
entry = '{"dtype": "F32", "shape": [4, 1, 8], "data_offsets": [0, 128]}'
h = ('{"y": %s, "y": %s}' % (entry, entry)).encode()
open('dup.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + b[-128:])
open('huge.safetensors', 'wb').write(struct.pack('<Q', 1 << 62) + b'{}')
open('spec.json', 'w').write('{"head_dim": 8, "rope_theta": 10000.0}')
open('inf.json', 'w').write('{"head_dim": 8, "rope_theta": 1e999}')
open('dupkey.json', 'w').write('{"head_dim": 32, "head_dim": 64}')
open('deep.json', 'w').write('[' * 100000 + ']' * 100000)
open('empty.json', 'w').write('')
open('utf8.json', 'wb').write(b'{"head_dim": 8, "x": "\xff\xfe"}')
open('big.json', 'w').write('[' + ' ' * (65 << 20) + ']')
open('notreport.json', 'w').write('{"a": 1}')
# Degenerate forms (nothing to judge, or a tolerance that cannot fail): exit 2, never a pass.
save('tokens0.npy', '<f4', (0, 1, 8), [], 'f'); save('pos0.npy', '<i8', (0,), [], 'q')
save('heads0.npy', '<f4', (4, 0, 8), [], 'f'); save('batch0.npy', '<f4', (0, 4, 1, 8), [], 'f')
save('posb0.npy', '<i8', (0, 4), [], 'q'); save('far.npy', '<i8', (4,), [0, 70000, 140000, 200000], 'q')
save('ones_fp8.npy', '|u1', (4, 1, 8), [0x38] * 32, 'B')
open('nope.json', 'w').write('{"model_type": "llama4_text", "head_dim": 8, "rope_theta": 10000.0, "num_hidden_layers": 2, "no_rope_layers": [0, 0]}')
open('linear_attn.json', 'w').write('{"model_type": "qwen3_next", "head_dim": 8, "rope_theta": 10000.0, "partial_rotary_factor": 1.0, "num_hidden_layers": 2, "layer_types": ["linear_attention", "linear_attention"]}')
open('tiny_factor.json', 'w').write('{"head_dim": 8, "rope_scaling": {"rope_type": "linear", "factor": 1e-300}}')
open('tiny_yarn.json', 'w').write('{"head_dim": 8, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 1e-300}}')
open('betas.json', 'w').write('{"head_dim": 8, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0, "beta_slow": 32.0}}')
open('interleaved.json', 'w').write('{"head_dim": 8, "rope_scaling": {"rope_type": "default", "mrope_section": [1, 2, 1], "mrope_interleaved": true}}')
open('banana.json', 'w').write('{"head_dim": 8, "num_hidden_layers": 2, "layer_types": ["full_attention", "banana_attention"]}')
t = '{"constant": 1.65, "angle": 3.0001, "angle_per_pair": 0, "absolute": 0}'
open('wide_contract.json', 'w').write('{"name": "wide", "float32": %s, "float16": {"constant": 1e30, "angle": 0, "angle_per_pair": 0, "absolute": 0}, "bfloat16": %s}' % (t, t))
open('seedneg.json', 'w').write('{"report": "gate", "tool_version": "x", "verdict": "pass", "profile": "quick", "seed": -1, "kernels": [], "fixtures": []}')
PY
"$R" apply --kernel cache_scalar --spec spec.json --x x.npy --pos pos.npy --out y.npy >/dev/null 2>&1
"$R" audit --spec spec.json --x x.npy --pos pos.npy --y y.npy --json saved.json >/dev/null 2>&1
mkfifo fifo.npy fifo.json fifo.so; mkdir dir dir.npy dir.json
ln -s /dev/zero zero.npy; ln -s /dev/zero zero.safetensors; ln -s /dev/urandom urandom.npy; ln -s /dev/zero zero.json; ln -s /dev/zero zero.so
ln -s y.npy link-to-y.json
ln -s loop.json loop.json; ln -s loop.npy loop.npy; LONG=$(printf 'n%.0s' {1..252}).json  # a symbolic link loop; a name of 257 bytes
A="audit --spec spec.json --x x.npy --pos pos.npy"
cases=(
 "$A --y fifo.npy" "audit --spec spec.json --x fifo.npy --pos pos.npy --y y.npy" "audit --spec fifo.json --x x.npy --pos pos.npy --y y.npy"
 "audit --spec spec.json --x x.npy --pos fifo.npy --y y.npy"
 "$A --y zero.npy" "$A --y zero.safetensors" "$A --y urandom.npy" "audit --spec zero.json --x x.npy --pos pos.npy --y y.npy"
 "audit --spec dir --x x.npy --pos pos.npy --y y.npy" "audit --spec spec.json --x dir.npy --pos pos.npy --y y.npy"
 "audit --spec inf.json --x x.npy --pos pos.npy --y y.npy" "audit --spec dupkey.json --x x.npy --pos pos.npy --y y.npy"
 "audit --spec deep.json --x x.npy --pos pos.npy --y y.npy" "audit --spec empty.json --x x.npy --pos pos.npy --y y.npy"
 "audit --spec utf8.json --x x.npy --pos pos.npy --y y.npy" "audit --spec big.json --x x.npy --pos pos.npy --y y.npy"
 "$A --y y.npy --tolerance inf" "$A --y y.npy --tolerance nan" "$A --y y.npy --tolerance 0" "$A --y y.npy --tolerance -1" "$A --y y.npy --tolerance 1e999"
 "$A --y y.npy --json ok.json --html missing-dir/r.html" "$A --y y.npy --json dir" "$A --y y.npy --json fifo.json"
 "$A --y y.npy --json same --html same" "$A --y y.npy --json y.npy" "$A --y y.npy --json link-to-y.json" "$A --y y.npy --markdown spec.json"
 "$A --y y.npy --json dir/" "$A --y trunc.npy" "$A --y hdrlen.npy" "$A --y dup.safetensors" "$A --y huge.safetensors"
 "$A --y y.npy --json ok.json --junit ok.json"
 "gate --seed -1" "gate --seed 1180591620717411303424" "gate --seed 1e3" "gate --seed 0x10"
 "gate --kernel cache_scalar --baseline fifo.json" "gate --kernel cache_scalar --baseline dir" "gate --kernel cache_scalar --baseline dupkey.json"
 "gate --kernel cache_scalar --baseline saved.json --json saved.json" "gate --kernel no_such" "gate --kernel cache_scalar --kernel cache_scalar"
 "gate --kernel-lib $LIBDIR/abi/libmisnamed_kernels_bad_name.so" "gate --kernel-lib $LIBDIR/abi/libmisnamed_kernels_duplicate.so"
 "gate --kernel-lib fifo.so" "gate --kernel-lib dir" "gate --kernel-lib zero.so" "gate --kernel cache_scalar --json missing-dir/g.json"
 "gate --mutant no_such" "gate --kernel cache_scalar --json g.json --html g.json"
 "report fifo.json" "report dir" "report zero.json" "report dupkey.json" "report inf.json" "report notreport.json" "report saved.json --json saved.json"
 "report seedneg.json" "report empty.json" "report saved.json --html missing-dir/r.html"
 "apply --kernel cache_scalar --spec spec.json --x x.npy --pos pos.npy --out x.npy" "apply --kernel cache_scalar --spec spec.json --x x.npy --pos pos.npy --out missing-dir/y.npy"
 "apply --kernel cache_scalar --spec spec.json --x x.npy --pos pos.npy --out y2.safetensors" "apply --kernel cache_scalar --spec spec.json --x x.npy --pos pos.npy --out dir"
 "apply --kernel nope --spec spec.json --x x.npy --pos pos.npy --out y2.npy" "apply --kernel cache_scalar --spec spec.json --x fifo.npy --pos pos.npy --out y2.npy"
 "reference --spec spec.json --x x.npy --pos pos.npy --out pos.npy" "reference --spec spec.json --x x.npy --pos pos.npy --out fifo.npy"
 "reference --spec inf.json --x x.npy --pos pos.npy --out y2.npy" "reference --spec spec.json --x zero.npy --pos pos.npy --out y2.npy"
 "reference --spec spec.json --x tokens0.npy --pos pos0.npy --out y2.npy" "apply --kernel cache_simd --spec spec.json --x heads0.npy --pos pos.npy --out y2.npy"
 "audit --spec spec.json --x batch0.npy --pos posb0.npy --y batch0.npy" "audit --spec spec.json --x heads0.npy --pos pos.npy --y heads0.npy"
 "identify --x tokens0.npy --pos pos0.npy --y tokens0.npy" "identify --x heads0.npy --pos pos.npy --y heads0.npy"
 "reference --spec nope.json --x x.npy --pos pos.npy --out y2.npy" "audit --spec linear_attn.json --x x.npy --pos pos.npy --y y.npy"
 "audit --spec tiny_factor.json --x x.npy --pos far.npy --y x.npy" "audit --spec tiny_yarn.json --x x.npy --pos far.npy --y x.npy"
 "audit --spec betas.json --x x.npy --pos pos.npy --y y.npy" "audit --spec interleaved.json --x x.npy --pos pos.npy --y y.npy"
 "audit --spec banana.json --x x.npy --pos pos.npy --y y.npy" "$A --y y.npy --tolerance 16777216"
 "$A --y ones_fp8.npy --dtype float8_e4m3fn --output-scale 1e-45" "$A --y ones_fp8.npy --dtype float8_e4m3fn --output-scale 1e-30"
 "gate --kernel cache_scalar --contract wide_contract.json"
 "gate --max-position 010" "gate --max-position 0x10" "gate --max-position 9223372036854775808" "gate --max-position 0"
 "$A --y y.npy --tolerance 0x10" "$A --y y.npy --tolerance 1e3e" "gate --kernel-timeout -1" "gate --isolate sometimes"
 "gate --kernel-lib $LIBDIR/abi/libhostile_ctor_exit.so" "kernels --kernel-lib $LIBDIR/abi/libhostile_count_max.so"
 "apply --kernel hostile --kernel-lib $LIBDIR/abi/libhostile_ctor_exit.so --spec spec.json --x x.npy --pos pos.npy --out y3.npy"
 "identify --x x.npy --pos pos.npy --y y.npy --spec-out x.npy" "identify --x x.npy --pos pos.npy --y y.npy --json pos.npy" "identify --x x.npy --pos pos.npy --y y.npy --spec-out s.json --json s.json"
 "identify --x x.npy --pos pos.npy --y y.npy --spec-out s.json --junit missing-dir/r.xml" "identify --x x.npy --pos pos.npy --y y.npy --spec-out loop.json" "identify --x x.npy --pos pos.npy --y y.npy --spec-out fifo.json"
 "$A --y y.npy --json loop.json" "$A --y y.npy --json $LONG" "gate --kernel cache_scalar --html $LONG"
 "apply --kernel cache_scalar --spec spec.json --x x.npy --pos pos.npy --out loop.npy"
 "frobnicate" "audit --spec spec.json --x x.npy --pos pos.npy --y y.npy --frob 3" "gate --profile fast" ""
)
ok=0; bad=0
before=$(ls -la --time-style=+%s.%N . | grep -v -E " \.\.?$" | md5sum)
for c in "${cases[@]}"; do
  timeout 30 "$R" $c >"$W.out" 2>"$W.err"; rc=$?
  lines=$(wc -l < "$W.err"); first=$(head -c 11 "$W.err")
  :
  after=$(ls -la --time-style=+%s.%N . | grep -v -E " \.\.?$" | md5sum)
  if [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ "$first" = "ropecheck: " ] && [ "$before" = "$after" ]; then ok=$((ok+1)); else bad=$((bad+1)); echo "NOT OK (rc $rc, $lines lines, changed $([ "$before" = "$after" ] && echo no || echo yes)): $c"; fi
  before=$(ls -la --time-style=+%s.%N . | grep -v -E " \.\.?$" | md5sum)
done
echo "sweep: $ok of ${#cases[@]} handled right, $bad not"
cd /; rm -rf "$W" "$W.out" "$W.err"
