/** The PII scanner's public surface: detection (`scanText`) and masking (`PiiMasker`). */
export { PII_CATEGORIES, type PiiCategory, type PiiFinding } from './types.ts';
export { resolveOverlaps, scanText } from './scan.ts';
export { PiiMasker, type MaskResult } from './masker.ts';
