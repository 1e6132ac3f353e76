"""Runs faster-whisper on audio files for the media-speech worker.

One-shot: one JSON argument (see WhisperRunRequest in whisper.engine.ts). `--serve`: a long-lived
process that reads one JSON request per stdin line, one at a time, keeping loaded models warm.
Output: JSON lines on stdout ({"event": "progress", "done": seconds_of_audio_done, "total": seconds}),
the result as JSON in the file named by "output", and a last {"event": "done"} (or "error") line per
request. Job logic stays in TypeScript.
"""
import collections
import json
import os
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# Loaded models by their settings, most recent last; two at most stay in memory.
MODELS = {}
KEEP_MODELS = 2


def load(req):
    from faster_whisper import WhisperModel  # imported late: argument errors answer fast

    key = (req["model"], req.get("compute_type") or "int8", int(req.get("cpu_threads") or 0), req.get("download_root"))
    model = MODELS.pop(key, None)
    if model is None:
        model = WhisperModel(
            req["model"],
            device="cpu",
            compute_type=key[1],
            cpu_threads=key[2],
            download_root=key[3],
            local_files_only=not req.get("allow_download", False),
        )
        lean_working_memory(model)
        while len(MODELS) >= KEEP_MODELS:
            MODELS.pop(next(iter(MODELS)))
    MODELS[key] = model
    return model


def main(req):
    t0 = time.monotonic()
    model = load(req)
    load_s = time.monotonic() - t0
    if req.get("warm_only"):
        emit({"event": "done"})
        return

    diarize = req.get("diarize")
    references = []
    if diarize is not None and diarize.get("known_speakers"):
        # checked before anything is recognised: a clip that is no use fails the job at once
        references, problems = known_speakers(diarize["known_speakers"])
        if problems:
            write_result(req["output"], {"reference_problems": problems})
            emit({"event": "done"})
            return

    tasks = req.get("tasks") or ["transcribe"]
    language = req.get("language")
    # speaker turns are found over the words' times, so the first pass keeps them
    words = bool(req.get("word_timestamps", True)) or diarize is not None
    result = {"passes": {}, "timings": {"load_s": round(load_s, 3)}}
    skip = set(req.get("translate_skip_languages") or [])
    audio = SpeechAudio(req["audio"])
    total = audio.duration or 1.0
    batch_size = int(req.get("batch_size") or 0)
    if audio.duration < float(req.get("batch_from_s") or 0):
        batch_size = 0  # below it a batch would hold a window or two, and sequential decoding is as fast
    result["batch_size"] = batch_size
    section_s = float(req.get("section_s") or SECTION_S)
    for index, task in enumerate(tasks):
        if task == "translate" and index > 0 and language in skip:
            continue  # the detected language needs no speech translation (e.g. it is English already)
        t1 = time.monotonic()
        keep_words = words and task == "transcribe"
        out = []
        after_vad = 0.0
        sections = 0
        for offset, samples in audio.sections(section_s):
            sections += 1
            release_free_memory()
            options = dict(task=task, language=language, beam_size=int(req.get("beam_size") or 5), vad_filter=True)
            if batch_size > 1:
                from faster_whisper import BatchedInferencePipeline

                # the speech between pauses (VAD) in windows of up to 30 s, decoded batch_size at a time.
                # Without timestamp tokens: with them, on 10 min of speech (base), it lost words at the
                # windows' edges (WER 7.1 % against 4.2 % sequential; without them 3.1 %, 1.6x as fast).
                # A window is then one segment, so its words cut it into sentences (sentence_segments).
                segments, info = BatchedInferencePipeline(model).transcribe(samples, batch_size=batch_size, without_timestamps=True, word_timestamps=True, **options)
                segments = sentence_segments(segments, model)
            else:
                segments, info = model.transcribe(samples, word_timestamps=keep_words, **options)
            after_vad += float(info.duration_after_vad)
            if index == 0 and sections == 1:
                # the first section's language holds for the rest, and for the passes after this one
                language = info.language
                result["language"] = info.language
                result["language_probability"] = round(float(info.language_probability), 4)
                probs = info.all_language_probs or [(info.language, info.language_probability)]
                result["language_candidates"] = [
                    {"language": code, "probability": round(float(p), 4)} for code, p in probs[:3]
                ]
            first_id = len(out)
            for seg in segments:  # a generator: decoding happens while we iterate
                item = {"start": round(offset + seg.start, 3), "end": round(offset + seg.end, 3), "text": seg.text.strip()}
                # the decoder's own figures for the segment (OpenAI's verbose_json carries them)
                item["decoding"] = {
                    "id": first_id + seg.id, "seek": seg.seek + round(offset * FRAMES_PER_SECOND), "tokens": list(seg.tokens), "temperature": seg.temperature,
                    "avg_logprob": seg.avg_logprob, "compression_ratio": seg.compression_ratio, "no_speech_prob": seg.no_speech_prob,
                }
                if seg.words is not None and keep_words:
                    item["words"] = [
                        {"word": w.word.strip(), "start": round(offset + w.start, 3), "end": round(offset + w.end, 3), "probability": round(w.probability, 4)}
                        for w in seg.words
                    ]
                out.append(item)
                emit({"event": "progress", "pass": index, "passes": len(tasks), "done": min(item["end"], total), "total": total, "text": item["text"]})
        if index == 0:
            result["duration"] = round(audio.duration, 3)
            result["duration_after_vad"] = round(after_vad, 3)
            result["sections"] = sections
        emit({"event": "progress", "pass": index, "passes": len(tasks), "done": total, "total": total})
        result["passes"][task] = {"segments": out}
        result["timings"][task + "_s"] = round(time.monotonic() - t1, 3)

    if diarize is not None and "transcribe" in result["passes"]:
        t2 = time.monotonic()
        turns, names = speaker_turns(audio, result["passes"]["transcribe"]["segments"], diarize.get("num_speakers"), references)
        result["speaker_turns"] = turns
        if references:
            result["speaker_names"] = {str(i): name for i, name in names.items()}
        result["timings"]["diarize_s"] = round(time.monotonic() - t2, 3)

    write_result(req["output"], result)
    emit({"event": "done"})


