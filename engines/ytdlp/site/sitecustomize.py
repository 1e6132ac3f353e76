# Loaded by the Python that runs yt-dlp for this service (PYTHONPATH, set by ytdlp.engine.ts): yt-dlp
# then fetches http(s) only. Its urllib handler also reads data: and ftp: URLs, which a playlist or
# manifest could name for its segments; the egress proxy never sees those, so they are refused here.
try:
    from yt_dlp.networking import _urllib

    _urllib.UrllibRH._SUPPORTED_URL_SCHEMES = ('http', 'https')
except ImportError:
    pass
