"""The official OpenAI Python SDK against the OpenAI-compatible audio routes (test/speech.e2e.test.ts).

Prints one JSON object: what each call returned, or the SDK exception it raised.
Usage: openai_audio.py BASE_URL KEY FREE_KEY AUDIO_FILE [CONVERSATION_FILE REFERENCE_CLIP]
(with a conversation: diarized_json and its stream, as OpenAI's gpt-4o-transcribe-diarize answers,
and diarized_json with the reference clip as the known speaker "Ann")
"""
import json
import sys

import openai
from openai import OpenAI

base, key, free_key, audio = sys.argv[1:5]
client = OpenAI(base_url=base, api_key=key, max_retries=0, timeout=600)
out = {}


def raised(fn):
    try:
        fn()
        return None
    except openai.APIStatusError as err:
        return {"type": type(err).__name__, "status": err.status_code, "body": err.body}


with open(audio, "rb") as f:
    out["json"] = client.audio.transcriptions.create(file=f, model="tiny.en").text
with open(audio, "rb") as f:
    v = client.audio.transcriptions.create(file=f, model="tiny.en", response_format="verbose_json", timestamp_granularities=["word", "segment"])
    out["verbose"] = {"language": v.language, "duration": v.duration, "text": v.text, "segments": [s.model_dump() for s in v.segments], "words": [w.model_dump() for w in v.words]}
for fmt in ("text", "srt", "vtt"):
    with open(audio, "rb") as f:
        out[fmt] = client.audio.transcriptions.create(file=f, model="tiny.en", response_format=fmt)
with open(audio, "rb") as f:
    events = client.audio.transcriptions.create(file=f, model="tiny.en", stream=True)
    out["stream"] = [e.model_dump() for e in events]
with open(audio, "rb") as f:
    out["translation"] = client.audio.translations.create(file=f, model="tiny.en").text
if len(sys.argv) > 5:
    with open(sys.argv[5], "rb") as f:
        d = client.audio.transcriptions.create(file=f, model="gpt-4o-transcribe-diarize", response_format="diarized_json", chunking_strategy="auto")
        out["diarized"] = d.model_dump()
    with open(sys.argv[5], "rb") as f:
        events = client.audio.transcriptions.create(file=f, model="gpt-4o-transcribe-diarize", response_format="diarized_json", chunking_strategy="auto", stream=True)
        out["diarized_stream"] = [e.model_dump() for e in events]
    import base64

    with open(sys.argv[6], "rb") as clip:
        ann = "data:audio/wav;base64," + base64.b64encode(clip.read()).decode()
    with open(sys.argv[5], "rb") as f:
        d = client.audio.transcriptions.create(
            file=f, model="gpt-4o-transcribe-diarize", response_format="diarized_json", chunking_strategy="auto",
            known_speaker_names=["Ann"], known_speaker_references=[ann],
        )
        out["known"] = d.model_dump()
out["bad_key"] = raised(lambda: OpenAI(base_url=base, api_key="vc_" + "0" * 40, max_retries=0).audio.transcriptions.create(file=open(audio, "rb"), model="tiny.en"))
out["bad_format"] = raised(lambda: client.audio.transcriptions.create(file=open(audio, "rb"), model="tiny.en", response_format="xml"))
free = OpenAI(base_url=base, api_key=free_key, max_retries=0)
# a free plan's minute is 10 requests: empty files (415s, counted too) spend it, then the SDK meets the 429
out["rate_limited"] = None
for _ in range(30):
    out["rate_limited"] = raised(lambda: free.audio.transcriptions.create(file=("empty.wav", b""), model="tiny.en"))
    if out["rate_limited"] and out["rate_limited"]["type"] == "RateLimitError":
        break
print(json.dumps(out))
