// Perceptual hashes with the definitions and hex layout of the Python `imagehash` library
// (average_hash, phash, dhash), computed over sharp's raw greyscale pixels.
import sharp from 'sharp';

export type HashSize = 8 | 16 | 32;

export interface ImageHashes {
  average_hash: string;
  perceptual_hash: string;
  difference_hash: string;
}

/**
 * The image as 8-bit greyscale ("L"), row-major. sharp decodes it to raw pixels; the grey value is
 * Pillow's `convert('L')` (ITU-R 601-2 luma, its integer arithmetic) so the hashes match imagehash's.
 */
export async function greyImage(input: Buffer | string): Promise<GreyImage> {
  const { data, info } = await sharp(input).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const { width, height, channels } = info;
  const out = new Uint8Array(width * height);
  if (channels <= 2) {
    for (let i = 0; i < out.length; i++) out[i] = data[i * channels]!;
  } else {
    for (let i = 0; i < out.length; i++) {
      const o = i * channels;
      out[i] = (data[o]! * 19595 + data[o + 1]! * 38470 + data[o + 2]! * 7471 + 0x8000) >>> 16;
    }
  }
  return { width, height, pixels: out };
}

export interface GreyImage {
  width: number;
  height: number;
  pixels: Uint8Array;
}

// Pillow's resampling (libImaging/Resample.c) for 8-bit images with the LANCZOS filter: separable,
// horizontal pass first, fixed-point coefficients with 22 fractional bits, 8-bit clip between passes.
const PRECISION_BITS = 32 - 8 - 2;
const LANCZOS_SUPPORT = 3;

function sinc(x: number): number {
  if (x === 0) return 1;
  const px = x * Math.PI;
  return Math.sin(px) / px;
}

function lanczos(x: number): number {
  return x >= -3 && x < 3 ? sinc(x) * sinc(x / 3) : 0;
}

interface Coeffs {
  ksize: number;
  bounds: Int32Array; // [xmin, count] per output pixel
  kk: Int32Array; // fixed-point weights, ksize per output pixel
}

function precomputeCoeffs(inSize: number, outSize: number): Coeffs {
  const scale = inSize / outSize;
  const filterscale = Math.max(scale, 1);
  const support = LANCZOS_SUPPORT * filterscale;
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kk = new Int32Array(outSize * ksize);
  const w = new Float64Array(ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    const ss = 1 / filterscale;
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0;
    for (let x = 0; x < xmax; x++) {
      w[x] = lanczos((x + xmin - center + 0.5) * ss);
      ww += w[x]!;
    }
    for (let x = 0; x < ksize; x++) {
      const v = x < xmax && ww !== 0 ? w[x]! / ww : 0;
      kk[xx * ksize + x] = v < 0 ? Math.trunc(-0.5 + v * (1 << PRECISION_BITS)) : Math.trunc(0.5 + v * (1 << PRECISION_BITS));
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = xmax;
  }
  return { ksize, bounds, kk };
}

function clip8(v: number): number {
  const s = Math.floor(v / 2 ** PRECISION_BITS);
  return s < 0 ? 0 : s > 255 ? 255 : s;
}

/** Pillow's `Image.resize((width, height), Image.LANCZOS)` of an "L" image. */
export function resizeLanczos(img: GreyImage, width: number, height: number): Uint8Array {
  if (img.width === width && img.height === height) return img.pixels.slice();
  const needH = width !== img.width;
  const needV = height !== img.height;
  const h = precomputeCoeffs(img.width, width);
  const v = precomputeCoeffs(img.height, height);
  let src = img.pixels;
  let srcW = img.width;
  let rowOffset = 0;
  if (needH) {
    const first = v.bounds[0]!;
    const last = v.bounds[height * 2 - 2]! + v.bounds[height * 2 - 1]!;
    const rows = needV ? last - first : img.height;
    rowOffset = needV ? first : 0;
    const tmp = new Uint8Array(width * rows);
    for (let y = 0; y < rows; y++) {
      const row = (y + rowOffset) * img.width;
      for (let xx = 0; xx < width; xx++) {
        const xmin = h.bounds[xx * 2]!;
        const n = h.bounds[xx * 2 + 1]!;
        let ss = 1 << (PRECISION_BITS - 1);
        for (let x = 0; x < n; x++) ss += img.pixels[row + xmin + x]! * h.kk[xx * h.ksize + x]!;
        tmp[y * width + xx] = clip8(ss);
      }
    }
    src = tmp;
    srcW = width;
  }
  if (!needV) return src;
  const out = new Uint8Array(width * height);
  for (let yy = 0; yy < height; yy++) {
    const ymin = v.bounds[yy * 2]! - rowOffset;
    const n = v.bounds[yy * 2 + 1]!;
    for (let x = 0; x < width; x++) {
      let ss = 1 << (PRECISION_BITS - 1);
      for (let y = 0; y < n; y++) ss += src[(ymin + y) * srcW + x]! * v.kk[yy * v.ksize + y]!;
      out[yy * width + x] = clip8(ss);
    }
  }
  return out;
}

/** imagehash's `str(hash)`: the bits row-major, most significant first, as zero-padded hex. */
export function bitsToHex(bits: ArrayLike<boolean>): string {
  let hex = '';
  const pad = (4 - (bits.length % 4)) % 4;
  let nibble = 0;
  let count = pad; // leading zero bits, as int(bit_string, 2) formatted to ceil(len/4) digits
  for (let i = 0; i < bits.length; i++) {
    nibble = (nibble << 1) | (bits[i] ? 1 : 0);
    if (++count === 4) {
      hex += nibble.toString(16);
      nibble = 0;
      count = 0;
    }
  }
  return hex;
}

/** Number of differing bits between two hex hashes of the same length. */
export function hammingDistance(a: string, b: string): number {
  if (a.length !== b.length) throw new Error('hashes of different sizes cannot be compared');
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = parseInt(a[i]!, 16) ^ parseInt(b[i]!, 16);
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}

/** average_hash: each pixel of the N×N grey image against their mean. */
export function averageHashOf(pixels: ArrayLike<number>): boolean[] {
  let sum = 0;
  for (let i = 0; i < pixels.length; i++) sum += pixels[i]!;
  const mean = sum / pixels.length;
  return Array.from(pixels, (p) => p > mean);
}

/** dhash: the (N+1)×N grey image, each pixel against its left neighbour (`pixels[:, 1:] > pixels[:, :-1]`). */
export function differenceHashOf(pixels: ArrayLike<number>, n: number): boolean[] {
  const bits: boolean[] = [];
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) bits.push(pixels[y * (n + 1) + x + 1]! > pixels[y * (n + 1) + x]!);
  }
  return bits;
}

