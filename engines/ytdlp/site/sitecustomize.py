# Loaded by the Python that runs yt-dlp for this service (PYTHONPATH, set by ytdlp.engine.ts): yt-dlp
# then fetches http(s) only. Its urllib handler also reads data: and ftp: URLs, which a playlist or
# manifest could name for its segments; the egress proxy never sees those, so they are refused here.
try:
    from yt_dlp.networking import _urllib

    _urllib.UrllibRH._SUPPORTED_URL_SCHEMES = ('http', 'https')
except ImportError:
    pass

# A host-only cookie (a Netscape cookie file's include-subdomains FALSE, or a Set-Cookie without
# Domain) goes to its own host alone. Python's cookie jar, yt-dlp's, otherwise sends such a cookie to
# every subdomain too (its DefaultCookiePolicy leaves the strict Netscape domain check off), so a
# redirect to a subdomain would carry it.
import http.cookiejar as _cookiejar

_policy_init = _cookiejar.DefaultCookiePolicy.__init__


def _strict_host_only(self, *args, **kwargs):
    _policy_init(self, *args, **kwargs)
    self.strict_ns_domain |= _cookiejar.DefaultCookiePolicy.DomainStrictNonDomain


_cookiejar.DefaultCookiePolicy.__init__ = _strict_host_only
