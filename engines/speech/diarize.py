"""Who spoke when, offline and on CPU, with numpy alone.

Voices are told apart by Resemblyzer's GE2E speaker encoder (a 3-layer LSTM over 40 mel bands),
whose weights ship inside the `resemblyzer` wheel from PyPI (`pretrained.pt`). The file is read
here without torch: it is torch's legacy format, a few pickles followed by raw tensor storages.
Nothing is fetched from a model hub.

The audio is cut into 1.6 s windows every 0.4 s over the speech the recogniser found; each window
gets a voice embedding; the windows are clustered (to `num_speakers` when given, else the number
is estimated from the similarities); each 10 ms frame of speech takes the speaker that the
windows covering it vote for. The answer is a list of turns: (start, end, speaker index).
"""
import importlib.util
import os
import pickle
import struct

import numpy as np

SAMPLE_RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
WINDOW_FRAMES = 160  # 1.6 s, the encoder's partial utterance
STEP_FRAMES = 40  # 0.4 s between windows
# Two stretches of speech are one voice when their embeddings are at least this alike (cosine, the
# average over the groups); measured: one real speaker's pauses-apart phrases 0.69-0.85 (averaging
# 0.75 or more), distinct synthetic voices 0.48-0.74.
THRESHOLD = 0.74
# A speaker is a known speaker when its voice and the reference clip's are at least this alike: the
# same synthetic voice over different sentences measured 0.93-0.97, distinct ones at most 0.76.
MATCH_THRESHOLD = 0.8

_ENCODER = None


def weights_path():
    """pretrained.pt inside the installed resemblyzer package (found without importing it: its
    imports need torch and webrtcvad, which the service does not install)."""
    spec = importlib.util.find_spec("resemblyzer")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("speaker labels need the resemblyzer package (requirements-diarize.txt); it is not installed")
    path = os.path.join(list(spec.submodule_search_locations)[0], "pretrained.pt")
    if not os.path.exists(path):
        raise RuntimeError(f"the resemblyzer package has no speaker encoder weights at {path}")
    return path


class _Storage:
    def __init__(self, dtype, size):
        self.dtype, self.size, self.data = dtype, size, None


_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "LongStorage": np.int64, "IntStorage": np.int32, "HalfStorage": np.float16}


class _Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def array(self):
        item = self.storage.data.itemsize
        return np.lib.stride_tricks.as_strided(
            self.storage.data[self.offset:], shape=self.size, strides=tuple(s * item for s in self.stride)
        ).copy()


def _rebuild_tensor(storage, offset, size, stride, *_rest):
    return _Tensor(storage, offset, size, stride)


class _Unpickler(pickle.Unpickler):
    def __init__(self, f, storages):
        super().__init__(f)
        self.storages = storages

    def find_class(self, module, name):
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _rebuild_tensor
        if module == "torch" and name in _DTYPES:
            return name
        if module == "collections" and name == "OrderedDict":
            import collections

            return collections.OrderedDict
        if module == "torch" and name == "device":
            return str
        raise pickle.UnpicklingError(f"unexpected {module}.{name} in the weight file")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, size = pid[:5]
        if kind != "storage":
            raise pickle.UnpicklingError(f"unexpected persistent id {kind}")
        if key not in self.storages:
            self.storages[key] = _Storage(_DTYPES[storage_type], size)
        return self.storages[key]


def load_weights(path):
    """torch's legacy (pre-zip) format: magic, protocol, system info, the object, the storage keys, then each storage."""
    with open(path, "rb") as f:
        for _ in range(3):
            pickle.load(f)
        storages = {}
        obj = _Unpickler(f, storages).load()
        keys = pickle.load(f)
        for key in keys:
            st = storages[key]
            (count,) = struct.unpack("<q", f.read(8))
            st.data = np.frombuffer(f.read(count * np.dtype(st.dtype).itemsize), dtype=st.dtype)
    state = obj["model_state"] if "model_state" in obj else obj
    return {name: t.array() for name, t in state.items() if isinstance(t, _Tensor)}


