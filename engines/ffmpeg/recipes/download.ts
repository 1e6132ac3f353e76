// ffmpeg recipes of a download: the final step of a plain download, and the passes of a clipped or
// audio-processed one (measure, then one encode). Pure: a plan in, argument lists out.
import { isAudioOutput, LOUDNESS_TARGET } from '../../../lib/download-plan';
import type { DownloadFormat, Quality } from '../../../lib/media-vocabulary';
import type { LoudnormMeasurement } from '../ffmpeg-analysis';
import { DISPLAY_EVEN } from '../display';
import { AUDIO_CODEC, COPY_AUDIO, COPY_VIDEO, displayEncode, h264, MP4_AUDIO, MP4_VIDEO, vp9, WEBM_AUDIO, WEBM_VIDEO } from './codecs';

export interface Codecs {
  vcodec: string | null;
  acodec: string | null;
  /** The audio's sample rate, when known. */
  audioRate?: number | null;
}

/**
 * An mp3 encode of audio below 16 kHz is resampled to 16 kHz: LAME would write MPEG-2.5 (8–12 kHz),
 * which not every player or browser plays, and its frames of 72 ms pad the end by 0.16 s.
 */
function mp3Encode(codecs: Codecs): string[] {
  return [...AUDIO_CODEC.mp3!.options, ...(codecs.audioRate && codecs.audioRate < 16_000 ? ['-ar', '16000'] : [])];
}

export interface FinalStep {
  ext: string;
  /** ffmpeg output options; null when the downloaded file is already final. */
  outputOptions: string[] | null;
}

/**
 * Whether a fetched MP4 already is what format mp4 makes of it: its index in front, and only video
 * and audio tracks in codecs MP4 carries. The remux would copy every sample as it is and move nothing.
 */
export function mp4IsFinal(streams: { codec_type?: string; codec_name?: string }[], indexInFront: boolean): boolean {
  return indexInFront && streams.length > 0 && streams.every((s) => (s.codec_type === 'video' && MP4_VIDEO.includes(s.codec_name ?? '')) || (s.codec_type === 'audio' && MP4_AUDIO.includes(s.codec_name ?? '')));
}

/**
 * How to turn the downloaded file (with the given codecs) into the requested output: copy what the
 * container takes, encode the rest. `finalMp4`: the file is an MP4 that mp4IsFinal accepts.
 */
export function finalStep(quality: Quality, format: DownloadFormat | null, codecs: Codecs, sourceExt: string, finalMp4 = false): FinalStep {
  const { vcodec, acodec } = codecs;
  if (format === 'mp3') return { ext: 'mp3', outputOptions: ['-vn', ...(vcodec === null && acodec === 'mp3' ? COPY_AUDIO : mp3Encode(codecs))] };
  if (format === 'wav') return { ext: 'wav', outputOptions: ['-vn', '-c:a', 'pcm_s16le'] };
  if (quality === 'audio') {
    const known = acodec ? AUDIO_CODEC[acodec] : undefined;
    return known ? { ext: known.ext, outputOptions: ['-vn', ...COPY_AUDIO] } : { ext: 'm4a', outputOptions: ['-vn', ...AUDIO_CODEC.aac!.options] };
  }
  // every stream but data ones (a QuickTime chapter track, timecodes, telemetry), which other containers refuse; mp4 writes its chapter track anew
  const all = ['-map', '0', '-map', '-0:d'];
  if (format === 'mp4') {
    // the fetched file is the output (a second name for it): nothing to write again
    if (finalMp4 && sourceExt === 'mp4') return { ext: 'mp4', outputOptions: null };
    const v = vcodec === null || MP4_VIDEO.includes(vcodec) ? COPY_VIDEO : displayEncode(h264(22));
    const a = acodec === null || MP4_AUDIO.includes(acodec) ? COPY_AUDIO : ['-c:a', 'aac', '-b:a', '160k'];
    return { ext: 'mp4', outputOptions: [...all, ...v, ...a, '-movflags', '+faststart'] };
  }
  if (format === 'webm') {
    const v = vcodec === null || WEBM_VIDEO.includes(vcodec) ? COPY_VIDEO : displayEncode(vp9(33));
    const a = acodec === null || WEBM_AUDIO.includes(acodec) ? COPY_AUDIO : AUDIO_CODEC.opus!.options;
    return { ext: 'webm', outputOptions: [...all, ...v, ...a] };
  }
  if (format === 'mkv') return { ext: 'mkv', outputOptions: [...all, '-c', 'copy'] };
  return { ext: sourceExt, outputOptions: null };
}

export interface EditStep {
  ext: string;
  /** Output options (stream maps and codecs); the audio filters go beside them. */
  outputOptions: string[];
}

