// A mosaic taken by seeks comes back as one small PNG per tile (see mosaicTileRuns); this lays them
// out on one sheet in-process, as ffmpeg's tile filter would, and writes the sheet as a JPEG.
import sharp from 'sharp';
import type { MosaicTileRuns } from '../../engines/ffmpeg/recipes/preview';

/** The tiles in the sheet's order, a missing one left black; no sheet when not one tile has a frame. */
export async function layOutSheet(tiles: string[], layout: MosaicTileRuns['sheet'], out: string): Promise<void> {
  const read = await Promise.all(tiles.map(async (file, index) => ({ file, index, image: await sharp(file).metadata().catch(() => null) })));
  const found = read.filter((t) => t.image?.width && t.image.height);
  if (!found.length) return;
  const { columns, rows, tileWidth } = layout;
  // every tile was scaled to the same width with its aspect ratio kept: the first one's height is theirs
  const tileHeight = found[0]!.image!.height!;
  const parts = await Promise.all(
    found.map(async (t) => ({
      input: t.image!.width === tileWidth && t.image!.height === tileHeight ? t.file : await sharp(t.file).resize(tileWidth, tileHeight, { fit: 'fill' }).png().toBuffer(),
      left: (t.index % columns) * tileWidth,
      top: Math.floor(t.index / columns) * tileHeight,
    })),
  );
  const sheet = await sharp({ create: { width: columns * tileWidth, height: rows * tileHeight, channels: 3, background: '#000000' } })
    .composite(parts)
    .raw()
    .toBuffer({ resolveWithObject: true });
  await sharp(sheet.data, { raw: sheet.info }).resize({ width: layout.width, kernel: 'lanczos3' }).jpeg({ quality: 92 }).toFile(out);
}