/**
 * phash: 2-D DCT-II (scipy.fftpack.dct along axis 0, then axis 1) of the 4N×4N grey image, the
 * top-left N×N block of coefficients, each against the block's median.
 */
export function perceptualHashOf(pixels: ArrayLike<number>, n: number): boolean[] {
  const size = n * 4;
  const cos = new Float64Array(n * size); // only the lowest N frequencies are kept
  for (let k = 0; k < n; k++) for (let i = 0; i < size; i++) cos[k * size + i] = 2 * Math.cos((Math.PI * k * (2 * i + 1)) / (2 * size));
  // along axis 0 (down each column): cols[k][x] = Σ_y p[y][x]·c(k, y)
  const cols = new Float64Array(n * size);
  for (let k = 0; k < n; k++) {
    for (let x = 0; x < size; x++) {
      let acc = 0;
      for (let y = 0; y < size; y++) acc += pixels[y * size + x]! * cos[k * size + y]!;
      cols[k * size + x] = acc;
    }
  }
  // along axis 1 (across each row): d[k][l] = Σ_x cols[k][x]·c(l, x)
  const block = new Float64Array(n * n);
  for (let k = 0; k < n; k++) {
    for (let l = 0; l < n; l++) {
      let acc = 0;
      for (let x = 0; x < size; x++) acc += cols[k * size + x]! * cos[l * size + x]!;
      block[k * n + l] = acc;
    }
  }
  const sorted = Array.from(block).sort((a, b) => a - b);
  const mid = sorted.length / 2; // N² is even: numpy.median averages the two middle values
  const median = (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Array.from(block, (v) => v > median);
}

/** The three hashes of one image (a file path or encoded image bytes). */
export async function imageHashes(input: Buffer | string, hashSize: HashSize): Promise<ImageHashes> {
  const n = hashSize;
  const grey = await greyImage(input);
  const a = resizeLanczos(grey, n, n);
  const p = resizeLanczos(grey, 4 * n, 4 * n);
  const d = resizeLanczos(grey, n + 1, n);
  return {
    average_hash: bitsToHex(averageHashOf(a)),
    perceptual_hash: bitsToHex(perceptualHashOf(p, n)),
    difference_hash: bitsToHex(differenceHashOf(d, n)),
  };
}