def _mel_filters():
    """librosa.filters.mel(sr=16000, n_fft=400, n_mels=40): Slaney's mel scale, area-normalised."""

    def hz_to_mel(f):
        f = np.asanyarray(f, dtype=np.float64)
        mels = f / (200.0 / 3)
        log_t = f >= 1000.0
        return np.where(log_t, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0), mels)

    def mel_to_hz(m):
        m = np.asanyarray(m, dtype=np.float64)
        freqs = (200.0 / 3) * m
        log_t = m >= 15.0
        return np.where(log_t, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), freqs)

    fft_freqs = np.linspace(0, SAMPLE_RATE / 2, 1 + N_FFT // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(SAMPLE_RATE / 2), N_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    weights = np.zeros((N_MELS, len(fft_freqs)))
    for i in range(N_MELS):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : N_MELS + 2] - mel_f[:N_MELS]))[:, None]
    return weights.astype(np.float32)


def mel_frames(wav):
    """Power mel spectrogram, one row per 10 ms (centred frames, as librosa computes it for the encoder)."""
    padded = np.pad(wav, (N_FFT // 2, N_FFT // 2))
    n = 1 + (len(padded) - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n)[:, None]
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)
    spec = np.abs(np.fft.rfft(padded[idx] * window, axis=1)) ** 2
    return (spec.astype(np.float32) @ _mel_filters().T).astype(np.float32)


class VoiceEncoder:
    def __init__(self, weights):
        self.layers = []
        for layer in range(3):
            w_ih = weights[f"lstm.weight_ih_l{layer}"]
            w_hh = weights[f"lstm.weight_hh_l{layer}"]
            b = weights[f"lstm.bias_ih_l{layer}"] + weights[f"lstm.bias_hh_l{layer}"]
            self.layers.append((w_ih.T.copy(), w_hh.T.copy(), b))
        self.linear_w = weights["linear.weight"].T.copy()
        self.linear_b = weights["linear.bias"]

    def embed(self, mels):
        """(batch, frames, 40) → (batch, 256) L2-normalised voice embeddings (the last hidden state)."""
        x = mels.astype(np.float32)
        for w_ih, w_hh, b in self.layers:
            batch, steps, _ = x.shape
            hidden = w_hh.shape[0]
            h = np.zeros((batch, hidden), np.float32)
            c = np.zeros((batch, hidden), np.float32)
            pre = x @ w_ih + b  # all time steps' input projections at once
            out = np.empty((batch, steps, hidden), np.float32)
            for t in range(steps):
                g = pre[:, t] + h @ w_hh
                i = _sigmoid(g[:, :hidden])
                f = _sigmoid(g[:, hidden : 2 * hidden])
                cell = np.tanh(g[:, 2 * hidden : 3 * hidden])
                o = _sigmoid(g[:, 3 * hidden :])
                c = f * c + i * cell
                h = o * np.tanh(c)
                out[:, t] = h
            x = out
        raw = np.maximum(0, h @ self.linear_w + self.linear_b)
        return raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-9)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # the logistic function without exp's overflow


def encoder():
    global _ENCODER
    if _ENCODER is None:
        _ENCODER = VoiceEncoder(load_weights(weights_path()))
    return _ENCODER


def _normalise_volume(wav, target_dbfs=-30.0):
    rms = np.sqrt(np.mean(wav**2)) if len(wav) else 0.0
    if rms <= 0:
        return wav
    gain = 10 ** ((target_dbfs - 20 * np.log10(rms)) / 20)
    return wav * gain if gain > 1 else wav  # raise quiet audio only, as the encoder was trained


def speech_mask(regions, n_frames):
    mask = np.zeros(n_frames, bool)
    for start, end in regions:
        mask[max(0, int(start * 100)) : min(n_frames, int(np.ceil(end * 100)))] = True
    return mask


