// The parts of webvtt-parser (a WebVTT parser that follows the specification) the tests use.
declare module 'webvtt-parser' {
  export interface WebVTTCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
  }
  export interface WebVTTParseError {
    message: string;
    line: number;
  }
  export class WebVTTParser {
    parse(input: string, mode?: 'metadata' | 'chapters'): { cues: WebVTTCue[]; errors: WebVTTParseError[] };
  }
}
