import assert from 'node:assert/strict';
import { classify } from '../../engines/ytdlp/ytdlp.engine';
import { parsePlatformConcurrency, platformOfUrl, siteKey, siteOf } from '../../lib/source-sites';

describe('platforms: refusals, platform names and per-site settings', () => {
  it("a platform's refusal of the service is told apart from a video that is not there", () => {
    const kind = (line: string) => classify(`ERROR: ${line}`, 'https://www.youtube.com/watch?v=x').kind;
    assert.equal(kind('[youtube] x: Unable to download webpage: HTTP Error 429: Too Many Requests (caused by <HTTPError 429>)'), 'refused');
    assert.equal(kind("[youtube] x: Sign in to confirm you're not a bot. Use --cookies-from-browser or --cookies for the authentication."), 'refused');
    assert.equal(kind('[youtube] x: Video unavailable. This video has been removed by the uploader'), 'unavailable');
    assert.equal(kind('[generic] x: Unable to download webpage: HTTP Error 403: Forbidden'), 'unavailable');
    assert.equal(kind('[generic] x: Unable to download webpage: HTTP Error 404: Not Found'), 'unavailable');
    assert.match(classify('ERROR: HTTP Error 429: Too Many Requests', 'u').message, /refusing requests from this service for now \(too many requests\)/);
  });

  it('a platform is its host without www. or m., as its last two labels; an address or an upload is its own', () => {
    assert.equal(platformOfUrl('https://www.youtube.com/watch?v=x'), 'youtube.com');
    assert.equal(platformOfUrl('https://m.youtube.com/watch?v=x'), 'youtube.com');
    assert.equal(platformOfUrl('https://user:pw@vimeo.com/1'), 'vimeo.com');
    assert.equal(platformOfUrl('http://127.0.0.1:8080/v.mp4'), '127.0.0.1');
    assert.equal(platformOfUrl('http://[::1]:80/'), '[::1]');
    assert.equal(platformOfUrl('http://localhost:3000/a'), 'localhost');
    assert.equal(platformOfUrl('upload://upl_123'), null);
  });

  it('a host takes the setting of its longest configured site', () => {
    const sites = new Set([siteKey('youtube.com'), siteKey('music.youtube.com')]);
    assert.equal(siteOf('www.youtube.com', sites), 'youtube_com');
    assert.equal(siteOf('music.youtube.com', sites), 'music_youtube_com');
    assert.equal(siteOf('vimeo.com', sites), null);
    assert.deepEqual(parsePlatformConcurrency('youtube.com=4, default=16'), { default: 16, bySite: { youtube_com: 4 } });
    assert.throws(() => parsePlatformConcurrency('youtube.com'), /not SITE=N/);
  });
});