# The VAD's frames (32 ms each) given to its network in one call: faster-whisper gives up to 10,000
# (5 minutes), whose intermediates took 137 MB; the network's state passes from call to call.
VAD_FRAMES_PER_CALL = 1000


def lean_working_memory(model):
    """Keeps the working memory to what one 30 s window needs, at the same speed: a batch's windows are
    encoded and aligned to their words one at a time (the encoder's attention over a window takes about
    150 MB, and a batch held them all at once), while their text is still decoded a batch at a time,
    where batching gains its speed. The VAD reads a VAD_FRAMES_PER_CALL stretch at a time."""
    import ctranslate2
    import numpy as np
    from faster_whisper.vad import get_vad_model

    whole_encode = model.encode

    def encode(features):
        if features.ndim == 3 and features.shape[0] > 1:
            parts = [np.array(whole_encode(features[i : i + 1])) for i in range(features.shape[0])]
            return ctranslate2.StorageView.from_array(np.concatenate(parts))
        return whole_encode(features)

    model.encode = encode
    model.model = OneWindowAlignment(model.model)
    vad = get_vad_model()
    if not isinstance(vad.session, FramesPerCall):
        vad.session = FramesPerCall(vad.session, VAD_FRAMES_PER_CALL)


def release_free_memory():
    """Hands the heap's free pages back to the system (glibc's malloc_trim), so what a section freed
    does not stay resident under the next one's working memory."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim


class OneWindowAlignment:
    """CTranslate2's Whisper model, but `align` works on one window of a batch at a time."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name):
        return getattr(self._model, name)

    def align(self, encoder_output, start_sequence, text_tokens, num_frames, **kwargs):
        import ctranslate2
        import numpy as np

        if len(text_tokens) <= 1 or encoder_output.shape[0] != len(text_tokens):
            return self._model.align(encoder_output, start_sequence, text_tokens, num_frames, **kwargs)
        windows = np.array(encoder_output)
        frames = num_frames if isinstance(num_frames, (list, tuple)) else [num_frames] * len(text_tokens)
        out = []
        for i, tokens in enumerate(text_tokens):
            one = ctranslate2.StorageView.from_array(np.ascontiguousarray(windows[i : i + 1]))
            out.extend(self._model.align(one, start_sequence, [tokens], [frames[i]], **kwargs))
        return out