/**
 * How to write a clipped and/or audio-processed download. Audio is always re-encoded (filters and
 * sample-accurate cuts need it). Video is re-encoded when it is cut, so the cut is frame-accurate
 * and never snaps to a keyframe, and copied otherwise when the container allows the codec.
 */
export function editStep(quality: Quality, format: DownloadFormat | null, codecs: Codecs, sourceExt: string, cut: boolean): EditStep {
  const { vcodec, acodec } = codecs;
  if (format === 'mp3') return { ext: 'mp3', outputOptions: ['-vn', '-sn', '-map', '0:a:0', ...mp3Encode(codecs)] };
  if (format === 'wav') return { ext: 'wav', outputOptions: ['-vn', '-sn', '-map', '0:a:0', '-c:a', 'pcm_s16le'] };
  if (isAudioOutput(quality, format) || vcodec === null) {
    const a = format === 'webm' ? AUDIO_CODEC.opus! : format ? AUDIO_CODEC.aac! : (acodec && AUDIO_CODEC[acodec]) || AUDIO_CODEC.aac!;
    return { ext: format ?? a.ext, outputOptions: ['-vn', '-sn', '-map', '0:a:0?', ...a.options] };
  }
  const ext = format ?? (['mp4', 'webm', 'mkv'].includes(sourceExt) ? sourceExt : 'mkv');
  const maps = ['-map', '0:v:0', '-map', '0:a:0?', '-sn'];
  if (ext === 'webm') return { ext, outputOptions: [...maps, ...(!cut && WEBM_VIDEO.includes(vcodec) ? COPY_VIDEO : displayEncode(vp9(30))), ...AUDIO_CODEC.opus!.options] };
  const v = !cut && (ext === 'mkv' || MP4_VIDEO.includes(vcodec)) ? COPY_VIDEO : displayEncode(h264(20));
  return { ext, outputOptions: [...maps, ...v, ...AUDIO_CODEC.aac!.options, ...(ext === 'mp4' ? ['-movflags', '+faststart'] : [])] };
}

/**
 * The part of the source an edit reads: `-ss` before the input (a seek), `-t` after it (an output
 * option, counted from the seek on the output's clock), each left out where it is the source's own
 * bound. As an input option, `-t` let 1.52 s through for 1 s of an MPEG-TS whose streams start at
 * different times.
 */
export interface TimeWindow {
  seek: string[];
  length: string[];
}

export function timeWindow(start: number, end: number, sourceDuration: number): TimeWindow {
  return { seek: start > 0 ? ['-ss', start.toFixed(3)] : [], length: end < sourceDuration ? ['-t', (end - start).toFixed(3)] : [] };
}

/** A pass over the first audio stream of `src` through `filters`, decoding only (nothing written). */
export function audioPass(window: TimeWindow, src: string, filters: string[]): string[] {
  return [...window.seek, '-i', src, ...window.length, '-vn', '-sn', '-map', '0:a:0', '-af', filters.join(','), '-f', 'null', '-'];
}

/** Denoise's measuring pass: the quietest 50 ms window (RMS trough) is the background noise. */
export const NOISE_PROBE = 'astats=measure_perchannel=none:measure_overall=RMS_trough';

/** afftdn with the noise floor read from NOISE_PROBE's log: 2 dB above the trough, within −80…−20 dB. */
export function denoiseFilter(noiseProbeLog: string): string {
  const trough = Number(/RMS trough dB: (-?[\d.]+|-inf)/.exec(noiseProbeLog)?.[1]);
  const floor = Number.isFinite(trough) ? Math.max(-80, Math.min(-20, Math.round(trough + 2))) : -80;
  return `afftdn=nr=30:nf=${floor}`;
}

export const SILENCE_PROBE = 'silencedetect=noise=-50dB:duration=0.1';
/** loudnorm's first pass: measures, prints JSON. */
export const LOUDNESS_PROBE = `loudnorm=I=${LOUDNESS_TARGET.integrated}:TP=${LOUDNESS_TARGET.truePeak}:LRA=11:print_format=json`;

/** loudnorm's second pass from the first's figures: linear (one gain) when the measured range and peak allow it; loudnorm falls back to dynamic otherwise. */
export function normalizeFilter(m: LoudnormMeasurement): string {
  const lra = Math.min(50, Math.max(11, Math.ceil(m.input_lra + 1)));
  return (
    `loudnorm=I=${LOUDNESS_TARGET.integrated}:TP=${LOUDNESS_TARGET.truePeak}:LRA=${lra}:measured_I=${m.input_i}:measured_TP=${m.input_tp}` +
    `:measured_LRA=${m.input_lra}:measured_thresh=${m.input_thresh}:offset=${m.target_offset}:linear=true:print_format=json`
  );
}

