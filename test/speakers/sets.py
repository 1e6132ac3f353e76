"""The speaker-label evaluation sets: conversations with known turns, a `dev` set to tune on and a
`test` set to report on, kept apart (no conversation in both, and the test set's recorded voices
are never in the dev set).

Voices:
- flite's awb, rms and slt (Debian's flite: clustergen voices made from the CMU ARCTIC recordings of
  three people: a Scottish man, an American man, an American woman), test set only;
- Festival's kal (festvox-kallpc16k, a diphone voice of an American man) and slt (festvox-us-slt-hts,
  an HMM voice of the woman behind flite's slt), dev set only;
- real people (three men): the LibriVox reader (pocketsphinx-testdata), John F. Kennedy and the AN4 "cards"
  speaker (the shared recordings and pocketsphinx-testdata), test set only: each turn is one of
  their recordings (or a part of one cut at a pause), as recorded;
- espeak-ng formant voices, including pairs of one sex that differ only in accent or pitch, in both
  sets but never the same pair.

Each conversation is 16 kHz mono WAV, written once under the system's temporary folder with a JSON
of its turns (start, end, speaker, source, and its speech: the turn less its pauses of 0.25 s or
more, as a human annotation marks it); `python3 sets.py [dev|test]` builds a set and prints
where. Deterministic: the same sentences, voices and pauses every time.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import wave

import numpy as np

RATE = 16000
VERSION = "v3"
SHARED_SPEECH = os.environ.get("SHARED_SPEECH_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "media", "speech")
POCKETSPHINX = "/usr/share/pocketsphinx/test/data"

SENTENCES = [
    "Good morning, thank you for calling the harbour office.",
    "I would like to ask about the ferry times for next week.",
    "Of course. Which day were you thinking of travelling?",
    "Probably Tuesday, if the weather holds up.",
    "The first boat leaves at seven and the last one at nine in the evening.",
    "That sounds fine. Do I need to book in advance?",
    "Only for cars. Foot passengers can buy tickets on board.",
    "Great, and is there a discount for students?",
    "Yes, about a third off with a valid card.",
    "Perfect. Thanks a lot for your help.",
    "We moved the budget review to Friday afternoon.",
    "Did anyone tell the design team about the change?",
    "Not yet, I was going to send an email after lunch.",
    "The numbers from last quarter were better than we expected.",
    "I still think we are spending too much on travel.",
    "My brother is coming to visit at the end of the month.",
    "Have you seen the new bakery on the corner?",
    "Their bread is wonderful but the queue is always long.",
    "The children want to go camping near the lake this summer.",
    "Please bring the blue folder to the meeting tomorrow.",
    "It rained all weekend, so we stayed in and read.",
    "The library has extended its opening hours.",
    "Right.",
    "Yes, exactly.",
    "No, I don't think so.",
    "Okay, fair enough.",
]
SHORT = {i for i, s in enumerate(SENTENCES) if len(s.split()) <= 4}


def _espeak(voice, pitch, speed):
    return {"kind": "espeak", "voice": voice, "pitch": pitch, "speed": speed}


# every voice by a name; `sex` for the same-sex conversations, `recorded` for voices made from (or
# being) recordings of people
VOICES = {
    # test set: recorded people and voices made from them
    "flite-awb": {"kind": "flite", "voice": "awb", "sex": "m", "recorded": True},
    "flite-rms": {"kind": "flite", "voice": "rms", "sex": "m", "recorded": True},
    "flite-slt": {"kind": "flite", "voice": "slt", "sex": "f", "recorded": True},
    "librivox": {"kind": "recording", "sex": "m", "recorded": True},
    "jfk": {"kind": "recording", "sex": "m", "recorded": True},
    "an4-cards": {"kind": "recording", "sex": "m", "recorded": True},
    # dev set: Festival's recorded voices
    "festival-kal": {"kind": "festival", "voice": "(voice_kal_diphone)", "sex": "m", "recorded": True},
    "festival-slt": {"kind": "festival", "voice": "(voice_cmu_us_slt_arctic_hts)", "sex": "f", "recorded": True},
    # espeak-ng: dev
    "es-us-m1": {**_espeak("en-us+m1", 40, 160), "sex": "m"},
    "es-gb-m1": {**_espeak("en-gb+m1", 40, 160), "sex": "m"},
    "es-us-f2": {**_espeak("en-us+f2", 70, 165), "sex": "f"},
    "es-sc-f4": {**_espeak("en-gb-scotland+f4", 65, 170), "sex": "f"},
    "es-rp-m4": {**_espeak("en-gb-x-rp+m4", 50, 155), "sex": "m"},
    # espeak-ng: test
    "es-us-m7": {**_espeak("en-us+m7", 45, 150), "sex": "m"},
    "es-nyc-m7": {**_espeak("en-us-nyc+m7", 45, 150), "sex": "m"},
    "es-gb-f1": {**_espeak("en-gb+f1", 75, 170), "sex": "f"},
    "es-029-f3": {**_espeak("en-029+f3", 65, 160), "sex": "f"},
}

# The recordings of each real voice, as (file, start s, end s): one turn each.
def _recordings(name):
    libri = [f"{POCKETSPHINX}/librivox/sense_and_sensibility_01_austen_64kb-{n}.wav" for n in ("0870", "0880", "0890", "0920", "0930")]
    jfk = os.path.join(SHARED_SPEECH, "jfk.wav")
    if name == "librivox":
        return [(f, None, None) for f in libri]
    if name == "jfk":
        # the speech's phrases, cut in its pauses
        return [(jfk, 0.0, 2.7), (jfk, 2.7, 7.9), (jfk, 7.9, 11.0)]
    if name == "an4-cards":
        return [(f"{POCKETSPHINX}/cards/{n:03d}.wav", None, None) for n in range(1, 6)]
    raise ValueError(name)


# (name, voices, turns, seed); a conversation's voices speak first in order, then by the seed
SETS = {
    "dev": [
        ("dev-kal-slt", ["festival-kal", "festival-slt"], 8, 1),
        ("dev-male-accent", ["es-us-m1", "es-gb-m1"], 8, 2),
        ("dev-female-pair", ["es-us-f2", "es-sc-f4"], 8, 3),
        ("dev-kal-rp", ["festival-kal", "es-rp-m4"], 8, 4),
        ("dev-three", ["festival-slt", "es-us-m1", "es-sc-f4"], 10, 5),
        ("dev-three-male", ["festival-kal", "es-us-m1", "es-rp-m4"], 10, 6),
        ("dev-four", ["festival-kal", "festival-slt", "es-gb-m1", "es-us-f2"], 12, 7),
        ("dev-slt-f2", ["festival-slt", "es-us-f2"], 8, 8),
    ],
    "test": [
        ("test-awb-rms", ["flite-awb", "flite-rms"], 8, 11),
        ("test-rms-slt", ["flite-rms", "flite-slt"], 8, 12),
        ("test-awb-slt", ["flite-awb", "flite-slt"], 8, 13),
        ("test-flite-three", ["flite-awb", "flite-rms", "flite-slt"], 10, 14),
        ("test-libri-jfk", ["librivox", "jfk"], 6, 15),
        ("test-jfk-cards", ["jfk", "an4-cards"], 6, 16),
        ("test-real-three", ["librivox", "jfk", "an4-cards"], 9, 17),
        ("test-male-accent", ["es-us-m7", "es-nyc-m7"], 8, 18),
        ("test-female-pair", ["es-gb-f1", "es-029-f3"], 8, 19),
        ("test-rms-jfk", ["flite-rms", "jfk"], 6, 20),
        ("test-slt-libri", ["flite-slt", "librivox"], 8, 21),
        ("test-four", ["flite-awb", "flite-slt", "es-us-m7", "librivox"], 12, 22),
        ("test-awb-m7", ["flite-awb", "es-us-m7"], 8, 23),
    ],
}


def _to_pcm(path, start=None, end=None):
    args = ["ffmpeg", "-loglevel", "error"]
    if start is not None:
        args += ["-ss", str(start)]
    args += ["-i", path]
    if end is not None:
        args += ["-t", str(end - (start or 0))]
    args += ["-ar", str(RATE), "-ac", "1", "-f", "s16le", "-"]
    return np.frombuffer(subprocess.run(args, check=True, capture_output=True).stdout, dtype=np.int16)


def _trim(pcm, floor=300):
    """Leading and trailing silence off a synthetic turn (its own pauses kept)."""
    loud = np.where(np.abs(pcm.astype(np.int32)) > floor)[0]
    return pcm[max(0, loud[0] - 160) : loud[-1] + 160] if len(loud) else pcm


def _spoken(pcm, offset, floor_db=-40.0, above_noise_db=12.0, min_pause_s=0.25):
    """A turn's speech as it is annotated: its span less the pauses of at least `min_pause_s` inside it
    (10 ms frames under `floor_db` of the turn's loudest, or, in a recording with a noise floor,
    less than `above_noise_db` over its quietest tenth), in seconds from the conversation's start."""
    frames = len(pcm) // 160
    if frames == 0:
        return [[offset, offset + len(pcm) / RATE]]
    x = pcm[: frames * 160].astype(np.float64).reshape(frames, 160)
    level = 10 * np.log10(np.maximum((x**2).mean(axis=1), 1e-9))
    loud = level > max(level.max() + floor_db, np.percentile(level, 10) + above_noise_db)
    spans, start, quiet = [], None, 0
    for i, on in enumerate(loud):
        if on:
            if start is None:
                start = i
            quiet = 0
            end = i + 1
        elif start is not None:
            quiet += 1
            if quiet * 0.01 >= min_pause_s:
                spans.append([start, end])
                start = None
    if start is not None:
        spans.append([start, end])
    return [[round(offset + a * 0.01, 3), round(offset + b * 0.01, 3)] for a, b in spans]