class FramesPerCall:
    """The VAD's ONNX session, given at most `frames` frames a call, its LSTM state passed on. Its last
    few answers are kept by a hash of what they answered: speaker labels run the VAD again over the
    audio whose transcription just ran it (when the audio is one section), and take the same answer
    for the hash's cost (5 ms for 2 minutes of audio, the network 160 ms)."""

    KEEP = 4

    def __init__(self, session, frames):
        self.session = session
        self.frames = frames
        self.answers = collections.OrderedDict()

    def run(self, names, feeds):
        import hashlib

        import numpy as np

        digest = hashlib.sha256(repr(names).encode())
        for name in ("input", "h", "c"):
            value = np.ascontiguousarray(feeds[name])
            digest.update(f"{name} {value.dtype} {value.shape}".encode())
            digest.update(value.data)
        key = digest.digest()
        if key in self.answers:
            self.answers.move_to_end(key)
            return self.answers[key]
        answer = self._run(names, feeds)
        self.answers[key] = answer
        while len(self.answers) > self.KEEP:
            self.answers.popitem(last=False)
        return answer

    def _run(self, names, feeds):
        import numpy as np

        frames, h, c = feeds["input"], feeds["h"], feeds["c"]
        if len(frames) <= self.frames:
            return self.session.run(names, feeds)
        outputs = []
        for i in range(0, len(frames), self.frames):
            output, h, c = self.session.run(names, {"input": frames[i : i + self.frames], "h": h, "c": c})
            outputs.append(output)
        return np.concatenate(outputs, axis=0), h, c


SAMPLE_RATE = 16000
# faster-whisper's `seek` counts feature frames: 100 a second
FRAMES_PER_SECOND = 100
# Long audio is decoded a section at a time, so memory does not grow with its length: an hour held
# whole (float32, the VAD's chunks, their features) took 918 MB above the idle runner, in sections 321 MB.
SECTION_S = 300.0
# A section ends at the quietest tenth of a second in its last part (at most this long)...
CUT_SEARCH_S = 30.0
# ...and takes the rest of the audio when less than this fraction of a section would be left.
LAST_FRACTION = 0.25


class SpeechAudio:
    """The job's 16 kHz mono audio, read a section at a time: decoded here as it is read from a media
    file ({"file": ..., "options": ..., "seconds": probe's length}), or from a PCM WAV. Any other
    file given by name alone is decoded whole by faster-whisper's decoder."""

    def __init__(self, audio):
        import wave

        self.source = None
        self.path = None
        self.whole = None
        self.read_frames = None  # frames a full read counted: the exact length, once known
        if isinstance(audio, dict):
            self.source = audio
            self.frames = int(round(float(audio["seconds"]) * SAMPLE_RATE))
            return
        self.path = audio
        try:
            with wave.open(audio, "rb") as w:
                if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, SAMPLE_RATE):
                    raise wave.Error("not 16 kHz mono 16-bit PCM")
                self.frames = w.getnframes()
        except (wave.Error, EOFError):
            from faster_whisper.audio import decode_audio

            self.whole = decode_audio(audio)
            self.frames = len(self.whole)

    @property
    def duration(self):
        """Seconds of audio: the decoded samples once read to the end, the probe's figure before."""
        return (self.read_frames if self.read_frames is not None else self.frames) / SAMPLE_RATE

    def sections(self, section_s):
        """(offset in seconds, float32 samples) for each section, each cut at a quiet moment; one
        (empty) section for no audio at all. A section is read with a quarter more behind it, so the
        last one takes the rest when little would be left, without knowing the length beforehand.
        Every section is a view of one buffer, which the next section's read overwrites: a section
        is done with before the next is asked for."""
        import numpy as np

        size = max(int(section_s * SAMPLE_RATE), SAMPLE_RATE)
        ahead = int(size * (1 + LAST_FRACTION)) + 1
        buf = np.empty(ahead, dtype=np.float32)
        start, held = 0, 0
        with self._reader() as read_into:
            while True:
                held += read_into(buf[held:])
                if held < ahead:  # the samples end within this section's reach: it takes them all
                    self.read_frames = start + held
                    yield start / SAMPLE_RATE, buf[:held]
                    return
                cut = quiet_cut(buf[:size])
                yield start / SAMPLE_RATE, buf[:cut]
                buf[: held - cut] = buf[cut:held]  # what is left moves to the front
                start, held = start + cut, held - cut

    def samples(self):
        """All of it as float32 (speaker turns need the whole)."""
        import numpy as np

        if self.whole is not None:
            return self.whole
        parts = []
        with self._reader() as read_into:
            while True:
                part = np.empty(SAMPLE_RATE * 60, dtype=np.float32)
                part = part[: read_into(part)]
                if len(part):
                    parts.append(part)
                if len(part) < SAMPLE_RATE * 60:
                    break
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.float32)

    def _reader(self):
        """A context giving read_into(out): fills the float32 array with the next samples and says how
        many it wrote, fewer than its length only at the end."""
        import contextlib
        import wave

        import numpy as np

        if self.source is not None:
            return decoded_samples(self.source)
        if self.whole is not None:
            cursor = [0]

            def read_whole(out):
                part = self.whole[cursor[0] : cursor[0] + len(out)]
                out[: len(part)] = part
                cursor[0] += len(part)
                return len(part)

            return contextlib.nullcontext(read_whole)

        @contextlib.contextmanager
        def wav():
            with wave.open(self.path, "rb") as w:

                def read_wav(out):
                    data = w.readframes(len(out))
                    n = len(data) // 2  # a sample cut off at the end is dropped
                    out[:n] = np.frombuffer(data[: n * 2], dtype="<i2")
                    out[:n] /= 32768.0
                    return n

                yield read_wav

        return wav()