/**
 * What ends a filtered audio chain: loudnorm works at 192 kHz, so deliver the source's rate, and its
 * channel layout (encoders such as aac refuse the unset layout the filters otherwise hand on).
 */
export function deliveryFilters(audio: { sample_rate?: string | number; channel_layout?: string; channels?: number } | undefined): string[] {
  const rate = Number(audio?.sample_rate) || 48000;
  const layout = audio?.channel_layout || (audio?.channels === 1 ? 'mono' : 'stereo');
  return [`aresample=${rate}`, `aformat=sample_rates=${rate}:channel_layouts=${layout}`];
}

/** The edit's one encode. `-ss` before `-i` with re-encoding decodes from the previous keyframe and drops frames up to the exact time: a frame-accurate cut. */
export function editEncode(window: TimeWindow, src: string, step: EditStep, filters: string[], out: string, chaptersFile?: string): string[] {
  // a clip's chapters come cut to it from a metadata file (ffmpeg shifts the source's but leaves the last one running past the end)
  const chapters = chaptersFile ? ['-i', chaptersFile] : [];
  return [...window.seek, '-i', src, ...chapters, '-y', ...window.length, ...step.outputOptions, ...(chaptersFile ? ['-map_chapters', '1'] : []), ...(filters.length ? ['-af', filters.join(',')] : []), out];
}

/** The delivered file's loudness, measured as a listener's meter would (EBU R128, true peak). */
export function loudnessCheck(file: string): string[] {
  return ['-i', file, '-vn', '-af', 'ebur128=peak=true', '-f', 'null', '-'];
}

/** Which way loudnorm's second pass went (linear or dynamic), from its JSON in the encode's log. */
export function normalizationType(encodeLog: string): string | null {
  return /"normalization_type"\s*:\s*"(\w+)"/.exec(encodeLog.slice(encodeLog.lastIndexOf('[Parsed_loudnorm')))?.[1] ?? null;
}

/** A subtitle track to put into a download: a SubRip file, its ISO 639-2 language and its title. */
export interface SubtitleInput {
  file: string;
  language: string;
  title: string;
  /** Seconds to move its cues by, to follow the picture (`-itsoffset`). */
  offset?: number;
}

/** The soft subtitle codec each video container carries. */
const SUBTITLE_CODECS: Record<string, string> = { mp4: 'mov_text', m4v: 'mov_text', mov: 'mov_text', mkv: 'srt', webm: 'webvtt' };

/** Whether a container takes soft subtitle tracks. */
export function carriesSubtitles(ext: string): boolean {
  return ext in SUBTITLE_CODECS;
}

/** Soft tracks added to a finished file: every stream copied, the file's own subtitles replaced by these, each tagged with its language and title. */
export function embedSubtitles(src: string, ext: string, tracks: SubtitleInput[], out: string): string[] {
  const codec = SUBTITLE_CODECS[ext];
  if (!codec) throw new Error(`${ext} carries no soft subtitles`);
  return [
    '-i', src,
    ...tracks.flatMap((t) => [...(t.offset ? ['-itsoffset', t.offset.toFixed(3)] : []), '-i', t.file]),
    '-map', '0', '-map', '-0:s?', '-map', '-0:d?',
    ...tracks.flatMap((_, i) => ['-map', `${i + 1}:0`]),
    '-c', 'copy', '-c:s', codec,
    ...tracks.flatMap((t, i) => [`-metadata:s:s:${i}`, `language=${t.language}`, `-metadata:s:s:${i}`, `title=${t.title}`]),
    ...(codec === 'mov_text' ? ['-movflags', '+faststart'] : []),
    '-y', out,
  ];
}

/**
 * One track drawn into the picture with libass, in a style meant to be read over any picture: white
 * sans-serif about 7 % of the height, a black outline, lifted off the bottom edge, on the picture as
 * a player shows it. The video is re-encoded (H.264, VP9 for webm); the sound is copied.
 */
export function burnSubtitles(src: string, ext: string, track: SubtitleInput, out: string): string[] {
  const style = 'FontName=DejaVu Sans,FontSize=20,PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000,BorderStyle=1,Outline=2,Shadow=0,MarginV=18';
  const video = ext === 'webm' ? vp9(30) : h264(20);
  return ['-i', src, '-map', '0:v:0', '-map', '0:a?', '-vf', `${DISPLAY_EVEN},subtitles=filename=${filterValue(track.file)}:force_style=${filterValue(style)}`, ...video, '-c:a', 'copy', ...(ext === 'mp4' ? ['-movflags', '+faststart'] : []), '-y', out];
}

/** A value inside a filter graph's option list, quoted (libavfilter's escaping: a quote ends the quoting). */
function filterValue(v: string): string {
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "'\\\\''")}'`;
}