def _speak(voice, text, work):
    v = VOICES[voice]
    out = os.path.join(work, "turn.wav")
    if v["kind"] == "flite":
        subprocess.run(["flite", "-voice", v["voice"], "-t", text, "-o", out], check=True, capture_output=True)
    elif v["kind"] == "festival":
        subprocess.run(["text2wave", "-eval", v["voice"], "-o", out], input=text.encode(), check=True, capture_output=True)
    elif v["kind"] == "espeak":
        subprocess.run(["espeak-ng", "-v", v["voice"], "-p", str(v["pitch"]), "-s", str(v["speed"]), "-w", out, text], check=True, capture_output=True)
    else:
        raise ValueError(voice)
    return _trim(_to_pcm(out))


def _write_wav(path, pcm):
    tmp = f"{path}.{os.getpid()}.part"
    with wave.open(tmp, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.astype(np.int16).tobytes())
    os.replace(tmp, path)


def build(name, voices, n_turns, seed, folder):
    wav, facts = os.path.join(folder, f"{name}.wav"), os.path.join(folder, f"{name}.json")
    if os.path.exists(wav) and os.path.exists(facts):
        with open(facts) as f:
            return json.load(f)
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory(dir=folder) as work:
        conv = _speak_conversation(name, voices, n_turns, rnd, work, wav)
    with open(f"{facts}.{os.getpid()}.part", "w") as f:
        json.dump(conv, f, indent=1)
    os.replace(f"{facts}.{os.getpid()}.part", facts)
    return conv