class DecodeError(Exception):
    """The source's audio could not be opened or decoded: libav's words for why."""


def decoded_samples(source):
    """Decodes a local file's first audio track here, with the libav that faster-whisper's own decoder
    uses (PyAV), opened under the service's input guard ({"file": ..., "options": libav input options}),
    and gives read_into(out) over its 16 kHz mono samples, decoding only as far as a read reaches. In
    this process rather than an ffmpeg beside it: a second process held 54 MB more while the runner worked."""
    import contextlib
    import gc

    import av

    @contextlib.contextmanager
    def run():
        try:
            container = av.open(source["file"], options=dict(source.get("options") or {}), metadata_errors="ignore")
        except av.FFmpegError as err:
            raise DecodeError(f"could not decode the audio: {err}") from None
        try:
            if not container.streams.audio:
                raise DecodeError("could not decode the audio: the file has no audio track")
            blocks = pcm_blocks(container, container.streams.audio[0])
            rest = None  # what a block held beyond the last read

            def read_into(out):
                nonlocal rest
                filled = 0
                try:
                    while filled < len(out):
                        block = rest if rest is not None and len(rest) else next(blocks, None)
                        if block is None:
                            break
                        take = min(len(block), len(out) - filled)
                        out[filled : filled + take] = block[:take]
                        rest = block[take:]
                        filled += take
                except av.FFmpegError as err:
                    raise DecodeError(f"could not decode the audio: {err}") from None
                out[:filled] /= 32768.0
                return filled

            yield read_into
        finally:
            container.close()
            gc.collect()  # PyAV's resampler is freed only by the collector (faster-whisper does the same)

    return run()


def opus_packet_samples(data):
    """The 48 kHz samples an Opus packet decodes to, from its TOC byte (RFC 6716, 3.1)."""
    if not data:
        return 0
    config, code = data[0] >> 3, data[0] & 3
    if config < 12:
        frame = (480, 960, 1920, 2880)[config % 4]
    elif config < 16:
        frame = (480, 960)[config % 2]
    else:
        frame = (120, 240, 480, 960)[config % 4]
    frames = 1 if code == 0 else 2 if code in (1, 2) else (data[1] & 0x3F if len(data) > 1 else 0)
    return frame * frames