def window_embeddings(wav, regions, batch=64, smooth=2):
    """Voice embeddings of 1.6 s windows every 0.4 s inside each speech region (a window never spans a
    pause, so never two speakers' turns separated by one); a region shorter than a window is one
    window of its own length. Each window's embedding is then averaged with its neighbours in the
    same region (`smooth` on each side), as a turn's voice is steadier than any 1.6 s of it.
    Returns the windows' (start, end) frames, their smoothed embeddings, the speech mask, and per
    region long enough to embed, its seconds and the mean of its windows' embeddings."""
    mel = mel_frames(_normalise_volume(wav))
    mask = speech_mask(regions, len(mel))
    spans, groups = [], []
    for start, end in regions:
        a, b = max(0, int(start * 100)), min(len(mel), int(np.ceil(end * 100)))
        if b - a < 30:  # under 0.3 s says little of a voice
            continue
        if b - a <= WINDOW_FRAMES:
            win = [(a, b)]
        else:
            win = [(s, s + WINDOW_FRAMES) for s in range(a, b - WINDOW_FRAMES + 1, STEP_FRAMES)]
            if win[-1][1] < b:
                win.append((b - WINDOW_FRAMES, b))
        groups.append(list(range(len(spans), len(spans) + len(win))))
        spans.extend(win)
    if not spans:
        return np.zeros((0, 2), int), np.zeros((0, 256), np.float32), mask, []
    enc = encoder()
    emb = np.zeros((len(spans), 256), np.float32)
    full = [i for i, (a, b) in enumerate(spans) if b - a == WINDOW_FRAMES]
    for i in range(0, len(full), batch):
        chunk = full[i : i + batch]
        emb[chunk] = enc.embed(np.stack([mel[spans[j][0] : spans[j][1]] for j in chunk]))
    for j, (a, b) in enumerate(spans):
        if b - a != WINDOW_FRAMES:
            emb[j] = enc.embed(mel[None, a:b])[0]
    smoothed = emb.copy()
    region_means = []
    for group in groups:
        m = emb[group].mean(axis=0)
        secs = (spans[group[-1]][1] - spans[group[0]][0]) / 100
        region_means.append((secs, m / max(np.linalg.norm(m), 1e-9)))
        for n, j in enumerate(group):
            near = group[max(0, n - smooth) : n + smooth + 1]
            m = emb[near].mean(axis=0)
            smoothed[j] = m / max(np.linalg.norm(m), 1e-9)
    return np.array(spans, int), smoothed, mask, region_means


def _agglomerate(emb, k=None, threshold=None):
    """Average-linkage clustering on cosine similarity, merged down to k clusters or until the best pair is less similar than threshold."""
    clusters = [[i] for i in range(len(emb))]
    sim = emb @ emb.T
    # cluster-to-cluster mean similarity, kept as sums and counts
    sums = sim.copy()
    np.fill_diagonal(sums, -np.inf)
    sizes = np.ones(len(emb))
    alive = np.ones(len(emb), bool)
    while alive.sum() > 1:
        avg = sums / np.outer(sizes, sizes)
        avg[~alive, :] = -np.inf
        avg[:, ~alive] = -np.inf
        a, b = np.unravel_index(np.argmax(avg), avg.shape)
        best = avg[a, b]
        if k is not None and alive.sum() <= k:
            break
        if k is None and best < threshold:
            break
        # merge b into a
        clusters[a] += clusters[b]
        sums[a, :] += sums[b, :]
        sums[:, a] += sums[:, b]
        sums[a, a] = -np.inf
        sizes[a] += sizes[b]
        alive[b] = False
    labels = np.empty(len(emb), int)
    for n, idx in enumerate(i for i in range(len(emb)) if alive[i]):
        labels[clusters[idx]] = n
    return labels


def _refine(emb, labels, rounds=5):
    """A few k-means rounds from the clustering, on the sphere: each window to its nearest centroid."""
    for _ in range(rounds):
        ks = np.unique(labels)
        cents = np.stack([emb[labels == k].mean(axis=0) for k in ks])
        cents /= np.linalg.norm(cents, axis=1, keepdims=True)
        new = ks[np.argmax(emb @ cents.T, axis=1)]
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def cluster(emb, num_speakers):
    """Windows into `num_speakers` voices: average-linkage clustering, then a few k-means rounds."""
    if len(emb) == 0:
        return np.zeros(0, int)
    labels = _refine(emb, _agglomerate(emb, k=min(num_speakers, len(emb))))
    _, labels = np.unique(labels, return_inverse=True)
    return labels