def _speak_conversation(name, voices, n_turns, rnd, work, wav):
    recordings = {v: _recordings(v) for v in voices if VOICES[v]["kind"] == "recording"}
    used = {v: 0 for v in voices}
    parts, turns, samples, previous = [], [], 0, -1
    for i in range(n_turns):
        others = [s for s in range(len(voices)) if s != previous]
        speaker = i if i < len(voices) else rnd.choice(others)
        previous = speaker
        voice = voices[speaker]
        if voice in recordings:
            clips = recordings[voice]
            path, start, end = clips[used[voice] % len(clips)]
            pcm = _to_pcm(path, start, end)
            text = None
            source = os.path.basename(path) + (f" {start}-{end} s" if start is not None else "")
        else:
            # most turns one or two sentences; now and then a short reply of its own
            if i >= len(voices) and rnd.random() < 0.25:
                text = SENTENCES[rnd.choice(sorted(SHORT))]
            else:
                long = [k for k in range(len(SENTENCES)) if k not in SHORT]
                picks = rnd.sample(long, rnd.choice([1, 2]))
                text = " ".join(SENTENCES[k] for k in picks)
            pcm = _speak(voice, text, work)
            source = VOICES[voice]["kind"]
        used[voice] += 1
        gap = int(RATE * (0.25 + 0.5 * rnd.random()))
        parts.append(np.zeros(gap, np.int16))
        samples += gap
        turns.append({
            "start": round(samples / RATE, 3), "end": round((samples + len(pcm)) / RATE, 3), "speech": _spoken(pcm, samples / RATE),
            "speaker": speaker, "voice": voice, "text": text, "source": source,
        })
        parts.append(pcm)
        samples += len(pcm)
    parts.append(np.zeros(RATE // 2, np.int16))
    _write_wav(wav, np.concatenate(parts))
    return {
        "name": name,
        "file": wav,
        "voices": voices,
        "speakers": len(voices),
        "same_sex": len({VOICES[v]["sex"] for v in voices}) == 1,
        "recorded": sum(1 for v in voices if VOICES[v].get("recorded")),
        "real_people": sum(1 for v in voices if VOICES[v]["kind"] == "recording"),
        "duration": round(sum(len(p) for p in parts) / RATE, 3),
        "turns": turns,
    }


def build_set(which):
    folder = os.path.join(tempfile.gettempdir(), f"mediasvc-speaker-sets-{VERSION}", which)
    os.makedirs(folder, exist_ok=True)
    return [build(name, voices, n, seed, folder) for name, voices, n, seed in SETS[which]]


def reference_clip(voice, folder=None):
    """A clip of one voice for known speakers, with material no conversation uses."""
    folder = folder or os.path.join(tempfile.gettempdir(), f"mediasvc-speaker-sets-{VERSION}", "references")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{voice}.wav")
    if os.path.exists(path):
        return path
    v = VOICES[voice]
    if v["kind"] == "recording":
        raise ValueError(f"{voice}: a real voice has no recording left over for a reference")
    with tempfile.TemporaryDirectory(dir=folder) as work:
        _write_wav(path, _speak(voice, "I am calling about the invoice you sent last Monday. It lists two items we never ordered.", work))
    return path


if __name__ == "__main__":
    if sys.argv[1:2] == ["--json"]:
        # the set's conversations, and the reference clips of the voices named after the set's name
        which, voices = sys.argv[2], sys.argv[3:]
        print(json.dumps({"conversations": build_set(which), "references": {v: reference_clip(v) for v in voices}}))
        sys.exit(0)
    for which in sys.argv[1:] or ["dev", "test"]:
        for conv in build_set(which):
            print(f"{which} {conv['name']}: {conv['speakers']} speakers, {len(conv['turns'])} turns, {conv['duration']} s, same sex {conv['same_sex']}, recorded voices {conv['recorded']} -> {conv['file']}")
