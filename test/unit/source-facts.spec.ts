// What the source steps decide without I/O, each on its own: a direct link's info, the rendition
// ffmpeg can seek in, the limits a source must keep, and yt-dlp's failures in the job's terms.
import assert from 'node:assert/strict';
import { YtDlpError, type YtDlpInfo } from '../../engines/ytdlp/ytdlp.engine';
import { JobFailure } from '../../lib/job-failure';
import { sourceLimits } from '../../lib/plans';
import { directFileInfo, seekableFormat, toFailure, withinLimits } from '../../activities/source/source-facts';

const limits = sourceLimits('free', { maxSourceBytes: 8 * 2 ** 30, maxSourceDurationSeconds: 4 * 3600 });
const info = (over: Partial<YtDlpInfo>): YtDlpInfo => ({ id: 'v1', title: 'A talk', ...over }) as YtDlpInfo;

describe('source facts', () => {
  it("a direct link reads as yt-dlp's generic extractor would: title and extension from the name, the MIME type when the name has none", () => {
    const mp4 = directFileInfo('https://cdn.example/media/My%20clip.mp4?sig=1', { contentType: 'video/mp4', length: 10, lastModified: 'Tue, 24 Nov 2026 10:00:00 GMT' });
    assert.deepEqual([mp4.title, mp4.formats?.[0]?.ext, mp4.formats?.[0]?.format_id, mp4.timestamp, mp4.extractor_key], ['My clip', 'mp4', 'mp4', Date.UTC(2026, 10, 24, 10) / 1000, 'Generic']);
    const m4a = directFileInfo('https://cdn.example/stream', { contentType: 'audio/mp4; codecs=mp4a', length: null, lastModified: null });
    assert.deepEqual([m4a.formats?.[0]?.ext, m4a.formats?.[0]?.format_id, m4a.formats?.[0]?.vcodec, m4a.timestamp], ['m4a', 'fmp4', 'none', null]);
    assert.equal(directFileInfo('https://cdn.example/a', { contentType: 'audio/mpeg', length: null, lastModified: null }).formats?.[0]?.ext, 'mp3');
  });

  it('ffmpeg seeks in one progressive http(s) file with a picture; a stream, a merge of two, audio alone or another container are downloaded', () => {
    const file = { format_id: '22', url: 'https://cdn.example/v.mp4', protocol: 'https', ext: 'mp4', vcodec: 'avc1', http_headers: { Referer: 'https://video.example/' } };
    assert.deepEqual(seekableFormat(info({ requested_formats: [file] as YtDlpInfo['requested_formats'] }), 'video'), { url: file.url, headers: file.http_headers });
    assert.equal(seekableFormat(info({ requested_formats: [{ ...file, protocol: 'm3u8_native' }] as YtDlpInfo['requested_formats'] }), 'video'), null);
    assert.equal(seekableFormat(info({ requested_formats: [{ ...file, ext: 'ts' }] as YtDlpInfo['requested_formats'] }), 'video'), null);
    assert.equal(seekableFormat(info({ requested_formats: [{ ...file, vcodec: 'none' }] as YtDlpInfo['requested_formats'] }), 'video'), null);
    const merge = [file, { format_id: '140', url: 'https://cdn.example/a.m4a', protocol: 'https', ext: 'm4a', vcodec: 'none' }] as YtDlpInfo['requested_formats'];
    assert.equal(seekableFormat(info({ requested_formats: merge }), 'video')?.url, file.url, 'a frame needs the picture alone');
    assert.equal(seekableFormat(info({ requested_formats: merge }), 'av'), null, 'a clip needs its sound too');
  });

  it('a source keeps its limits: live streams unless allowed, its duration and its size, each said with the limit and who sets it', () => {
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        assert.ok(err instanceof JobFailure && err.kind === 'rejected', String(err));
        return err.message;
      }
      return assert.fail('accepted');
    };
    assert.match(refused(() => withinLimits({ allowLive: false }, info({ live_status: 'is_live' }), limits)), /live stream/);
    assert.deepEqual(withinLimits({ allowLive: true }, info({ live_status: 'is_live', duration: 60 }), limits), { title: 'A talk', duration: 60 });
    assert.match(refused(() => withinLimits({ allowLive: false }, info({ duration: 2 * 3600 }), limits)), /longer than 1 h, the limit of the free plan/);
    assert.match(refused(() => withinLimits({ allowLive: false }, info({ filesize_approx: 2 ** 30 }), limits)), /larger than 512 MiB, the limit of the free plan/);
    assert.deepEqual(withinLimits({ allowLive: false }, info({ title: undefined, duration: undefined }), limits), { title: 'v1', duration: null });
  });

  it("yt-dlp's own limit checks are said with the limit; its other failures keep their kind; anything else passes through", () => {
    const size = toFailure(new YtDlpError('unavailable', 'File is larger than max-filesize', 'size'), limits) as JobFailure;
    assert.deepEqual([size.kind, size.message], ['rejected', 'The source is larger than 512 MiB, the limit of the free plan']);
    assert.equal((toFailure(new YtDlpError('unsupported', 'Unsupported URL: https://x/')) as JobFailure).kind, 'unsupported');
    const other = new Error('boom');
    assert.equal(toFailure(other), other);
  });
});