def estimate_speakers(region_means, threshold=THRESHOLD, min_share=0.05):
    """How many voices speak: each speech region (speech between pauses) has one embedding, the
    mean of its windows, steadier than any window; regions are clustered by average linkage until
    the two closest groups are less alike than `threshold`. A group speaking under `min_share` of
    the time is a voice's odd moment, not another speaker."""
    usable = [(secs, e) for secs, e in region_means if secs >= 0.5]
    if len(usable) <= 1:
        return 1
    labels = _agglomerate(np.stack([e for _, e in usable]), threshold=threshold)
    secs = np.array([x for x, _ in usable])
    share = np.array([secs[labels == k].sum() for k in range(labels.max() + 1)]) / secs.sum()
    return max(1, int((share >= min_share).sum()))


def turns(wav, regions, num_speakers=None, threshold=None):
    """[(start_s, end_s, speaker_index)] over the speech regions, speakers numbered in order of first speech."""
    spans, emb, mask, region_means = window_embeddings(wav, regions)
    if len(spans) == 0:
        return [], {"windows": 0, "speakers": 0}
    k = num_speakers or estimate_speakers(region_means, threshold or THRESHOLD)
    labels = cluster(emb, k)
    n_speakers = int(labels.max()) + 1
    votes = np.zeros((len(mask), n_speakers), np.float32)
    # each window votes for its speaker over its frames, most strongly at its centre
    for (a, b), lab in zip(spans, labels):
        votes[a:b, lab] += np.hanning(b - a + 2)[1:-1].astype(np.float32)
    frame_speaker = np.argmax(votes, axis=1)
    # frames no window covered take the nearest covered frame's speaker
    covered = votes.sum(axis=1) > 0
    if not covered.all():
        idx = np.where(covered)[0]
        nearest = idx[np.clip(np.searchsorted(idx, np.arange(len(mask))), 0, len(idx) - 1)]
        frame_speaker = frame_speaker[nearest]
    out = []
    for start, end in regions:
        a, b = max(0, int(start * 100)), min(len(mask), int(np.ceil(end * 100)))
        if b <= a:
            continue
        seg = frame_speaker[a:b]
        cut = [a] + [a + i for i in range(1, len(seg)) if seg[i] != seg[i - 1]] + [b]
        for x, y in zip(cut, cut[1:]):
            out.append([x / 100, y / 100, int(frame_speaker[x])])
    # renumber by first speech
    order = []
    for _, _, spk in out:
        if spk not in order:
            order.append(spk)
    out = [[round(s, 2), round(e, 2), order.index(spk)] for s, e, spk in out]
    # each speaker's voice: the mean of its windows, for naming known speakers
    voices = []
    for spk in order:
        m = emb[labels == spk].mean(axis=0)
        voices.append(m / max(np.linalg.norm(m), 1e-9))
    return out, {"windows": int(len(spans)), "speakers": len(order), "voices": voices}


def name_speakers(voices, references, threshold=MATCH_THRESHOLD):
    """{speaker index: name} for the speakers whose voice matches a reference: the most alike pair
    first, each speaker and each reference used once, none less alike than `threshold`."""
    pairs = sorted(
        ((float(v @ ref), i, name) for i, v in enumerate(voices) for name, ref in references),
        reverse=True,
    )
    named, used = {}, set()
    for sim, i, name in pairs:
        if sim < threshold:
            break
        if i in named or name in used:
            continue
        named[i] = name
        used.add(name)
    return named


def embed_reference(wav):
    """One voice embedding for a reference clip: the normalised mean of its windows."""
    regions = [(0.0, len(wav) / SAMPLE_RATE)]
    _, _, _, region_means = window_embeddings(wav, regions, smooth=0)
    return region_means[0][1] if region_means else None
