// A collection's items as every source kind lists them (a feed, what yt-dlp lists as a playlist, a URL list).

export interface CollectionItem {
  url: string;
  /** The source's own identity of the item (a feed's guid, a playlist entry's id); the URL where it has none. */
  identity: string;
  title: string | null;
  /** ISO 8601, or null when the source does not date it. */
  publishedAt: string | null;
  /** Seconds, or null when the source does not say. */
  duration: number | null;
  thumbnail: string | null;
}

export interface CollectionListing {
  title: string | null;
  items: CollectionItem[];
  /** Set when the listing stopped at a limit before the source's end: what was left out and why. */
  truncated: string | null;
}

/** Why a source could not be listed, as a person reads it. */
export class CollectionError extends Error {
  constructor(
    readonly kind: 'rejected' | 'unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'CollectionError';
  }
}