def opus_priming_left(stream):
    """For an Opus track, a function of its first packet and frame giving how many of the encoder's
    priming samples the decoder left in: the header's pre-skip (RFC 7845, 4.2) is what to drop, but
    the libav under PyAV drops a container's own figure instead where they differ (104 of 312 for a
    WebM that ffmpeg 5.1 wrote: 4.3 ms late, and other samples than ffmpeg's). None otherwise."""
    import struct

    ctx = stream.codec_context
    head = bytes(ctx.extradata or b"")
    if ctx.name != "opus" or len(head) < 12 or head[:8] != b"OpusHead":
        return None
    pre_skip = struct.unpack("<H", head[10:12])[0]

    def left(packet, frame):
        dropped = opus_packet_samples(bytes(packet)) * frame.sample_rate // 48000 - frame.samples
        return max(0, pre_skip * frame.sample_rate // 48000 - max(0, dropped))

    return left


def without_first_samples(frame, count):
    """The frame without its first `count` samples (a new frame in the same format and rate)."""
    import av

    data = frame.to_ndarray()
    rest = data[:, count:] if frame.format.is_planar else data[:, count * len(frame.layout.channels) :]
    out = av.AudioFrame.from_ndarray(rest.copy(), format=frame.format.name, layout=frame.layout.name)
    out.sample_rate = frame.sample_rate
    return out


def pcm_blocks(container, stream):
    """The stream as 16 kHz mono int16 arrays, resampled about a second at a time (frame by frame is
    slow in PyAV) as ffmpeg's `-ac 1 -ar 16000` does. A packet the decoder refuses is skipped, as ffmpeg
    skips it; a file that cannot be read further raises."""
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    fifo = av.AudioFifo()
    priming = opus_priming_left(stream)

    def resampled(frame):
        for out in resampler.resample(frame):
            yield out.to_ndarray().reshape(-1)

    for packet in container.demux(stream):
        try:
            frames = packet.decode()
        except av.InvalidDataError:
            continue
        for frame in frames:
            if priming is not None:
                left, priming = priming(packet, frame), None
                if left >= frame.samples:
                    continue
                if left > 0:
                    frame = without_first_samples(frame, left)
            frame.pts = None  # the samples in order, as they come
            fifo.write(frame)
            if fifo.samples >= frame.sample_rate:
                yield from resampled(fifo.read())
    if fifo.samples:
        yield from resampled(fifo.read())
    yield from resampled(None)


def quiet_cut(samples):
    """Where to end a section: the middle of its quietest 100 ms in the last CUT_SEARCH_S (or quarter)."""
    import numpy as np

    frame, hop = SAMPLE_RATE // 10, SAMPLE_RATE // 20
    search = int(min(CUT_SEARCH_S * SAMPLE_RATE, len(samples) // 4))
    tail = samples[len(samples) - search :].astype(np.float64)
    if len(tail) < frame:
        return len(samples)
    energy = np.concatenate([[0.0], np.cumsum(tail * tail)])
    starts = np.arange(0, len(tail) - frame + 1, hop)
    quietest = int(starts[np.argmin(energy[starts + frame] - energy[starts])])
    return len(samples) - search + quietest + frame // 2


# A sentence ends at a word ending in one of these (closing quotes and brackets aside), unless
# the word is an abbreviation that a name or a number follows.
SENTENCE_END = (".", "?", "!", "。", "？", "！")
ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "jr.", "sr.", "vs.", "mt.", "no.", "e.g.", "i.e.", "etc.", "approx.", "p.m.", "a.m."}
# A pause this long between two words ends a segment too, and no segment runs longer than this.
PAUSE_S = 1.0
LONGEST_S = 12.0


def sentence_segments(windows, model):
    """Each decoded window (up to 30 s) cut at its words into segments like those of sequential
    decoding: at a sentence's end, a pause, or LONGEST_S (at the last comma before it, if any). A
    piece keeps its window's decoder figures; its tokens are its own text's."""
    from dataclasses import replace

    from faster_whisper.transcribe import Segment

    next_id = 1
    for window in windows:
        words = list(window.words or [])
        if not words:
            yield replace(window, id=next_id)
            next_id += 1
            continue
        pieces, piece = [], []
        for w in words:
            if piece and (w.start - piece[-1].end >= PAUSE_S or w.end - piece[0].start > LONGEST_S):
                cut = next((k for k in range(len(piece) - 1, 0, -1) if piece[k].word.rstrip().endswith(",")), None) if w.start - piece[-1].end < PAUSE_S else None
                if cut is not None:
                    pieces.append(piece[: cut + 1])
                    piece = piece[cut + 1 :]
                else:
                    pieces.append(piece)
                    piece = []
            piece.append(w)
            bare = w.word.strip().rstrip("\"')]}»”")
            if bare.endswith(SENTENCE_END) and bare.lower() not in ABBREVIATIONS:
                pieces.append(piece)
                piece = []
        if piece:
            pieces.append(piece)
        for piece in pieces:
            text = "".join(w.word for w in piece)
            tokens = model.hf_tokenizer.encode(text, add_special_tokens=False).ids
            yield Segment(
                id=next_id, seek=window.seek, start=piece[0].start, end=piece[-1].end, text=text, tokens=tokens,
                avg_logprob=window.avg_logprob, compression_ratio=window.compression_ratio, no_speech_prob=window.no_speech_prob,
                words=piece, temperature=window.temperature,
            )
            next_id += 1


def write_result(output, result):
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)
    os.replace(tmp, output)


def known_speakers(items):
    """Each reference clip's voice embedding, or why it cannot name a voice (no speech in it)."""
    from faster_whisper.audio import decode_audio
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    import diarize as diarizer

    references, problems = [], []
    for index, item in enumerate(items):
        wav = decode_audio(item["audio"], sampling_rate=diarizer.SAMPLE_RATE)
        speech = get_speech_timestamps(wav, VadOptions())
        seconds = sum(s["end"] - s["start"] for s in speech) / diarizer.SAMPLE_RATE
        if seconds < MIN_REFERENCE_SPEECH_S:
            problems.append({"index": index, "problem": f"has {seconds:.1f} s of speech; it needs at least {MIN_REFERENCE_SPEECH_S:.0f} s of the voice speaking"})
            continue
        regions = [(s["start"] / diarizer.SAMPLE_RATE, s["end"] / diarizer.SAMPLE_RATE) for s in speech]
        _, _, _, means = diarizer.window_embeddings(wav, regions, smooth=0)
        weights = [secs for secs, _ in means]
        voice = sum(w * e for w, e in zip(weights, (e for _, e in means)))
        references.append((item["name"], voice / max(float((voice @ voice) ** 0.5), 1e-9)))
    return references, problems


MIN_REFERENCE_SPEECH_S = 1.0


def speaker_turns(audio, segments, num_speakers, references):
    """Who spoke when (diarize.py), over the speech the voice detector finds (pauses of 0.2 s or more
    between stretches), else over the speech the words cover (words less than 0.3 s apart are one
    stretch), and which speakers are the known ones. The detector's bounds are the speech's own; the
    words' are the recogniser's, often short of a stretch's ends."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    import diarize as diarizer

    samples = audio.samples()
    speech = get_speech_timestamps(samples, VadOptions(min_silence_duration_ms=200, speech_pad_ms=30))
    regions = [[s["start"] / diarizer.SAMPLE_RATE, s["end"] / diarizer.SAMPLE_RATE] for s in speech]
    if not regions:
        spans = [(w["start"], w["end"]) for s in segments for w in s.get("words", [])] or [(s["start"], s["end"]) for s in segments]
        for start, end in sorted(spans):
            if regions and start - regions[-1][1] < 0.3:
                regions[-1][1] = max(regions[-1][1], end)
            else:
                regions.append([start, end])
    turns, info = diarizer.turns(samples, regions, num_speakers)
    names = diarizer.name_speakers(info.get("voices", []), references) if references else {}
    return turns, names


def serve():
    """One request per line; a failed request answers with an error line and the process carries on."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            main(json.loads(line))
        except Exception as exc:
            emit({"event": "error", "message": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
        sys.exit(0)
    try:
        main(json.loads(sys.argv[1]))
    except Exception as exc:  # one readable line for the activity's error message
        emit({"event": "error", "message": f"{type(exc).__name__}: {exc}"})
        sys.exit(1)
