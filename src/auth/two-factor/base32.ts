import type { Base32Plugin } from '@otplib/core';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * RFC 4648 base32 (no padding on output; padding, spaces and case ignored on input) as an otplib Base32Plugin.
 * otplib's own base32 plugin wraps @scure/base, an ESM-only package the CommonJS build and Jest cannot
 * load; the plugin interface is otplib's extension point for exactly this.
 */
export const base32: Base32Plugin = {
  name: 'rfc4648',
  encode(data: Uint8Array): string {
    let output = '';
    let buffer = 0;
    let bits = 0;
    for (const byte of data) {
      buffer = (buffer << 8) | byte;
      bits += 8;
      while (bits >= 5) {
        output += ALPHABET[(buffer >>> (bits - 5)) & 31];
        bits -= 5;
      }
    }
    if (bits > 0) output += ALPHABET[(buffer << (5 - bits)) & 31];
    return output;
  },
  decode(text: string): Uint8Array {
    const clean = text.toUpperCase().replace(/[\s=]+/g, '');
    const bytes: number[] = [];
    let buffer = 0;
    let bits = 0;
    for (const char of clean) {
      const value = ALPHABET.indexOf(char);
      if (value === -1)
        throw new Error(`not a base32 character: ${JSON.stringify(char)}`);
      buffer = ((buffer << 5) | value) & 0xffff;
      bits += 5;
      if (bits >= 8) {
        bytes.push((buffer >>> (bits - 8)) & 0xff);
        bits -= 8;
      }
    }
    return Uint8Array.from(bytes);
  },
};
